"""Where a batch's jobs run: in this process (``LocalExecutor``) or on a Ray cluster
(``RayExecutor``). Both run ``run_job`` (or the ``work`` given) on each job and hand every
report to ``on_report`` as it arrives, in the order jobs finish; neither raises for one
job's failure (a raised exception or a dead worker is that job's failed report).

``executor_from_spec("ray:auto")`` builds one from the command line's ``--executor``.
Ray is imported only when a ``RayExecutor`` runs, so ``import swarm`` never loads it.
"""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.to_thread

from swarm._dist import install_hint
from swarm.audit.redact import secret_key
from swarm.batch.job import Job, JobReport, failed_report, run_job
from swarm.errors import ConfigError

__all__ = ["Executor", "LocalExecutor", "RayExecutor", "Work", "executor_from_spec"]

Work = Callable[[Job], Awaitable[JobReport]]
"""A coroutine function that runs one job and reports (``run_job`` by default)."""

_NO_RAY = f"--executor ray needs Ray on this machine: {install_hint('ray')}"

OnReport = Callable[[int, JobReport], None]


class Executor(Protocol):
    """Runs jobs and reports each one (its index in ``jobs``, its report) as it ends.
    ``shares_files`` says the jobs see this process's files (a record can be written in
    place rather than shipped back)."""

    shares_files: bool

    async def run(self, jobs: Sequence[Job], on_report: OnReport) -> None:
        """Run every job; cancellation stops the ones still going and waits for them."""
        ...


class LocalExecutor:
    """Runs jobs in this process, at most ``parallel`` at a time (anyio tasks)."""

    shares_files = True

    def __init__(self, parallel: int = 4, *, work: Work = run_job) -> None:
        if parallel < 1:
            raise ConfigError("--parallel must be at least 1", field="parallel")
        self.parallel = parallel
        self.work = work

    async def run(self, jobs: Sequence[Job], on_report: OnReport) -> None:
        """Run the jobs concurrently, ``parallel`` at a time."""
        limit = anyio.CapacityLimiter(self.parallel)

        async def one(index: int, job: Job) -> None:
            async with limit:
                try:
                    report = await self.work(job)
                except Exception as exc:
                    report = failed_report(job, f"{type(exc).__name__}: {exc}")
            on_report(index, report)

        async with anyio.create_task_group() as group:
            for index, job in enumerate(jobs):
                group.start_soon(one, index, job)


def _work_in_worker(work: Work, job: Job) -> JobReport:
    """The Ray task: run ``work(job)`` in a new event loop on the worker."""
    return anyio.run(work, job)


class RayExecutor:
    """Runs each job as a Ray task, at most ``parallel`` in flight (default: two per CPU of
    the cluster).

    ``address`` is an existing cluster (``auto``, ``ray://host:port``); without one a local
    Ray with this machine's cores is started and stopped at the end (a Ray already started
    in this process is used as it is). ``env_vars`` names variables of this process passed
    to the tasks through Ray's runtime environment, and nothing else of the environment is.
    A task is never retried: a worker that dies is that job's failed report.
    ``cpus_per_task`` is what each task asks Ray for (runs are I/O-bound: a fraction lets a
    node run several).
    """

    shares_files = False

    def __init__(
        self,
        address: str | None = None,
        *,
        parallel: int | None = None,
        env_vars: Sequence[str] = (),
        cpus_per_task: float = 1.0,
        work: Work = run_job,
    ) -> None:
        if parallel is not None and parallel < 1:
            raise ConfigError("--parallel must be at least 1", field="parallel")
        if importlib.util.find_spec("ray") is None:  # said now, before anything is written
            raise ConfigError(_NO_RAY, field="executor")
        missing = [name for name in env_vars if name not in os.environ]
        if missing:
            raise ConfigError(
                f"--env-var {missing[0]}: no such variable in this environment", field="env-var"
            )
        self.address = address
        self.parallel = parallel
        self.env = {name: os.environ[name] for name in env_vars}
        self.cpus_per_task = cpus_per_task
        self.work = work

    async def run(self, jobs: Sequence[Job], on_report: OnReport) -> None:
        """Submit the jobs, ``parallel`` at a time, and report each as it ends."""
        ray = _import_ray()
        started = not ray.is_initialized()
        if started:
            environment = dict(os.environ)
            self._init(ray)  # in the main thread: Ray sets its signal handlers there
            ours = _set_since(environment)
            # tasks on this machine put their temporary directories in one place, removed
            # at the end even when Ctrl-C cut them short (elsewhere it does not exist)
            scratch: Path | None = Path(tempfile.mkdtemp(prefix="swarm-batch-"))
            jobs = [replace(job, scratch=scratch) for job in jobs]
        else:
            scratch = None
        try:
            await self._run(ray, jobs, on_report)
        finally:
            if started:
                ray.shutdown()
                _put_back(environment, ours)
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)

    def _init(self, ray: Any) -> None:
        """Start a local Ray, or join ``address``. A local Ray's processes inherit this
        process's environment, so the variables named like secrets (provider keys,
        tokens, passwords; not Ray's own) are hidden from it while it starts: they reach
        tasks only through ``env_vars``."""
        import logging

        hidden = {
            name: os.environ.pop(name)
            for name in list(os.environ)
            # Ray's own (RAY_AUTH_TOKEN) is how this process proves itself to a cluster
            if self.address is None and secret_key(name) and not name.startswith("RAY_")
        }
        try:
            ray.init(
                address=self.address,
                include_dashboard=False,
                logging_level=logging.WARNING,
                log_to_driver=False,
                configure_logging=True,
            )
        finally:
            os.environ.update(hidden)

    async def _run(self, ray: Any, jobs: Sequence[Job], on_report: OnReport) -> None:
        options: dict[str, Any] = {"num_cpus": self.cpus_per_task, "max_retries": 0}
        if self.env:
            options["runtime_env"] = {"env_vars": dict(self.env)}
        task = ray.remote(_work_in_worker).options(**options)
        work_ref = ray.put(self.work)
        limit = self.parallel or max(2, 2 * math.floor(ray.cluster_resources().get("CPU", 1)))
        pending: dict[Any, int] = {}
        waiting = iter(enumerate(jobs))
        try:
            while True:
                while len(pending) < limit:
                    item = next(waiting, None)
                    if item is None:
                        break
                    pending[task.remote(work_ref, item[1])] = item[0]
                if not pending:
                    return
                ready = await anyio.to_thread.run_sync(
                    _wait, ray, list(pending), abandon_on_cancel=True
                )
                for ref in ready:
                    index = pending.pop(ref)
                    on_report(index, await anyio.to_thread.run_sync(_result, ray, ref, jobs[index]))
        finally:
            if pending:  # Ctrl-C: the rest of the batch is cancelled, and cleans up
                _cancel(ray, list(pending))


