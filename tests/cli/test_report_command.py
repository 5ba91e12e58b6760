"""``swarm runs report`` and ``swarm run --report``: the HTML file, as a user asks for it."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import Any as Swarm

import pytest


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


SLOW = """\
team: {roles}
task: Tidy up.
model:
  script:
    orchestrator:
      - call: developer
        args: {{task: wait for the build}}
      - text: All tidy.
    developer:
      - call: shell
        args: {{command: sleep 60}}
      - text: waited
"""


def test_a_run_stopped_by_ctrl_c_still_writes_its_report(
    runs: Path, swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "slow.yaml"
    scenario.write_text(SLOW.format(roles=roles))
    process = swarm.start("run", scenario, "--workspace", tmp_path / "ws", "--plain", "--report")
    assert process.stdout is not None
    for line in process.stdout:
        if "calls shell" in line:
            break
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail("swarm did not stop on SIGINT")
    assert process.returncode == 130, err
    (record,) = runs.iterdir()
    assert f"Report: {record / 'report.html'}" in out
    page = (record / "report.html").read_text()
    assert "orchestrator/developer#1" in page and "sleep 60" in page
    assert "cancelled" in page


def test_runs_report_open_without_a_browser_says_where_the_report_is(
    runs: Path, swarm: Swarm, examples: Path, tmp_path: Path
) -> None:
    assert (
        swarm("run", examples / "denied-shell.yaml", "--workspace", tmp_path / "ws").returncode == 0
    )
    (record,) = runs.iterdir()
    no_browser = {"PATH": str(tmp_path / "empty"), "BROWSER": "", "DISPLAY": ""}
    done = swarm("runs", "report", record.name, "--open", env=no_browser)
    assert done.returncode == 0, done.stderr
    report = record / "report.html"
    assert done.stdout.strip() == f"Report: {report}"
    assert done.stderr.strip() == (
        f"no browser found to open it: open {report.as_uri()} in one (or set BROWSER)"
    )
