"""A scenario's own ``tools:`` map and ``mcp_servers:``, beside the team's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from swarm import ConfigError
from swarm.events import StreamEvent, ToolResult
from swarm.scenario import load_scenario, run_scenario

pytestmark = pytest.mark.anyio


def _scenario(tmp_path: Path, tools: dict[str, str]) -> Path:
    team = tmp_path / "team"
    team.mkdir()
    (team / "clerk.yaml").write_text(
        "name: clerk\nsystem: You keep the books.\ntools: [stamp, mcp:time/get_current_time]\n"
    )
    (tmp_path / "scenario_stamps.py").write_text(
        "def stamp(text: str) -> str:\n    '''Stamp a text.'''\n    return f'[{text}]'\n"
    )
    (tmp_path / "policy.yaml").write_text("extend: builtin:default\nsandbox: {mode: auto}\n")
    path = tmp_path / "scenario.yaml"
    path.write_text(
        json.dumps(
            {
                "name": "tools",
                "team": "team",
                "policy": "policy.yaml",
                "task": "Stamp it.",
                "tools": tools,
                "mcp_servers": {
                    "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
                },
                "model": {
                    "script": {
                        "clerk": [
                            {"call": "stamp", "args": {"text": "paid"}},
                            {"call": "mcp__time__get_current_time", "args": {"timezone": "UTC"}},
                            {"text": "done"},
                        ]
                    }
                },
            },
            indent=2,
        )
    )
    return path


async def test_a_scenario_adds_python_tools_and_mcp_servers_to_its_team(tmp_path: Path) -> None:
    path = _scenario(tmp_path, {"stamp": "scenario_stamps:stamp"})
    events: list[StreamEvent] = []
    await run_scenario(
        load_scenario(path),
        workspace=tmp_path / "workspace",
        runs_dir=tmp_path / "runs",
        on_event=events.append,
    )
    stamp, clock = [e for e in events if isinstance(e, ToolResult)]
    assert stamp.content == "[paid]"
    assert not clock.is_error and json.loads(clock.content)["timezone"] == "UTC"


async def test_a_bad_scenario_tool_is_an_error_at_its_line(tmp_path: Path) -> None:
    path = _scenario(tmp_path, {"stamp": "scenario_stamps:stomp"})
    with pytest.raises(ConfigError) as caught:
        await run_scenario(
            load_scenario(path), workspace=tmp_path / "workspace", runs_dir=tmp_path / "runs"
        )
    assert caught.value.path == str(path)
    assert caught.value.field == "tools.stamp"
    assert caught.value.line == 7
    assert "has no attribute 'stomp'" in caught.value.message
    assert not (tmp_path / "runs").exists()  # refused before any record was written
