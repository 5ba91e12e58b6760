"""The README's offline team example, as a user runs it: `swarm run --team
examples/teams/local --entry lead --model local "What files are here?"` in a project
directory ends its turn (``end_turn``, exit 0) every time, on the 135M model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.local_model

TEAM = Path(__file__).parents[2] / "examples" / "teams" / "local"
COMMAND = ["run", "--team", str(TEAM), "--entry", "lead", "--model", "local"]


@pytest.mark.parametrize("attempt", range(5))
def test_the_offline_team_example_ends_its_turn(tmp_path: Path, attempt: int) -> None:
    (tmp_path / "README.md").write_text("# notes\n")
    (tmp_path / "app.py").write_text("print('hello')\n")
    done = subprocess.run(
        [sys.executable, "-m", "swarm", *COMMAND, "--plain", "What files are here?"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard, not a timing assertion
        env={**os.environ, "COLUMNS": "200"},
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Stop reason: end_turn." in done.stdout
    assert "[lead] delegates to worker" in done.stdout
    assert "[lead] finished (end_turn)" in done.stdout
    assert "Delegation refused" not in done.stdout and "<tool_response>" not in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md", "app.py"]
