"""``run_suite``: scenarios (a test suite) on an executor, reports in the scenarios' order,
every record on this machine."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from swarm.batch.executors import Executor, LocalExecutor
from swarm.batch.job import Job, JobReport, receive_record
from swarm.record.record import default_runs_dir, new_run_id
from swarm.scenario.spec import Scenario

__all__ = ["SuiteReport", "run_suite"]

SuiteReport = tuple[Scenario, JobReport, Path | None]
"""A scenario, its job's report, and its record's directory on this machine."""


async def run_suite(
    scenarios: Sequence[Scenario],
    *,
    executor: Executor | None = None,
    model: str | None = None,
    runs_dir: Path | None = None,
    shared_runs_dir: bool = False,
    keep_workspaces: bool = False,
    on_report: Callable[[int, SuiteReport], None] | None = None,
) -> list[SuiteReport]:
    """Run every scenario as a job (``executor`` defaults to ``LocalExecutor(1)``), each in
    its own fresh workspace, and return the reports in the order of ``scenarios``.

    A scenario's ``runs_dir``, else ``runs_dir``, else the user's runs directory receives
    its record: written there by the worker when ``shared_runs_dir`` (or the executor runs
    here), else shipped back. ``on_report(index, report)`` is called as each one ends.
    ``keep_workspaces`` keeps the workspaces of failing runs where they ran."""
    executor = executor or LocalExecutor(1)
    shared = shared_runs_dir or executor.shares_files
    places = [
        (scenario.runs_dir or runs_dir or default_runs_dir()).absolute() for scenario in scenarios
    ]
    jobs = [
        Job.portable(
            scenario,
            new_run_id(),
            model=model,
            runs_dir=place if shared else None,
            keep_workspace=keep_workspaces,
        )
        for scenario, place in zip(scenarios, places, strict=True)
    ]
    reports: dict[int, SuiteReport] = {}

    def arrived(index: int, report: JobReport) -> None:
        try:
            record = receive_record(report, jobs[index], places[index])
        except ValueError as exc:
            record, report = None, replace(report, error=str(exc))
        if record is None and shared and (places[index] / jobs[index].run_id).exists():
            record = places[index] / jobs[index].run_id
        reports[index] = (scenarios[index], report, record)
        if on_report is not None:
            on_report(index, reports[index])

    await executor.run(jobs, arrived)
    return [reports[index] for index in range(len(scenarios))]
