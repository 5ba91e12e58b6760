"""``swarm run --tool-timeout``: a bad value is one line and exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any as Swarm

import pytest


@pytest.mark.parametrize("value", ["0", "-3", "soon", "inf"])
def test_a_bad_tool_timeout_is_one_line_and_exit_2(swarm: Swarm, roles: Path, value: str) -> None:
    done = swarm("run", "--team", roles, "--model", "local", "--tool-timeout", value, "task")
    assert done.returncode == 2
    assert "--tool-timeout" in done.stderr and "seconds above 0" in done.stderr
    assert "Traceback" not in done.stderr
