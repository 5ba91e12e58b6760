"""``run_batch``: one team over many tasks, one result line per task, written as tasks end.

The results file is JSON lines, each written whole with one ``write`` as its task ends, so
a batch stopped at any point (Ctrl-C, a kill) leaves a file of complete lines; a line cut
short by a crash mid-write is dropped when the batch is resumed. ``resume=True`` skips the
tasks whose id is already in the file and appends the rest.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from swarm.batch.executors import Executor, LocalExecutor
from swarm.batch.job import Job, JobReport, receive_record
from swarm.batch.tasks import BatchTask, load_tasks
from swarm.errors import ConfigError
from swarm.guards.policy import load_policy
from swarm.models.spec import provider_prefixes
from swarm.record.record import default_runs_dir, new_run_id
from swarm.scenario.policies import check_policies
from swarm.scenario.spec import Limits, Scenario, Script
from swarm.team import Team

__all__ = ["BatchResult", "BatchSummary", "run_batch"]


@dataclass(frozen=True, slots=True)
class BatchResult:
    """One task's line in the results file."""

    id: str
    ok: bool
    stop_reason: str | None
    final_text: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    duration_seconds: float
    expectations_passed: bool | None
    problems: tuple[str, ...]
    record: str | None
    error: str | None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def _usage(self) -> dict[str, int]:
        usage = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}
        if self.cache_read_tokens or self.cache_write_tokens:  # the cache parts, when any
            usage["cache_read_tokens"] = self.cache_read_tokens
            usage["cache_write_tokens"] = self.cache_write_tokens
        return usage

    def to_dict(self) -> dict[str, Any]:
        """The JSON object written as the task's line."""
        return {
            "id": self.id,
            "ok": self.ok,
            "stop_reason": self.stop_reason,
            "final_text": self.final_text,
            "usage": self._usage(),
            "cost_usd": self.cost_usd,
            "duration_seconds": round(self.duration_seconds, 3),
            "expectations_passed": self.expectations_passed,
            "problems": list(self.problems),
            "record": self.record,
            "error": self.error,
        }


@dataclass(slots=True)
class BatchSummary:
    """What a batch did: tasks run now, skipped (already in the results), failed, tokens."""

    total: int
    skipped: int = 0
    done: int = 0
    failed: int = 0
    failed_before: int = 0
    """Of the skipped tasks, those whose result (from an earlier run) is a failure."""
    tokens: int = 0
    duration: float = 0.0
    results: list[BatchResult] = field(default_factory=list)

    @property
    def remaining(self) -> int:
        """Tasks neither skipped nor finished yet."""
        return self.total - self.skipped - self.done


def _result(task: BatchTask, report: JobReport, record: Path | None) -> BatchResult:
    summary = report.summary or {}
    usage = summary.get("usage") or {}
    return BatchResult(
        id=task.id,
        ok=report.passed,
        stop_reason=summary.get("stop_reason"),
        final_text=str(summary.get("final_text") or ""),
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        cost_usd=summary.get("cost_usd"),
        duration_seconds=float(summary.get("duration_seconds") or report.duration),
        expectations_passed=None if report.problems is None else not report.problems,
        problems=tuple(report.problems or ()),
        record=str(record) if record is not None else None,
        error=report.error,
        cache_read_tokens=int(usage.get("cache_read_tokens") or 0),
        cache_write_tokens=int(usage.get("cache_write_tokens") or 0),
    )


