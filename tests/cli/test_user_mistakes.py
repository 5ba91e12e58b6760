"""A user's mistake gets one line naming what and where, and exit code 2: no traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any as Swarm

import pytest


def assert_one_clear_line(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    for word in words:
        assert word in errors[0]


@pytest.mark.parametrize(
    ("where", "says"),
    [("a-file", "must be a directory"), ("/proc/no-such/ws", "cannot use this as the workspace")],
)
def test_a_workspace_that_cannot_be_one(
    swarm: Swarm, examples: Path, tmp_path: Path, where: str, says: str
) -> None:
    (tmp_path / "a-file").write_text("not a directory\n")
    done = swarm("run", examples / "denied-shell.yaml", "--workspace", where, "--plain")
    assert_one_clear_line(done, where, says)
    assert (tmp_path / "a-file").read_text() == "not a directory\n"


def test_a_runs_dir_that_is_a_file(swarm: Swarm, examples: Path, tmp_path: Path) -> None:
    (tmp_path / "runs").write_text("")
    done = swarm("run", examples / "denied-shell.yaml", "--workspace", "ws", "--runs-dir", "runs")
    assert_one_clear_line(done, "runs", "cannot create the run record")


@pytest.mark.parametrize("command", ["list", "show"])
def test_a_file_that_is_not_a_sessions_database(swarm: Swarm, tmp_path: Path, command: str) -> None:
    (tmp_path / "fake.db").write_text("junk\n")
    done = swarm("sessions", command, "fake.db", *(["lead"] if command == "show" else []))
    assert_one_clear_line(done, "fake.db", "not a sessions database")
    assert (tmp_path / "fake.db").read_text() == "junk\n"


def test_version(swarm: Swarm) -> None:
    done = swarm("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("swarm ") and done.stdout.split()[1][0].isdigit()
