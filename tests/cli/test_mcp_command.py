"""``swarm mcp serve`` refuses bad input with one line and exit code 2, before serving."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def team(tmp_path: Path) -> Path:
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "lead.yaml").write_text("name: lead\nsystem: You lead.\n")
    return directory


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "no model is configured"),
        (["--model", "local", "--http", "8765"], "--http wants HOST:PORT"),
        (["--model", "local", "--entry", "boss"], "entry role 'boss' is not a role"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    swarm: Any, team: Path, extra: list[str], message: str
) -> None:
    done = swarm("mcp", "serve", "--team", team, *extra)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_a_role_naming_an_undeclared_server_is_refused_at_its_line(swarm: Any, team: Path) -> None:
    (team / "lead.yaml").write_text("name: lead\nsystem: You lead.\ntools:\n  - mcp:nowhere\n")
    done = swarm("validate", team)
    assert done.returncode == 2
    assert f"{team / 'lead.yaml'}:4: field 'tools'" in done.stdout + done.stderr
    assert "MCP server 'nowhere'" in done.stdout + done.stderr