def finished_ids(results: Path) -> set[str]:
    """The ids already in a results file, dropping a last line a crash cut short. Raises
    ``ConfigError`` naming the line when a complete line is not a result."""
    try:
        raw = results.read_bytes()
    except FileNotFoundError:
        return set()
    except OSError as exc:
        raise ConfigError(f"cannot read the results: {exc.strerror}", path=results) from None
    if raw and not raw.endswith(b"\n"):  # cut short mid-write: that task runs again
        cut = raw.rfind(b"\n") + 1
        with open(results, "r+b") as file:
            file.truncate(cut)
        raw = raw[:cut]
    ids: set[str] = set()
    for number, line in enumerate(raw.decode("utf-8", "replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            ids.add(str(data["id"]))
        except (ValueError, KeyError, TypeError):
            raise ConfigError(
                "not a result line (is this the results file of a batch?)",
                path=results,
                line=number,
            ) from None
    return ids


def failed_ids(results: Path) -> set[str]:
    """The ids of the failed results in a results file (read after ``finished_ids``)."""
    failed: set[str] = set()
    try:
        lines = results.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return failed
    for line in lines:
        with contextlib.suppress(ValueError, KeyError, TypeError):
            data = json.loads(line)
            if data.get("ok") is False:
                failed.add(str(data["id"]))
    return failed


async def run_batch(
    tasks: str | Path | Sequence[BatchTask],
    *,
    team: str | Path,
    results: str | Path,
    model: str | Script | None = None,
    entry: str | None = None,
    policy: str | None = None,
    limits: Limits | None = None,
    executor: Executor | None = None,
    resume: bool = False,
    runs_dir: Path | None = None,
    shared_runs_dir: bool = False,
    on_result: Callable[[BatchResult, BatchSummary], None] | None = None,
) -> BatchSummary:
    """Run ``team`` (from ``entry``) on every task and append one line per task to
    ``results`` as each ends; returns the summary.

    ``model`` is a spec (``openai:gpt-4.1-mini``) or a ``Script`` every task plays from the
    start. ``executor`` defaults to ``LocalExecutor()``. Records go to ``runs_dir`` (default
    the user's runs directory): written there by the workers when ``shared_runs_dir`` says
    every node sees it, else shipped back as bytes. Raises ``ConfigError`` for a bad task
    file, a missing team, or a results file that exists when ``resume`` is false. A task
    that fails is a result with ``ok: false`` and its ``error``; the batch goes on.
    Cancellation stops the tasks still running; their lines are not written.
    """
    executor = executor or LocalExecutor()
    records = (runs_dir or default_runs_dir()).absolute()
    shared_runs_dir = shared_runs_dir or executor.shares_files
    out = Path(results)
    base = Scenario(
        name="",
        task="",
        team=Path(team),
        entry=entry,
        policy=policy,
        limits=limits or Limits(),
        model=model if isinstance(model, Script) else None,
    )
    spec = model if isinstance(model, str) else None
    todo, jobs, summary = _plan(
        tasks, out, resume, base, spec, records if shared_runs_dir else None
    )
    started = time.perf_counter()
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(out, flags, 0o600)  # final answers may hold what the agents read
    try:

        def on_report(index: int, report: JobReport) -> None:
            try:
                shipped = receive_record(report, jobs[index], records)
            except ValueError as exc:
                shipped, report = None, replace(report, error=str(exc))
            record = shipped or (records / jobs[index].run_id if shared_runs_dir else None)
            if record is not None and not record.exists():
                record = None
            result = _result(todo[index], report, record)
            line = json.dumps(result.to_dict(), ensure_ascii=False) + "\n"
            os.write(fd, line.encode("utf-8"))
            summary.done += 1
            summary.failed += not result.ok
            summary.tokens += result.input_tokens + result.output_tokens
            summary.results.append(result)
            if on_result is not None:
                on_result(result, summary)

        await executor.run(jobs, on_report)
    finally:
        os.close(fd)
        summary.duration = time.perf_counter() - started
    return summary


def _plan(
    tasks: str | Path | Sequence[BatchTask],
    out: Path,
    resume: bool,
    base: Scenario,
    model: str | None,
    runs_dir: Path | None,
) -> tuple[list[BatchTask], list[Job], BatchSummary]:
    """The tasks still to run, a job for each (``base`` with the task's text, files and
    expectations), and the summary so far."""
    team = base.team
    listed = load_tasks(tasks) if isinstance(tasks, str | Path) else list(tasks)
    if not team.is_dir():
        raise ConfigError("the team must be a directory of role files", path=team)
    # what every task shares is checked here, once, rather than failing every task
    loaded = Team.load(team, entry=base.entry)
    load_policy(base.policy or "default")
    check_policies(base, loaded)  # a rule that can never match fails the batch, not each task
    if model is not None and not any(
        model == prefix or model.startswith(prefix + ":") for prefix in provider_prefixes()
    ):
        raise ConfigError(
            f"unknown model provider in {model!r}: expected <provider>:<model> with provider"
            f" one of {', '.join(provider_prefixes())}, or script:FILE.yaml",
            field="model",
        )
    if not out.parent.is_dir() or out.is_dir():
        raise ConfigError("cannot write the results here: no such directory", path=out)
    if out.exists() and out.stat().st_size and not resume:
        raise ConfigError(
            "the results file exists: pass --resume to continue that batch, or choose another file",
            path=out,
        )
    done = finished_ids(out) if resume else set()
    todo = [task for task in listed if task.id not in done]
    policy = base.policy
    if policy is not None and Path(policy).is_file():
        policy = str(Path(policy).absolute())
    jobs = [
        Job.portable(
            replace(
                base,
                name=task.id,
                task=task.task,
                policy=policy,
                files=dict(task.files),
                expect=task.expect,
            ),
            new_run_id(),
            model=model,
            runs_dir=runs_dir,
        )
        for task in todo
    ]
    failed_before = len({t.id for t in listed} & failed_ids(out)) if done else 0
    summary = BatchSummary(
        total=len(listed), skipped=len(listed) - len(todo), failed_before=failed_before
    )
    return todo, jobs, summary
