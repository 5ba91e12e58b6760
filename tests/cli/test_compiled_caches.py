"""Python's compiled caches, made when a run's tests import its code, are not listed as
files the run changed: the summary counts them on one line, and ``changes.json`` too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any as Swarm


def test_the_summary_counts_pycache_files_and_lists_only_the_written_ones(
    swarm: Swarm, examples: Path, tmp_path: Path
) -> None:
    done = swarm(
        "run", examples / "build-a-calculator.yaml", "--workspace", "ws", "--runs-dir", "runs"
    )
    assert done.returncode == 0, done.stderr
    made = sorted(p.name for p in (tmp_path / "ws").rglob("__pycache__/*.pyc"))
    assert made  # the tester ran `python3 test_calc.py`, which compiled calc.py
    files = done.stdout.split("\nFiles:\n", 1)[1].split("\nStop reason:", 1)[0].splitlines()
    assert [line.split()[:2] for line in files[:-1]] == [
        ["+", "DESIGN.md"],
        ["+", "calc.py"],
        ["+", "test_calc.py"],
    ]
    many = "s" if len(made) != 1 else ""
    assert (
        files[-1]
        == f"  and {len(made)} compiled Python cache file{many} (__pycache__/, *.pyc), not listed"
    )
    (record,) = (tmp_path / "runs").iterdir()
    changes = json.loads((record / "changes.json").read_text())
    assert changes["caches"] == len(made)
    assert not [f["path"] for f in changes["files"] if "__pycache__" in f["path"]]
