"""Batches: many runs at once, in this process or on a Ray cluster.

``run_batch`` runs one team over a task dataset (JSON lines) and writes one result line per
task as it ends; ``run_suite`` runs scenarios (``swarm test``) and returns their reports in
order. Both take an ``Executor``: ``LocalExecutor`` (this process, a concurrency limit) or
``RayExecutor`` (one Ray task per run; needs the ``ray`` extra). Jobs carry specs and paths,
never live objects; records come back to this machine as files.
"""

from swarm.batch.batch import BatchResult, BatchSummary, run_batch
from swarm.batch.executors import Executor, LocalExecutor, RayExecutor, executor_from_spec
from swarm.batch.job import Job, JobReport, receive_record, run_job
from swarm.batch.suite import SuiteReport, run_suite
from swarm.batch.tasks import BatchTask, load_script_model, load_tasks

__all__ = [
    "BatchResult",
    "BatchSummary",
    "BatchTask",
    "Executor",
    "Job",
    "JobReport",
    "LocalExecutor",
    "RayExecutor",
    "SuiteReport",
    "executor_from_spec",
    "load_script_model",
    "load_tasks",
    "receive_record",
    "run_batch",
    "run_job",
    "run_suite",
]
