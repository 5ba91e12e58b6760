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


def test_a_hung_tool_is_stopped_by_the_run_timeout_and_the_run_goes_on(
    swarm: Swarm, tmp_path: Path, runs: Path
) -> None:
    team = tmp_path / "team"
    team.mkdir()
    (team / "slow_tools.py").write_text(  # beside the role file that names it
        "import anyio\n\n\n"
        "async def hang() -> str:\n"
        '    """Wait for a long time."""\n'
        "    await anyio.sleep(3600)\n"
        '    return "never"\n'
    )
    (team / "waiter.yaml").write_text(
        "name: waiter\ndescription: waits\nsystem: You wait.\ntools: [slow_tools:hang]\n"
    )
    scenario = tmp_path / "wait.yaml"
    scenario.write_text(
        "name: wait\nteam: team\ntask: wait for it\n"
        "model:\n  script:\n    waiter:\n      - call: hang\n        args: {}\n"
        "      - text: the tool gave up\n"
    )
    done = swarm(
        "run", scenario, "--plain", "--tool-timeout", "0.5", "--workspace", tmp_path / "ws"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the tool gave up" in done.stdout
    [record] = runs.iterdir()
    results = [
        line for line in (record / "events.jsonl").read_text().splitlines() if "timed out" in line
    ]
    assert results, "the model was not told the tool timed out"
