"""Asking before a call runs: ``ask`` and ApprovalGuard (the approval types, defined in
``swarm.scope`` with the run scope that carries the approver, are re-exported here).

An ``ask`` decision (from ``ApprovalGuard`` or a policy rule) goes to an approver: the
guard's own, else the run scope's ``approver``, which every sub-agent shares, so a call
at any depth is asked about (and only that call waits). With none (a non-interactive run
whose policy does not ``hold``) the call is denied. An approver may approve a changed
set of arguments; they are validated and the guards up to the one that asked run again
on them, so an edit cannot slip past a rule that would deny it. Every answer becomes a
receipt on the call (``CallRecord.approval``), which the audit log writes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from swarm.errors import GuardError, ToolError
from swarm.guards.base import ConcurrentGuard, PermissionGuard
from swarm.scope import (
    ApprovalDecision,
    ApprovalRequest,
    Approver,
    current_call,
    current_scope,
)
from swarm.tools import run_guards

if TYPE_CHECKING:
    from swarm.tools import Tool

__all__ = ["ApprovalDecision", "ApprovalGuard", "ApprovalRequest", "Approver", "ask"]


_approved: ContextVar[tuple[str, dict[str, Any]] | None] = ContextVar(
    "swarm_approved_arguments", default=None
)


@contextmanager
def _already_approved(tool: str, arguments: dict[str, Any]) -> Iterator[None]:
    token = _approved.set((tool, arguments))
    try:
        yield
    finally:
        _approved.reset(token)


async def ask(
    tool: Tool[Any],
    arguments: dict[str, Any],
    *,
    guard: PermissionGuard,
    reason: str,
    rule: str | None = None,
    policy: str | None = None,
    approver: Approver | None = None,
) -> dict[str, Any]:
    """Ask ``approver`` (else the run's) about a call; return the arguments to allow.

    Raises ``GuardError`` (naming ``guard`` and ``rule``) when there is nobody to ask,
    the answer is no, or approved changed arguments fail validation or the guards.
    """
    approved = _approved.get()
    if approved is not None and approved == (tool.name, arguments):
        return arguments  # re-checking arguments a person already approved
    approver = approver or current_scope().approver
    name = guard.name
    if approver is None:
        raise GuardError(
            f"{reason}; this call needs approval and nobody can approve it here"
            " (a non-interactive run or a sub-agent)",
            guard=name,
            rule=rule,
        )
    call = current_call()
    request = ApprovalRequest(
        tool=tool.name,
        arguments=dict(arguments),
        path=call.path if call is not None else current_scope().path,
        call_id=call.call_id if call is not None else None,
        reason=reason,
        guard=name,
        rule=rule,
        policy=policy,
    )
    answer = await approver(request)
    decision = answer if isinstance(answer, ApprovalDecision) else ApprovalDecision(bool(answer))
    if call is not None:
        call.approval = _receipt(request, decision, approver)
    if not decision.approved:
        why = f": {decision.reason}" if decision.reason else ""
        raise GuardError(f"{reason}; approval was refused{why}", guard=name, rule=rule)
    if call is not None:
        call.reason = "approved" + (f": {decision.reason}" if decision.reason else "")
    if decision.arguments is None or decision.arguments == arguments:
        return arguments
    checked = await _recheck(tool, guard, decision.arguments)
    if call is not None and call.approval is not None:  # as approved, once validated
        call.approval = {**call.approval, "arguments": checked}
    return checked


def _receipt(
    request: ApprovalRequest, decision: ApprovalDecision, approver: Approver
) -> dict[str, Any]:
    """What the audit log keeps of an answer: who gave it, when, through what, and the
    arguments as approved."""
    who = decision.who or getattr(approver, "__qualname__", None) or type(approver).__name__
    approved = decision.arguments if decision.arguments is not None else request.arguments
    return {
        "approved": decision.approved,
        "who": who,
        "via": decision.via or "python",
        "at": decision.at or datetime.now(UTC).isoformat(timespec="milliseconds"),
        "arguments": dict(approved) if decision.approved else None,
        "reason": decision.reason,
        "rule": request.rule,
    }


async def _recheck(
    tool: Tool[Any], guard: PermissionGuard, changed: dict[str, Any]
) -> dict[str, Any]:
    """Validate approved changed arguments and run the guards up to ``guard`` on them (the
    ones after it see them next anyway)."""
    try:
        validated = tool.validate(changed)
    except ToolError as exc:
        raise GuardError(f"the approved arguments are invalid: {exc}", guard=guard.name) from None
    position = next((i for i, g in enumerate(tool.guards) if g is guard), None)
    before = () if position is None else tool.guards[:position]
    upto = (*before, _Direct(guard))
    with _already_approved(tool.name, validated):
        return await run_guards(tool.copy(guards=upto), validated)


class _Direct(PermissionGuard):
    """The asking guard, re-run without its concurrency limit (its call holds it)."""

    def __init__(self, guard: PermissionGuard) -> None:
        self.guard = guard

    @property
    def name(self) -> str:
        return self.guard.name

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        return await self.guard.check(tool, **kwargs)


class ApprovalGuard(ConcurrentGuard):
    """Asks before every call it guards (one question at a time).

    ``approver`` answers (default: the run scope's approver); with none the call is
    denied. ``reason`` tells the approver and the model why the call needs asking.
    """

    def __init__(
        self, approver: Approver | None = None, *, reason: str = "this call needs approval"
    ) -> None:
        self.approver = approver
        self.reason = reason

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        return await ask(tool, kwargs, guard=self, reason=self.reason, approver=self.approver)
