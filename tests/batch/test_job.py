"""What comes back from a worker is data: a report cannot choose where its record lands,
and an archive cannot write outside it or plant links."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from swarm.batch import LocalExecutor, run_batch
from swarm.batch.job import Job, JobReport

from .support import make_team, read_results, script, write_tasks

pytestmark = pytest.mark.anyio


def _archive(*members: tuple[str, bytes | str]) -> bytes:
    """A gzip tar: ``(name, bytes)`` is a file, ``(name, "->target")`` a symlink."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, content in members:
            info = tarfile.TarInfo(name)
            if isinstance(content, str):
                info.type, info.linkname = tarfile.SYMTYPE, content.removeprefix("->")
                archive.addfile(info)
            else:
                info.size = len(content)
                archive.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


async def _batch_of_one(tmp_path: Path, report: JobReport) -> tuple[dict[str, object], Path]:
    async def forged(job: Job) -> JobReport:
        return report

    runs = tmp_path / "runs"
    out = tmp_path / "results.jsonl"
    await run_batch(
        write_tasks(tmp_path / "tasks.jsonl", 1),
        team=make_team(tmp_path),
        results=out,
        model=script(),
        runs_dir=runs,
        executor=_Shipping(forged),
    )
    (result,) = read_results(out)
    return result, runs


class _Shipping(LocalExecutor):
    """Runs here, but as a remote executor would: records come back as bytes."""

    shares_files = False

    def __init__(self, work: object) -> None:
        super().__init__(1, work=work)  # type: ignore[arg-type]


async def test_a_report_cannot_name_where_its_record_goes(tmp_path: Path) -> None:
    forged = JobReport(
        "../../escaped",
        summary={"stop_reason": "end_turn"},
        record=_archive(("summary.json", b"{}")),
    )
    result, runs = await _batch_of_one(tmp_path, forged)
    record = Path(str(result["record"]))
    assert record.parent == runs and record.name != "escaped"
    assert (record / "summary.json").exists()
    assert not (tmp_path / "escaped").exists() and not (runs.parent.parent / "escaped").exists()


async def test_an_archive_cannot_write_outside_its_record_or_plant_links(tmp_path: Path) -> None:
    forged = JobReport(
        "x",
        summary={"stop_reason": "end_turn"},
        record=_archive(
            ("events.jsonl", b"{}\n"),
            ("../outside.txt", b"evil"),
            (str(tmp_path / "absolute.txt"), b"evil"),
            ("audit.key", "->/etc/passwd"),
            ("nested/file.txt", b"evil"),
        ),
    )
    result, runs = await _batch_of_one(tmp_path, forged)
    record = Path(str(result["record"]))
    assert sorted(os.listdir(record)) == ["events.jsonl"]
    assert not (runs / "outside.txt").exists() and not (tmp_path / "absolute.txt").exists()


async def test_an_unreadable_archive_fails_its_task_and_leaves_nothing(tmp_path: Path) -> None:
    forged = JobReport("x", summary={"stop_reason": "end_turn"}, record=b"not a tar at all")
    result, runs = await _batch_of_one(tmp_path, forged)
    assert result["ok"] is False and "not readable" in str(result["error"])
    assert result["record"] is None
    assert list(runs.iterdir()) == []
