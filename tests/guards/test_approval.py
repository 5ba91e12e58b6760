"""ApprovalGuard and ask decisions: approvers, no approver, approved changes re-checked."""

from __future__ import annotations

from typing import Annotated, Any

import pytest

from swarm import ApprovalDecision, ApprovalRequest
from swarm.errors import GuardError
from swarm.guards import ApprovalGuard, Policy, ShellGuard, apply_policy
from swarm.scope import CallRecord, RunScope, use_call, use_scope
from swarm.tools import Field, Tool

pytestmark = pytest.mark.anyio


def answer(decision: ApprovalDecision | bool, seen: list[ApprovalRequest] | None = None) -> Any:
    async def approver(request: ApprovalRequest) -> ApprovalDecision | bool:
        if seen is not None:
            seen.append(request)
        return decision

    return approver


async def test_no_approver_means_denial(shell: Tool[Any]) -> None:
    with pytest.raises(GuardError) as caught:
        await ApprovalGuard()(shell, command="ls")
    assert "nobody can approve" in caught.value.reason
    assert caught.value.guard == "ApprovalGuard"


async def test_approver_sees_the_call_and_approves(shell: Tool[Any]) -> None:
    seen: list[ApprovalRequest] = []
    guard = ApprovalGuard(answer(True, seen), reason="shell needs a human")
    call = CallRecord("call_7", "shell", "lead/dev#1", {"command": "ls"})
    with use_call(call):
        assert await guard(shell, command="ls") == {"command": "ls"}
    (request,) = seen
    assert (request.tool, request.path, request.call_id, request.reason) == (
        "shell",
        "lead/dev#1",
        "call_7",
        "shell needs a human",
    )
    assert call.reason == "approved"


async def test_refusal_is_a_denial_with_the_reason(shell: Tool[Any]) -> None:
    guard = ApprovalGuard(answer(ApprovalDecision.deny("not today")))
    with pytest.raises(GuardError, match="approval was refused: not today"):
        await guard(shell, command="ls")


async def test_the_run_scope_approver_is_used(shell: Tool[Any]) -> None:
    with use_scope(RunScope(approver=answer(True))):
        assert await ApprovalGuard()(shell, command="ls")


async def test_a_child_scope_without_approver_denies(shell: Tool[Any]) -> None:
    with (
        use_scope(RunScope(approver=answer(True))),
        use_scope(RunScope(path="lead/dev#1")),
        pytest.raises(GuardError),
    ):
        await ApprovalGuard()(shell, command="ls")


async def test_approved_changed_arguments_replace_the_call(shell: Tool[Any]) -> None:
    guard = ApprovalGuard(answer(ApprovalDecision.approve({"command": "ls -la"})))
    tool = shell.copy(guards=(guard,))
    assert await tool.check({"command": "ls"}) == {"command": "ls -la"}


async def test_approved_changes_run_the_guards_before_the_asking_one_again(
    shell: Tool[Any],
) -> None:
    guard = ApprovalGuard(answer(ApprovalDecision.approve({"command": "curl example.com"})))
    tool = shell.copy(guards=(ShellGuard(deny=["curl"]), guard))
    with pytest.raises(GuardError) as caught:
        await tool.check({"command": "ls"})
    assert caught.value.guard == "ShellGuard"


async def test_approved_changes_meet_the_policy_deny_rules(shell: Tool[Any]) -> None:
    policy = Policy.from_mapping(
        {"rules": [{"id": "ask", "ask": "shell"}, {"id": "no-rm", "deny": "shell",
                   "args": {"command": {"shell": "rm"}}}]},
        name="p",
    )  # fmt: skip
    (tool,) = apply_policy([shell], policy)
    approver = answer(ApprovalDecision.approve({"command": "rm notes.txt"}))
    with use_scope(RunScope(approver=approver)), pytest.raises(GuardError) as caught:
        await tool.check({"command": "ls"})
    assert caught.value.rule == "no-rm"


async def test_approved_changes_are_asked_about_only_once(shell: Tool[Any]) -> None:
    seen: list[ApprovalRequest] = []
    guard = ApprovalGuard(answer(ApprovalDecision.approve({"command": "ls -la"}), seen))
    assert await shell.copy(guards=(guard,)).check({"command": "ls"}) == {"command": "ls -la"}
    assert len(seen) == 1


async def test_approved_changes_are_validated() -> None:
    async def sleep(seconds: Annotated[int, Field(le=10)]) -> str:
        return ""

    guard = ApprovalGuard(answer(ApprovalDecision.approve({"seconds": 99})))
    tool: Tool[Any] = Tool(name="sleep", handler=sleep, guards=(guard,))
    with pytest.raises(GuardError, match="approved arguments are invalid"):
        await tool.check({"seconds": 1})
