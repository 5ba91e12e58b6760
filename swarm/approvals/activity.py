"""Knowing when a run with held calls can go no further.

``Activity`` follows a run's event stream (sub-agents' events included): which agents are
in a model turn, and which tool calls other than delegations are running. A run whose
held calls are waiting and in which nothing else runs is stuck until someone answers;
``until_stuck`` returns when that has stayed so for a moment (a call between its model
turn and its start runs its guards unseen).
"""

from __future__ import annotations

import anyio

from swarm.approvals.approver import RunApprover
from swarm.events import (
    IterationEnd,
    SessionEndEvent,
    StreamEvent,
    SubAgentEvent,
    ToolCallStart,
    ToolResult,
    TurnStart,
)

__all__ = ["Activity", "until_stuck"]

_QUIET_CHECKS = 5  # looks, _LOOK apart, with nothing running and nothing new
_LOOK = 0.1


class Activity:
    """What is running in a run, kept from its events. ``delegations`` are the tool
    names that start sub-agents (their calls wait on agents, which are followed
    themselves)."""

    def __init__(self, delegations: frozenset[str]) -> None:
        self.delegations = delegations
        self.turns: set[str] = set()
        self.calls: set[tuple[str, str]] = set()
        self.seen = 0

    def see(self, event: StreamEvent, root: str) -> None:
        """Take one event of the run's stream (``root``: the entry agent's path)."""
        self.seen += 1
        path = root
        while isinstance(event, SubAgentEvent):
            path, event = event.path, event.event
        match event:
            case TurnStart():
                self.turns.add(path)
            case IterationEnd():
                self.turns.discard(path)
            case ToolCallStart(tool_use_id=call_id, name=name) if name not in self.delegations:
                self.calls.add((path, call_id))
            case ToolResult(tool_use_id=call_id):
                self.calls.discard((path, call_id))
            case SessionEndEvent():
                self.turns.discard(path)
                self.calls = {c for c in self.calls if c[0] != path}
            case _:
                pass

    @property
    def busy(self) -> bool:
        """Whether a model turn or a tool call (not a delegation) is running."""
        return bool(self.turns or self.calls)


async def until_stuck(activity: Activity, approver: RunApprover) -> None:
    """Return once calls are held and nothing else has run for a few looks in a row."""
    quiet, last = 0, -1
    while True:
        if approver.waiting and not activity.busy and activity.seen == last:
            quiet += 1
            if quiet >= _QUIET_CHECKS:
                return
        else:
            quiet = 0
        last = activity.seen
        await anyio.sleep(_LOOK)
