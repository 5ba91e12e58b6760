"""``swarm runs report`` and ``swarm run --report``: the HTML file, as a user asks for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any as Swarm


def test_run_with_report_writes_it_into_the_record(
    runs: Path, swarm: Swarm, examples: Path, tmp_path: Path
) -> None:
    done = swarm("run", examples / "denied-shell.yaml", "--workspace", tmp_path / "ws", "--report")
    assert done.returncode == 0, done.stderr
    (record,) = runs.iterdir()
    report = record / "report.html"
    assert f"Report: {report}" in done.stdout
    page = report.read_text()
    assert "orchestrator/developer#1" in page and "no-recursive-delete" in page


def test_runs_report_by_run_id_to_a_chosen_file(
    runs: Path, swarm: Swarm, examples: Path, tmp_path: Path
) -> None:
    assert (
        swarm("run", examples / "denied-shell.yaml", "--workspace", tmp_path / "ws").returncode == 0
    )
    (record,) = runs.iterdir()
    out = tmp_path / "out.html"
    done = swarm("runs", "report", record.name, "-o", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"Report: {out}"
    assert "The workspace is cluttered; clean it up." in out.read_text()
    assert not (record / "report.html").exists()


def test_runs_report_of_an_unknown_run_is_one_line_and_exit_2(swarm: Swarm) -> None:
    done = swarm("runs", "report", "no-such-run")
    assert done.returncode == 2
    assert "no run record 'no-such-run'" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_runs_report_to_an_unwritable_place_is_one_line_and_exit_2(
    runs: Path, swarm: Swarm, examples: Path, tmp_path: Path
) -> None:
    assert (
        swarm("run", examples / "denied-shell.yaml", "--workspace", tmp_path / "ws").returncode == 0
    )
    (record,) = runs.iterdir()
    done = swarm("runs", "report", record, "-o", tmp_path / "missing-dir" / "r.html")
    assert done.returncode == 2
    assert "missing-dir/r.html" in done.stderr and "cannot write the report" in done.stderr
    assert "Traceback" not in done.stderr
