"""Claude Code keys people write in agent files: ``permissions``, other spellings, tools
swarm has no equivalent of, and files without front matter."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from swarm import AgentSpec, ConfigError, MarkdownAgentLoader
from swarm.errors import GuardError
from swarm.toolbox import make_toolbox

WriteRole = Callable[[str, str], Path]


def load(write_role: WriteRole, front: str) -> AgentSpec:
    return MarkdownAgentLoader().load_file(write_role("agent.md", f"---\n{front}---\nHelp.\n"))


def warnings_with(spec: AgentSpec, fragment: str) -> list[str]:
    return [w for w in spec.warnings if fragment in w]


PERMISSIONS = (
    "tools: Read, Write, Bash\n"
    "permissions:\n"
    "  allow:\n    - Bash(echo:*)\n    - Bash(touch:*)\n    - Read\n"
    "  deny:\n    - Bash(touch pwned:*)\n    - Write\n"
)


def test_permissions_allow_and_deny_become_the_roles_tools_and_shell_limits(
    write_role: WriteRole,
) -> None:
    spec = load(write_role, PERMISSIONS)
    assert spec.tools == ("read_file", "shell")
    assert spec.shell_commands == ("echo", "touch")
    assert spec.shell_denied == ("touch pwned",)
    assert spec.warnings == ()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = Path(os.path.realpath(tmp_path)) / "ws"
    ws.mkdir()
    return ws


@pytest.mark.anyio
async def test_a_denied_command_never_runs_and_an_allowed_one_does(
    write_role: WriteRole, ws: Path
) -> None:
    shell = next(
        t
        for t in load(write_role, PERMISSIONS).to_agent(make_toolbox(ws)).tools
        if t.name == "shell"
    )
    await shell(command="touch fine")
    assert (ws / "fine").exists()
    for command in ("touch pwned", "echo x; touch pwned", "ls"):
        with pytest.raises(GuardError):
            await shell(command=command)
    assert not (ws / "pwned").exists()


def test_permissions_ask_entries_are_refused_with_a_warning(write_role: WriteRole) -> None:
    spec = load(write_role, "tools: Read, Edit\npermissions:\n  ask: [Edit]\n")
    assert spec.tools == ("read_file",)
    assert warnings_with(spec, "nobody is asked during a run")


def test_permissions_that_are_not_a_mapping_are_an_error(write_role: WriteRole) -> None:
    with pytest.raises(ConfigError) as caught:
        load(write_role, "permissions: allow everything\n")
    assert caught.value.field == "permissions" and caught.value.line == 2


@pytest.mark.parametrize("written", ["allowed_tools", "allowedTools", "allowed-tools"])
def test_other_spellings_of_the_tools_key_are_read_with_one_warning(
    write_role: WriteRole, written: str
) -> None:
    spec = load(write_role, f"{written}: Read, Grep\n")
    assert spec.tools == ("read_file", "search")
    assert len(spec.warnings) == 1
    assert warnings_with(spec, f"field '{written}': read as 'tools'")


def test_permission_mode_with_a_dash_is_permission_mode(write_role: WriteRole) -> None:
    assert load(write_role, "permission-mode: plan\n").policy == "readonly"


def test_both_spellings_of_one_key_are_an_error(write_role: WriteRole) -> None:
    with pytest.raises(ConfigError, match="same setting"):
        load(write_role, "permission-mode: plan\npermissionMode: plan\n")


@pytest.mark.parametrize("tool", ["TaskOutput", "TaskStop", "LSP", "EnterWorktree"])
def test_newer_claude_tools_are_dropped_with_one_warning(write_role: WriteRole, tool: str) -> None:
    spec = load(write_role, f"tools: Read, {tool}\n")
    assert spec.tools == ("read_file",)
    assert len(warnings_with(spec, f"'{tool}' has no equivalent")) == 1


def test_each_warning_of_a_file_appears_once(write_role: WriteRole) -> None:
    spec = load(
        write_role,
        "tools: Read, WebFetch, TaskOutput\nversion: 2\npermission-mode: acceptEdits\n",
    )
    assert len(spec.warnings) == len(set(spec.warnings)) == 4
