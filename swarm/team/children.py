"""Running one sub-agent for a delegation: blocking, in the background, or continued.

A delegation makes a ``ChildRun`` (the sub-agent's agent, context, scope, event sink
and budget node) and runs it to a ``ChildResult``. A blocking delegation waits for it; a
background one hands it to the caller's ``SubAgents`` and returns the path at once. A
finished sub-agent stays known to its caller's run (with the ``agents`` tool), so a
follow-up can continue its context: the same path, the same budget node, a new message.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from swarm.background import Child, ChildResult, SubAgents
from swarm.budget import Budget
from swarm.context.base import ContextStore
from swarm.control import AgentTree
from swarm.errors import ToolError
from swarm.events import SessionEndEvent, StreamEvent, SubAgentEvent
from swarm.loop.agent import Agent
from swarm.scope import RunScope, role_of
from swarm.tools import ToolOutput
from swarm.types import StopReason

__all__ = ["ChildRun", "continue_child", "delegate_to", "restart"]

_ANSWERED = (StopReason.end_turn, StopReason.max_tokens)


@dataclass(slots=True)
class ChildRun:
    """What runs (and later continues) one sub-agent: its agent, its context, its scope
    (path, budget node, sink), and where its events go on their way up (``send``): its
    caller's sink ``up`` and the role's ``on_event`` (as ``role``), and its caller's
    ``subagents``, which keep its last activity. One object for both, as every waiting
    sub-agent of a fan-out holds it."""

    agent: Agent
    store: ContextStore
    scope: RunScope
    budget: Budget
    role: str
    up: Callable[[StreamEvent], None] | None
    tree: AgentTree | None
    on_event: Callable[[str, StreamEvent], None] | None
    subagents: SubAgents | None

    def heard(self) -> bool:
        """Whether ``send`` can pass anything on. When nobody reads the run's events
        (no ``up``, or a ``quiet`` tree, which stays quiet), nothing takes the role's
        events and no ``subagents`` keep its activity, it would do nothing, now or
        later."""
        quiet = self.up is None or (self.tree is not None and self.tree.quiet)
        return not quiet or self.on_event is not None or self.subagents is not None

    def send(self, event: StreamEvent) -> None:
        """Pass one event of the sub-agent's run on: to the caller's stream as a
        ``SubAgentEvent`` while someone reads the run's events (the tree is not
        ``quiet``), to the role's ``on_event``, and as its last activity."""
        up, tree = self.up, self.tree
        if up is not None and (tree is None or not tree.quiet):
            up(event if isinstance(event, SubAgentEvent) else SubAgentEvent(self.path, event))
        if self.on_event is not None and not isinstance(event, SubAgentEvent):
            self.on_event(self.role, event)
        subagents = self.subagents
        if subagents is not None and (child := subagents.children.get(self.path)) is not None:
            child.last_activity = time.time()

    @property
    def path(self) -> str:
        """The sub-agent's path in the run (``lead/reviewer#2``)."""
        return self.scope.path

    def usage(self) -> dict[str, int]:
        """The tokens its subtree spent so far, the cached parts of its input apart."""
        total = self.budget.total
        return {
            "input_tokens": total.input_tokens,
            "output_tokens": total.output_tokens,
            "cache_read_tokens": total.cache_read_tokens,
            "cache_write_tokens": total.cache_write_tokens,
        }

    def cost(self) -> float | None:
        """What its subtree spent so far in dollars (``None``: some of it has no price)."""
        return None if self.budget.total_unpriced else round(self.budget.total_usd, 6)


def failure(path: str, end: SessionEndEvent | None, error: str | None, text: str) -> str:
    """What the caller reads when a sub-agent did not answer."""
    reason = end.stop_reason.value if end is not None else "stopped"
    message = f"Sub-agent '{path}' did not finish ({reason})"
    if error:
        message += f": {error}"
    if text:
        message += f". Its last words: {text}"
    return message + "."