def _set_since(before: dict[str, str]) -> dict[str, str]:
    """The variables of this process's environment set or changed since ``before``:
    what ``ray.init`` set (``PYTHONBREAKPOINT`` to Ray's debugger, which would otherwise
    outlive the Ray it served, and make the next ``python`` this process starts differ)."""
    return {k: v for k, v in os.environ.items() if before.get(k) != v}


def _put_back(before: dict[str, str], set_by_ray: dict[str, str]) -> None:
    """Undo what Ray set in the environment, where nothing has changed it since."""
    for name, value in set_by_ray.items():
        if os.environ.get(name) != value:
            continue
        if name in before:
            os.environ[name] = before[name]
        else:
            del os.environ[name]


def _cancel(ray: Any, refs: list[Any]) -> None:
    """Cancel ``refs`` (a ``KeyboardInterrupt`` in each task, so its workspace and temporary
    record are removed) and wait up to ten seconds for them to end."""
    for ref in refs:
        try:
            ray.cancel(ref)
        except Exception:  # already finished or gone
            continue
    try:
        ray.wait(refs, num_returns=len(refs), timeout=10)
    except Exception:  # the cluster is going away: nothing more to do
        return


def _wait(ray: Any, refs: list[Any]) -> list[Any]:
    """The refs that are done, waiting at most half a second (so Ctrl-C is seen)."""
    ready, _ = ray.wait(refs, num_returns=1, timeout=0.5)
    return list(ready)


def _result(ray: Any, ref: Any, job: Job) -> JobReport:
    try:
        report: JobReport = ray.get(ref)
    except ray.exceptions.RayTaskError as exc:  # the task raised
        cause = exc.cause if getattr(exc, "cause", None) is not None else exc
        return failed_report(job, f"{type(cause).__name__}: {cause}")
    except ray.exceptions.RayError as exc:  # the worker died, the node went away, ...
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return failed_report(job, f"{type(exc).__name__}: {first}")
    return report


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(_NO_RAY, field="executor") from None
    return ray


def executor_from_spec(
    spec: str, *, parallel: int | None = None, env_vars: Sequence[str] = ()
) -> LocalExecutor | RayExecutor:
    """``local`` or ``ray``/``ray:ADDRESS`` (``ray:auto``, ``ray:ray://host:10001``).
    Raises ``ConfigError`` for anything else."""
    if spec == "local":
        if env_vars:
            raise ConfigError("--env-var is for --executor ray (a local run sees the environment)")
        return LocalExecutor(4 if parallel is None else parallel)
    if spec == "ray" or spec.startswith("ray:"):
        address = spec[4:] or None
        return RayExecutor(address, parallel=parallel, env_vars=env_vars)
    raise ConfigError(
        f"unknown executor {spec!r}: give local, ray, or ray:ADDRESS (e.g. ray:auto)",
        field="executor",
    )
