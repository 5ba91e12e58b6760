"""One unit of a batch: a scenario run as a job, anywhere, with what it did coming back.

A ``Job`` is plain data (a scenario whose paths are absolute, a model spec, a run id, and
where the record goes), so it can cross a process or machine boundary; ``run_job`` runs it
in a fresh workspace, checks the scenario's expectations there (they may look at files), and
returns a ``JobReport``. When the job names no shared ``runs_dir`` the record is written to a
private temporary directory and comes back as bytes (a tar archive) for ``receive_record``.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import tarfile
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from swarm.errors import ConfigError
from swarm.record.record import RunRecord
from swarm.scenario.expect import check_expectations
from swarm.scenario.runner import run_scenario
from swarm.scenario.spec import Scenario

__all__ = ["Job", "JobReport", "failed_report", "receive_record", "run_job"]


@dataclass(frozen=True, slots=True)
class Job:
    """A scenario to run: ``model`` overrides the scenario's (a spec, never a live
    transport); the record goes to ``runs_dir/run_id`` when ``runs_dir`` is given (a path
    every node shares), else it is shipped back in the report. ``keep_workspace`` keeps the
    workspace of a run whose expectations fail. ``scratch``, when it exists where the job
    runs, holds the job's temporary directories (so whoever made it can remove what a
    killed job left)."""

    scenario: Scenario
    run_id: str
    model: str | None = None
    runs_dir: Path | None = None
    keep_workspace: bool = False
    scratch: Path | None = None

    @classmethod
    def portable(cls, scenario: Scenario, run_id: str, **options: Any) -> Job:
        """A job whose scenario holds absolute paths and no parsed document (which ties
        it to the driver's files and memory)."""
        portable = replace(
            scenario,
            team=scenario.team.absolute(),
            path=scenario.path.absolute() if scenario.path else None,
            runs_dir=None,
            workspace=None,
            document=None,
        )
        return cls(portable, run_id, **options)


@dataclass(frozen=True, slots=True)
class JobReport:
    """What a job did. ``summary`` is the run's ``summary.json`` (``None`` when it never
    ran); ``problems`` the unmet expectations (``None`` when the scenario has none);
    ``error`` why the job failed (a bad file, a raised exception, a dead worker), with
    ``bad_input`` true for a user's mistake; ``record`` the record's archive when shipped."""

    run_id: str
    summary: dict[str, Any] | None = None
    problems: list[str] | None = None
    error: str | None = None
    bad_input: bool = False
    record: bytes | None = None
    workspace: str | None = None
    duration: float = 0.0

    @property
    def passed(self) -> bool:
        """The run ended with ``end_turn`` (or as its expectations say) and met them."""
        if self.error is not None or self.summary is None:
            return False
        if self.problems is not None:
            return not self.problems
        return bool(self.summary.get("stop_reason") == "end_turn")


def failed_report(job: Job, reason: str) -> JobReport:
    """The report of a job that could not report itself (its worker died, or it raised)."""
    return JobReport(job.run_id, error=reason)


async def run_job(job: Job) -> JobReport:
    """Run ``job`` in a new temporary workspace and report. Never raises for the run's
    own failures (they are the report's ``error``); cancellation propagates."""
    import time

    name = re.sub(r"[^A-Za-z0-9_.-]", "_", job.scenario.name)[:40]
    scratch = job.scratch if job.scratch is not None and job.scratch.is_dir() else None
    # a workspace that may be kept must outlive the scratch directory
    place = None if job.keep_workspace else scratch
    workspace = Path(tempfile.mkdtemp(prefix=f"swarm-{name}-", dir=place))
    private_runs = (
        None if job.runs_dir is not None else Path(tempfile.mkdtemp(prefix="swarm-", dir=scratch))
    )
    runs_dir = job.runs_dir if job.runs_dir is not None else private_runs
    assert runs_dir is not None
    started = time.perf_counter()
    report: JobReport | None = None
    try:
        try:
            outcome = await run_scenario(
                job.scenario,
                model=job.model,
                workspace=workspace,
                runs_dir=runs_dir,
                run_id=job.run_id,
            )
        except ConfigError as exc:
            report = JobReport(job.run_id, error=str(exc), bad_input=True)
        except Exception as exc:
            report = JobReport(job.run_id, error=f"{type(exc).__name__}: {exc}")
        else:
            expect = job.scenario.expect
            problems = check_expectations(expect, outcome) if expect is not None else None
            report = JobReport(
                job.run_id,
                summary=outcome.summary(),
                problems=problems,
                workspace=str(workspace),
            )
        record_dir = runs_dir / job.run_id
        shipped = _pack(record_dir) if private_runs is not None and record_dir.exists() else None
        return replace(report, record=shipped, duration=time.perf_counter() - started)
    finally:
        if private_runs is not None:
            shutil.rmtree(private_runs, ignore_errors=True)
        if not (job.keep_workspace and report is not None and not report.passed):
            shutil.rmtree(workspace, ignore_errors=True)


def _pack(record_dir: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for file in sorted(record_dir.iterdir()):
            if file.is_file() and not file.name.endswith(".partial"):
                archive.add(file, arcname=file.name, recursive=False)
    return buffer.getvalue()


def receive_record(report: JobReport, job: Job, runs_dir: Path) -> Path | None:
    """Write the record shipped with ``job``'s report into ``runs_dir/<the job's run id>``
    (``0700``, as a local run's) and point its paths there; returns the directory, or
    ``None`` when nothing was shipped. What the worker sent is data, not instructions: the
    directory is named by the job, never by the report, and only plain files with plain
    names are written (never a link, a device, or a path outside). Raises ``ValueError``
    when the archive cannot be read (nothing is left behind)."""
    if report.record is None:
        return None
    record = RunRecord.create(runs_dir.absolute(), job.run_id)
    try:
        with tarfile.open(fileobj=io.BytesIO(report.record), mode="r:gz") as archive:
            for member in archive.getmembers():
                name = member.name
                if not member.isfile() or "/" in name or name in ("", ".", ".."):
                    continue
                source = archive.extractfile(member)
                if source is None:
                    continue
                with source, open(record.dir / name, "xb", opener=_private_opener) as out:
                    shutil.copyfileobj(source, out)
    except (tarfile.TarError, OSError, ValueError, EOFError) as exc:
        shutil.rmtree(record.dir, ignore_errors=True)
        raise ValueError(f"the record sent back is not readable: {exc}") from None
    _repoint(record)
    return record.dir


def _private_opener(path: str, flags: int) -> int:
    import os

    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o600)


def _repoint(record: RunRecord) -> None:
    """The manifest's key and the summary's audit log name the worker's temporary copy;
    name the files where they now are."""
    for path in (record.manifest, record.summary):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        if path == record.manifest:
            data["key"] = str(record.key)
        elif isinstance(data.get("audit"), dict):
            data["audit"]["log"] = str(record.audit)
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