async def _result(run: ChildRun, message: str | None, topic: str) -> ChildResult:
    """Run the sub-agent to its end, passing its events on (``run.send``); how it
    ended. Its time budget (in its scope's budget) is the loop's deadline, as for any
    agent."""
    async with run.agent.run_stream(message, run.store, scope=run.scope) as stream:
        if run.heard():
            async for event in stream:
                run.send(event)
                del event  # not held while the sub-agent waits for its model
        else:  # nothing it says goes anywhere, and never will: only its end counts
            async for event in stream:
                del event
    end, text = stream.session_end, stream.final_text
    details: dict[str, Any] = {
        "path": run.path,
        "topic": topic,
        "stop_reason": end.stop_reason.value if end is not None else "cancelled",
        "usage": run.usage(),
        "cost_usd": run.cost(),
    }
    if end is not None and end.output is not None:  # typed: the JSON is the text
        details["output"] = end.output
    answered = end is not None and end.stop_reason in _ANSWERED
    failed = end.error if end is not None else None
    error = None if failed is None else str(failed) or type(failed).__name__
    return ChildResult(
        text,
        details["stop_reason"],
        details,
        error=None if answered else failure(run.path, end, error, text),
        output=details.get("output"),
    )


def restart(subagents: SubAgents, run: ChildRun) -> Child:
    """Run a background sub-agent of an earlier segment again, from its stored context
    as it stands (``None``: no new message), as a resumed agent does."""
    return subagents.start(_child(run, "", True), _later(run, None, ""))


def _later(run: ChildRun, message: str | None, topic: str) -> Callable[[], Awaitable[ChildResult]]:
    """``_result`` of the sub-agent, to run in the background (a function of its own: a
    lambda in the delegation would give every blocking one three closure cells)."""
    return lambda: _result(run, message, topic)


def _child(run: ChildRun, topic: str, background: bool, started: float | None = None) -> Child:
    started = time.time() if started is None else started
    return Child(run.path, topic, background, started, usage=run.usage, context=run)


def _output(child: Child) -> ToolOutput:
    result = child.result
    assert result is not None
    if result.error is not None:
        raise ToolError(result.error)
    return ToolOutput(result.text, details=result.details)


def _started(child: Child) -> ToolOutput:
    note = {"path": child.path, "status": "running"}
    details = {"path": child.path, "topic": child.topic, "background": True, "status": "running"}
    return ToolOutput(json.dumps(note), details=details)


async def delegate_to(
    run: ChildRun, task: str, topic: str, *, background: bool, subagents: SubAgents | None
) -> ToolOutput:
    """Run a new sub-agent on ``task``: to its end (the result is its answer; a failure
    raises ``ToolError`` saying what happened), or with ``background`` in the caller's
    ``subagents`` (the result is its path and ``running``)."""
    if background:
        if subagents is None:
            raise ToolError(
                "This agent cannot run sub-agents in the background (it has no 'agents'"
                " tool); delegate without background."
            )
        child = _child(run, topic, background)
        subagents.start(child, _later(run, task, topic))
        return _started(child)
    # A blocking one is known to its caller only once it ended: its record is made then
    # (not held by every waiting sub-agent of a fan-out), with the time it started.
    started = time.time()
    result = await _result(run, task, topic)
    child = _child(run, topic, background, started)
    child.result = result
    if subagents is not None:  # kept, so that a follow-up can continue it
        subagents.add(child)
        child.collected = True
        subagents.finish(child)
    return _output(child)


async def continue_child(
    subagents: SubAgents | None, path: str, message: str, *, role: str, background: bool
) -> ToolOutput:
    """Continue the finished sub-agent at ``path`` with ``message``: its stored context,
    its path and its budget node. Raises ``ToolError`` when it is unknown, still
    running, or of another role than ``role`` (when given)."""
    child = subagents.children.get(path) if subagents is not None else None
    if subagents is None or child is None or not isinstance(child.context, ChildRun):
        known = ", ".join(sorted(subagents.children)) if subagents is not None else ""
        raise ToolError(
            f"No sub-agent '{path}' of this run to continue (known: {known or 'none'})."
        )
    if role and role_of(path) != role:
        raise ToolError(f"'{path}' is not a {role} sub-agent; continue it with its own tool.")
    if child.status == "running":
        raise ToolError(f"'{path}' is still running: wait for it, or steer it.")
    run = child.context
    child.status, child.result, child.collected = "running", None, False
    child.background, child.last_activity = background, time.time()
    child.again()
    if background:
        subagents.start(child, _later(run, message, child.topic))
        return _started(child)
    child.result = await _result(run, message, child.topic)
    child.collected = True
    subagents.finish(child)
    return _output(child)
