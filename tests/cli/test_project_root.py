"""A Claude Code project root is a team: ``.claude/agents``, its skills and commands and the
``.mcp.json`` beside them, checked with no provider key and no MCP secrets set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any as Swarm

import pytest

from swarm import Team

AGENT = (
    "---\nname: triager\ndescription: Triages issues.\nmodel: sonnet\n"
    "tools: Read, mcp__github__get_issue\n---\nTriage.\n"
)
MCP = {
    "mcpServers": {
        "github": {
            "type": "http",
            "url": "https://api.example/mcp",
            "headers": {"Authorization": "Bearer ${SWARM_TEST_GH_TOKEN}"},
            "alwaysAllow": ["get_issue"],
        },
        "unused one": {"command": "x", "env": {"K": "${SWARM_TEST_NEVER_SET}"}},
    }
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    agents = root / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "triager.md").write_text(AGENT)
    (agents / "writer.md").write_text("You write release notes.\n")
    (root / ".mcp.json").write_text(json.dumps(MCP, indent=2))
    (root / "README.md").write_text("# The project\n")
    (root / "CLAUDE.md").write_text("Project memory, not a role.\n")
    return root


def test_a_project_root_loads_its_agents_and_its_mcp_file(project: Path) -> None:
    team = Team.load(project)
    assert sorted(team.specs) == ["main", "triager", "writer"]
    assert sorted(team.mcp_servers) == ["github", "unused_one"]


def test_the_agents_folder_itself_finds_the_mcp_file_of_its_project(project: Path) -> None:
    team = Team.load(project / ".claude" / "agents")
    assert "github" in team.mcp_servers


def test_validate_a_project_root_with_no_secrets_set(swarm: Swarm, project: Path) -> None:
    done = swarm("validate", project)
    assert done.returncode == 0, done.stderr
    assert "ok:" in done.stdout and "3 roles" in done.stdout
    assert "running needs SWARM_TEST_GH_TOKEN, ANTHROPIC_API_KEY" in done.stdout
    assert "SWARM_TEST_NEVER_SET" not in done.stdout + done.stderr
    assert done.stdout.count("alwaysAllow") == 1
    assert done.stderr == ""


def test_running_refuses_an_unset_variable_of_a_used_server(
    swarm: Swarm, project: Path, tmp_path: Path
) -> None:
    (tmp_path / "s.yaml").write_text(
        f"team: {project}\nentry: triager\ntask: triage\n"
        "model:\n  script:\n    triager: [{text: done}]\n"
    )
    done = swarm("run", tmp_path / "s.yaml", "--plain", "--workspace", tmp_path / "ws")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "'SWARM_TEST_GH_TOKEN' is not set" in done.stderr
    assert "SWARM_TEST_NEVER_SET" not in done.stderr
    assert "Traceback" not in done.stderr


def test_run_a_slash_command_with_its_arguments(
    swarm: Swarm, project: Path, tmp_path: Path
) -> None:
    (project / ".mcp.json").unlink()  # the triager's server would be started
    (project / ".claude" / "agents" / "triager.md").unlink()
    commands = project / ".claude" / "commands"
    commands.mkdir()
    (commands / "notes.md").write_text("Write release notes for version $1 ($ARGUMENTS).\n")
    (tmp_path / "script.yaml").write_text("script:\n  writer: [{text: notes written}]\n")
    done = swarm(
        "run",
        "--team",
        project,
        "--entry",
        "writer",
        "--command",
        commands / "notes.md",
        "--model",
        f"script:{tmp_path / 'script.yaml'}",
        "--plain",
        "--workspace",
        tmp_path / "ws",
        "--runs-dir",
        tmp_path / "runs",
        "2.0",
        "final",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "notes written" in done.stdout
    [record] = (tmp_path / "runs").iterdir()
    manifest = json.loads((record / "manifest.json").read_text())
    assert manifest["config"]["task"] == "/notes 2.0 final"
