"""What the shipped policies do: default, readonly, strict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from swarm.audit import AuditLog
from swarm.errors import GuardError
from swarm.guards import apply_policy, load_policy
from swarm.guards.approval import ApprovalRequest
from swarm.scope import CallRecord, current_scope, use_call, use_scope
from swarm.tools import Tool

pytestmark = pytest.mark.anyio


async def delegate(task: str) -> str:
    return "done"


@pytest.fixture
def tools(shell: Tool[Any], read_file: Tool[Any], write_file: Tool[Any]) -> list[Tool[Any]]:
    return [shell, read_file, write_file, Tool(name="developer", handler=delegate)]


def guarded(tools: list[Tool[Any]], name: str, workspace: Path) -> dict[str, Tool[Any]]:
    return {t.name: t for t in apply_policy(tools, load_policy(name), workspace=workspace)}


async def test_default_needs_an_audit_log(tools: list[Tool[Any]], workspace: Path) -> None:
    with pytest.raises(GuardError) as caught:
        await guarded(tools, "default", workspace)["read_file"](path="a.txt")
    assert caught.value.guard == "AuditGuard"


async def test_default_confines_files_and_allows_delegation(
    tools: list[Tool[Any]], workspace: Path, audited: AuditLog
) -> None:
    g = guarded(tools, "default", workspace)
    assert await g["read_file"](path="a.txt") == "read a.txt"
    assert await g["developer"](task="x") == "done"
    with pytest.raises(GuardError) as caught:
        await g["write_file"](path="/etc/passwd", content="x")
    assert caught.value.guard == "PathGuard"


async def test_a_closed_audit_log_does_not_count(
    tools: list[Tool[Any]], workspace: Path, audited: AuditLog
) -> None:
    audited.close()
    with pytest.raises(GuardError):
        await guarded(tools, "default", workspace)["read_file"](path="a.txt")


@pytest.mark.parametrize(
    ("tool", "arguments", "allowed"),
    [
        ("read_file", {"path": "a.txt"}, True),
        ("write_file", {"path": "a.txt", "content": "x"}, False),
        ("developer", {"task": "x"}, False),
        ("shell", {"command": "git log --oneline | head -5"}, True),
        ("shell", {"command": "grep -rn TODO . | wc -l"}, True),
        ("shell", {"command": "echo x > notes.txt"}, False),
        ("shell", {"command": "sed -i s/a/b/ f"}, False),
        ("shell", {"command": "git commit -am x"}, False),
        ("shell", {"command": 'python -c \'open("f", "w")\''}, False),
        ("shell", {"command": "find . -exec touch {} +"}, False),
    ],
)
async def test_readonly(
    tools: list[Tool[Any]],
    workspace: Path,
    audited: AuditLog,
    tool: str,
    arguments: dict[str, Any],
    allowed: bool,
) -> None:
    g = guarded(tools, "readonly", workspace)[tool]
    if allowed:
        assert await g.check(arguments) == arguments
    else:
        with pytest.raises(GuardError):
            await g.check(arguments)


async def test_strict_denies_everything_with_nobody_to_ask(
    tools: list[Tool[Any]], workspace: Path, audited: AuditLog
) -> None:
    with pytest.raises(GuardError) as caught:
        await guarded(tools, "strict", workspace)["read_file"](path="a.txt")
    assert caught.value.rule == "ask-everything"


async def test_strict_asks_about_everything_but_keeps_the_denials(
    tools: list[Tool[Any]], workspace: Path, audited: AuditLog
) -> None:
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    g = guarded(tools, "strict", workspace)
    with use_scope(current_scope().child(approver=approver)):
        assert await g["read_file"](path="a.txt") == "read a.txt"
        assert await g["developer"](task="x") == "done"
        with pytest.raises(GuardError) as caught:
            await g["shell"](command="rm -rf /")
    assert caught.value.rule == "no-recursive-delete"
    assert [r.tool for r in asked] == ["read_file", "developer"]
    assert {r.policy for r in asked} == {"strict"}


@pytest.mark.parametrize(
    ("name", "command", "rule"),
    [
        ("strict", "python3 -c 'print(1)'", "no-running-code"),
        ("strict", "find . -name x | xargs grep y", "no-running-code"),
        ("strict", "bash scripts/test.sh", "no-running-code"),
        ("readonly", "python3 -c 'print(1)'", "no-running-code"),
        ("readonly", "bash scripts/test.sh", "no-running-code"),
        ("readonly", "sed -n '1e id' f", "no-hidden-code"),
        ("readonly", "echo x > $OUT", "no-system-file-writes"),
        ("readonly", "find . -exec sed -i s/a/b/ {} +", "no-system-file-writes"),
        ("readonly", "sed -i s/a/b/ notes.txt", "no-shell-writes"),
    ],
)
async def test_strict_and_readonly_deny_code_running_constructs(
    tools: list[Tool[Any]], workspace: Path, audited: AuditLog, name: str, command: str, rule: str
) -> None:
    with pytest.raises(GuardError) as caught:
        await guarded(tools, name, workspace)["shell"].check({"command": command})
    assert caught.value.rule == rule


async def test_readonly_allows_read_only_pipelines_through_xargs(
    tools: list[Tool[Any]], workspace: Path, audited: AuditLog
) -> None:
    g = guarded(tools, "readonly", workspace)["shell"]
    arguments = {"command": "find . -name '*.py' | xargs grep -n TODO"}
    assert await g.check(arguments) == arguments


async def test_unparseable_command_is_noted_on_the_call_under_its_own_rule(
    tools: list[Tool[Any]], workspace: Path, audited: AuditLog
) -> None:
    arguments = {"command": "echo $(unclosed"}
    call = CallRecord("call", "shell", "agent", arguments)
    with use_call(call), pytest.raises(GuardError) as caught:
        await guarded(tools, "default", workspace)["shell"].check(arguments)
    assert caught.value.rule == call.rule == "unparseable-command"
    assert call.policy == "default"
