"""The README's code runs, and its first screen keeps its two commands."""

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).parents[1] / "README.md"


def test_python_example_in_the_readme_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks
    for block in blocks:
        done = subprocess.run(
            [sys.executable, "-c", block], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert "SessionEndEvent(stop_reason=<StopReason.end_turn" in done.stdout


def test_first_screen_has_the_install_and_test_commands() -> None:
    first_screen = README.read_text().split("---", 1)[0]
    commands = re.findall(r"```bash\n(.*?)\n```", first_screen, re.S)
    assert len(commands) == 2
    assert "swarm run examples/" in commands[0]
    assert "pytest" in commands[1]
    ci = (README.parent / ".ci" / "run").read_text()
    assert commands[1] in ci
