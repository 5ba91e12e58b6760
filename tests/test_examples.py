"""The Python examples run as they are and show what they promise."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[1] / "examples"


def run_example(name: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_quickstart_shows_an_allowed_and_a_denied_call() -> None:
    out = run_example("quickstart.py")
    assert "content='5'" in out
    assert "Permission denied by NoNegatives: negative numbers are not allowed" in out


def test_sqlite_session_is_resumed_by_id() -> None:
    out = run_example("sqlite_resume.py")
    assert "resumed session" in out and "with 4 messages" in out
    assert "second run: You told me: 'My name is Ada.'" in out


def test_compaction_fires_and_the_run_finishes() -> None:
    out = run_example("compaction.py")
    assert "compacted:" in out
    assert "final: The report is quarterly figures throughout." in out


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_every_example_runs(name: str) -> None:
    run_example(name)
