"""``kill -9`` during a captured shell call, and during an undo: running the undo (again)
brings the workspace back, byte for byte."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from swarm.record.record import RunRecord
from swarm.undo import UndoRefused

from .runs import scenario_file, shell, team, tree_hash

WAIT = 120.0  # seconds, at most, for a process to reach the point the test kills it at


def _kill_once(argv: list[str], path: Path | Callable[[], bool], log: Path) -> None:
    """Start ``argv`` and SIGKILL it as soon as ``path`` exists (or says so)."""
    there = path if callable(path) else path.exists
    with (
        log.open("wb") as err,
        subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err) as process,
    ):
        deadline = time.monotonic() + WAIT
        try:
            while not there():
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, f"{path} never appeared"
                time.sleep(0.02)
        finally:
            os.kill(process.pid, signal.SIGKILL)


@pytest.mark.parametrize("resume", [False, True], ids=["undo", "resume-then-undo"])
def test_kill_during_a_captured_shell_call_then_undo_restores(tmp_path: Path, resume: bool) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "keep.txt").write_text("kept\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "main.py").write_text("print(1)\n")
    before = tree_hash(workspace)
    command = "rm keep.txt && rm src/main.py && echo new > made.txt && touch started && sleep 600"
    script = {"dev": [shell(command), {"text": "Done."}]}
    scenario = scenario_file(tmp_path, script, team=team(tmp_path, dev="shell"))
    runs = tmp_path / "runs"
    argv = [sys.executable, "-m", "swarm", "run", str(scenario), "--plain"]
    argv += ["--workspace", str(workspace), "--runs-dir", str(runs)]

    def started() -> bool:  # in the workspace, or in the upper layer of the call's overlay
        overlays = runs.glob("*/undo/overlay/*/upper/started")
        return (workspace / "started").exists() or any(True for _ in overlays)

    _kill_once(argv, started, tmp_path / "run.log")
    (record,) = runs.iterdir()
    overlaid = not (workspace / "started").exists()
    # over an overlay, a command cut short changed nothing; walked, it changed the files
    assert (workspace / "keep.txt").exists() == overlaid
    if resume:  # the resumed segment first records what the cut call changed
        resumed = subprocess.run(
            [sys.executable, "-m", "swarm", "sessions", "resume", str(record), "--plain"],
            capture_output=True,
            text=True,
        )
        assert resumed.returncode == 0, resumed.stderr
        (cut,) = RunRecord(record).calls()
        assert cut.interrupted
        assert ("keep.txt" in [c.path for c in cut.changes]) != overlaid
        assert not (record / "undo" / "overlay").exists() or not any(
            (record / "undo" / "overlay").iterdir()
        )

    if overlaid:
        with pytest.raises(UndoRefused, match="nothing to undo"):
            RunRecord(record).undo()
    else:
        RunRecord(record).undo()

    assert tree_hash(workspace) == before
    (call,) = RunRecord(record).calls()[:1]
    assert call.interrupted


def test_kill_during_undo_then_undo_again_finishes(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "many").mkdir(parents=True)
    for i in range(1500):
        (workspace / "many" / f"{i:04}.txt").write_text(f"file {i}\n")
    before = tree_hash(workspace)
    script = {"dev": [shell("rm -r many && echo x > other.txt"), {"text": "Done."}]}
    scenario = scenario_file(
        tmp_path, script, team=team(tmp_path, dev="shell"), policy="name: o\ndefault: allow\n"
    )
    runs = tmp_path / "runs"
    subprocess.run(
        [
            *(sys.executable, "-m", "swarm", "run", str(scenario), "--plain"),
            *("--workspace", str(workspace), "--runs-dir", str(runs)),
        ],
        check=True,
        capture_output=True,
    )
    (record,) = runs.iterdir()
    assert not (workspace / "many").exists()
    undo = [sys.executable, "-m", "swarm", "runs", "undo", str(record)]
    _kill_once(undo, workspace / "many" / "0100.txt", tmp_path / "undo.log")

    again = subprocess.run(undo, capture_output=True, text=True)

    assert again.returncode == 0, again.stderr
    assert tree_hash(workspace) == before
