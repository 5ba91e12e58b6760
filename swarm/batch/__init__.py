"""Batches: many runs at once, in this process or on a Ray cluster.

``run_batch`` runs one team over a task dataset (JSON lines) and writes one result line per
task as it ends; ``run_suite`` runs scenarios (``swarm test``) and returns their reports in
order. Both take an ``Executor``: ``LocalExecutor`` (this process, a concurrency limit) or
``RayExecutor`` (one Ray task per run; needs the ``ray`` extra). Jobs carry specs and paths,
never live objects; records come back to this machine as files.
"""

from swarm._lazy import lazy_exports as _lazy_exports
from swarm.batch.batch import (
    BatchResult as BatchResult,
    BatchSummary as BatchSummary,
    run_batch as run_batch,
)
from swarm.batch.executors import (
    Executor as Executor,
    LocalExecutor as LocalExecutor,
    RayExecutor as RayExecutor,
    executor_from_spec as executor_from_spec,
)
from swarm.batch.job import (
    Job as Job,
    JobReport as JobReport,
    receive_record as receive_record,
    run_job as run_job,
)
from swarm.batch.suite import SuiteReport as SuiteReport, run_suite as run_suite
from swarm.batch.tasks import (
    BatchTask as BatchTask,
    load_script_model as load_script_model,
    load_tasks as load_tasks,
)

__getattr__, __dir__, __all__ = _lazy_exports(__name__, {})
