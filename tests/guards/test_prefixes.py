"""CommandPrefixGuard: a Claude Code role's ``Bash(prefix:*)`` lets only those commands run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swarm.errors import GuardError
from swarm.guards import CommandPrefixGuard
from swarm.team import MarkdownAgentLoader
from swarm.toolbox import make_toolbox
from swarm.tools import Tool

pytestmark = pytest.mark.anyio

ATTACKS = [
    "touch pwned",
    "echo ok; touch pwned",
    "echo ok && touch pwned",
    "echo ok | sh -c 'touch pwned'",
    "echo ok $(touch pwned)",
    "echo ok `touch pwned`",
    "bash -c 'touch pwned'",
    "env touch pwned",
    "echo okay; touch pwned",
    "$(echo echo) ok; touch pwned",
    "/bin/touch pwned",
]


@pytest.fixture
def shell(tmp_path: Path) -> object:
    ws = Path(os.path.realpath(tmp_path)) / "ws"
    ws.mkdir()
    role = tmp_path / "historian.md"
    role.write_text("---\ntools: Read, Bash(echo ok:*), Bash(git log:*)\n---\nYou read history.\n")
    agent = MarkdownAgentLoader().load_file(role).to_agent(make_toolbox(ws))
    return next(t for t in agent.tools if t.name == "shell")


async def test_a_command_with_an_allowed_prefix_runs(shell: object) -> None:
    output = await shell(command="echo ok fine")  # type: ignore[operator]
    assert "ok fine" in str(output)


@pytest.mark.parametrize("command", ATTACKS)
async def test_any_other_program_is_denied_and_never_runs(
    shell: object, tmp_path: Path, command: str
) -> None:
    with pytest.raises(GuardError) as caught:
        await shell(command=command)  # type: ignore[operator]
    assert caught.value.guard == "CommandPrefixGuard"
    assert not (tmp_path / "ws" / "pwned").exists()
    assert not (tmp_path / "pwned").exists()


async def test_a_prefix_word_known_only_at_run_time_is_denied(shell: object) -> None:
    with pytest.raises(GuardError, match="must start with one of 'echo ok', 'git log'"):
        await shell(command="echo $(printf ok)")  # type: ignore[operator]


async def test_an_unparseable_command_is_denied(shell: object) -> None:
    with pytest.raises(GuardError, match="cannot be judged"):
        await shell(command="echo ok 'unclosed")  # type: ignore[operator]


async def test_an_empty_prefix_allows_nothing() -> None:
    guard = CommandPrefixGuard(["", "   "])
    with pytest.raises(GuardError):
        await guard.check(Tool("shell", _noop), command="ls")


async def _noop(command: str) -> str:
    return command
