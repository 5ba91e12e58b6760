"""``swarm batch`` (one team over a task dataset), and ``swarm test`` on an executor
(``--executor local|ray[:ADDRESS]``, ``--parallel``, ``--runs-dir``)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from swarm._visible import visible
from swarm.batch import (
    BatchResult,
    BatchSummary,
    executor_from_spec,
    load_script_model,
    run_batch,
    run_suite,
)
from swarm.batch.job import JobReport
from swarm.batch.suite import SuiteReport
from swarm.cli.exits import FAILED, OK, Stopped, run_until_stopped
from swarm.errors import ConfigError
from swarm.scenario import Scenario, load_scenario
from swarm.scenario.spec import Script

__all__ = ["cmd_batch", "test_on_executor"]


def _model(spec: str) -> str | Script:
    if spec.startswith("script:"):
        return load_script_model(spec.removeprefix("script:"))
    return spec


def cmd_batch(args: argparse.Namespace) -> int:
    """Run the batch with a progress bar, then print the summary."""
    executor = executor_from_spec(args.executor, parallel=args.parallel, env_vars=args.env_var)
    model = _model(args.model)
    console = Console(stderr=True)
    progress = Progress(
        TextColumn("batch"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[line]}"),
        TimeElapsedColumn(),
        console=console,
        disable=not console.is_terminal,
    )
    bar = progress.add_task("batch", total=None, line="")

    def on_result(result: BatchResult, summary: BatchSummary) -> None:
        line = f"failed {summary.failed}  remaining {summary.remaining}  tokens {summary.tokens:,}"
        progress.update(
            bar, total=summary.total, completed=summary.skipped + summary.done, line=line
        )

    async def go() -> BatchSummary:
        with progress:
            return await run_batch(
                args.tasks,
                team=args.team,
                entry=args.entry,
                results=args.output,
                model=model,
                policy=args.policy,
                executor=executor,
                resume=args.resume,
                runs_dir=args.runs_dir,
                shared_runs_dir=args.runs_dir is not None,
                on_result=on_result,
            )

    try:
        summary = run_until_stopped(go)
    except Stopped as stop:
        again = " ".join(shlex.quote(a) for a in sys.argv[1:] if a != "--resume")
        sys.stderr.write(
            f"\n{stop.how}: the tasks still running were stopped; {args.output} holds every"
            f" task that ended. Continue with:\n  swarm {again} --resume\n"
        )
        return stop.code
    ok = summary.done - summary.failed
    before = f", {summary.failed_before} of them failed" if summary.failed_before else ""
    print(
        f"{summary.total} tasks: {ok} ok, {summary.failed} failed, {summary.skipped} skipped"
        f" (already in {args.output}{before}); {summary.tokens:,} tokens;"
        f" {summary.duration:.1f}s"
    )
    for result in summary.results:
        if not result.ok:
            why = result.error or "; ".join(result.problems) or f"ended {result.stop_reason}"
            print(visible(f"  {result.id}: {why.splitlines()[0] if why else ''}"))
    if summary.failed_before:
        print(f"  {summary.failed_before} failed in an earlier run: see {args.output}")
    return OK if summary.failed == 0 and summary.failed_before == 0 else FAILED


def test_on_executor(args: argparse.Namespace, files: list[Path]) -> int:
    """``swarm test`` with ``--executor``/``--parallel``/``--runs-dir``: the same report as
    a local run, in the same order, every record on this machine."""
    spec = args.executor or "local"
    parallel = args.parallel if args.parallel is not None else (1 if spec == "local" else None)
    executor = executor_from_spec(spec, parallel=parallel, env_vars=args.env_var)
    lines: list[list[str] | None] = []
    runnable: list[tuple[int, Scenario]] = []
    for path in files:
        try:
            scenario = load_scenario(path)
        except ConfigError as exc:
            problems = [f"    {invalid}" for invalid in exc.problems]
            lines.append([f"{path} ERROR  (invalid scenario file)", *problems])
            continue
        if scenario.expect is None:
            label = f"{scenario.path}::{scenario.name}"
            lines.append([f"{label} ERROR  (no 'expect' section: nothing to check)"])
            continue
        runnable.append((len(lines), scenario))
        lines.append(None)
    printed = 0

    def flush() -> None:
        nonlocal printed
        while printed < len(lines) and lines[printed] is not None:
            print("\n".join(lines[printed] or []), flush=True)
            printed += 1

    def on_report(index: int, report: SuiteReport) -> None:
        lines[runnable[index][0]] = _verdict(*report)
        flush()

    flush()

    async def go() -> list[SuiteReport]:
        return await run_suite(
            [scenario for _, scenario in runnable],
            executor=executor,
            model=args.model,
            runs_dir=args.runs_dir,
            shared_runs_dir=args.runs_dir is not None,
            keep_workspaces=True,
            on_report=on_report,
        )

    try:
        run_until_stopped(go)
    except Stopped as stop:
        sys.stderr.write(f"\n{stop.how}\n")
        return stop.code
    failed = sum(1 for entry in lines if entry and " PASSED (" not in entry[0])
    passed = len(lines) - failed
    print(f"{passed} passed, {failed} failed")
    return OK if failed == 0 else FAILED


def _verdict(scenario: Scenario, report: JobReport, record: Path | None) -> list[str]:
    label = f"{scenario.path}::{scenario.name}"
    if report.error is not None:
        return [visible(f"{label} ERROR  {report.error}")]
    took = f"({report.duration:.2f}s)"
    if report.passed:
        return [f"{label} PASSED {took}"]
    ended = (report.summary or {}).get("stop_reason")
    problems = report.problems or [f"stop_reason: the run ended with {ended}"]
    kept = report.workspace is not None and Path(report.workspace).is_dir()  # on this node
    return [
        f"{label} FAILED {took}",
        *(f"    {visible(problem)}" for problem in problems),  # they quote the model
        f"    run record: {record}",
        *([f"    workspace:  {report.workspace}"] if kept else []),
    ]
