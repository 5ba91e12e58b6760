"""The state of every agent of a run, kept from its events: the one place that reads them.

``AgentBoard.update`` takes each event of the run (sub-agents' events arrive wrapped in
``SubAgentEvent``) and keeps, per agent: what it is doing now (thinking, calling a tool
with its arguments, waiting on a sub-agent), when it started and ended, iterations,
tokens, denials, compactions, the latest progress line of a running tool, and how it
ended (with the error's reason). ``AgentState.activity`` says it in a few words. The live
view, the plain lines and the end summary all read this board, so a new event type is
handled here once.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from swarm._visible import visible
from swarm.events import (
    ApprovalRequested,
    ContextCompacted,
    Error,
    IterationEnd,
    ReasoningDelta,
    SessionEndEvent,
    StreamEvent,
    SubAgentEvent,
    TextDelta,
    ToolCallStart,
    ToolInputDelta,
    ToolOutputDelta,
    ToolResult,
    ToolUseStart,
)
from swarm.scenario.script import role_of

__all__ = ["DENIED_PREFIX", "AgentBoard", "AgentState", "one_line"]

DENIED_PREFIX = "Permission denied"
FLASH_SECONDS = 3.0
_RULE = re.compile(r"\(rule: ([^)]*)\)")
_ENDS = {"end_turn": "done", "max_tokens": "done", "budget": "budget", "cancelled": "cancelled"}
_MAIN_ARGUMENT = ("command", "path", "task", "pattern", "query", "question", "url")


def one_line(text: str, width: int = 80) -> str:
    """The first non-empty line of ``text``, cut to ``width`` characters, with what a
    model or a tool wrote that could act on the terminal or hide text made visible
    (``visible``)."""
    line = next(
        (part.strip() for part in text.replace("\r", "\n").splitlines() if part.strip()), ""
    )
    line = visible(line)
    return line if len(line) <= width else line[: width - 1] + "…"


@dataclass(slots=True)
class _Call:
    name: str
    arguments: str = ""

    def label(self) -> str:
        """``shell(python3 -m pytest -q)``: the tool and its main argument, when known."""
        try:
            parsed = json.loads(self.arguments) if self.arguments else None
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict) or not parsed:
            return visible(self.name)
        key = next((k for k in _MAIN_ARGUMENT if isinstance(parsed.get(k), str)), None)
        value = parsed[key] if key else json.dumps(parsed, default=str)
        return f"{visible(self.name)}({one_line(str(value), 48)})"


@dataclass(slots=True)
class AgentState:
    """One agent as the board knows it."""

    path: str
    status: str = "starting"
    iterations: int = 0
    tokens: int = 0
    cached: int = 0  # of the input tokens, those read from the provider's prompt cache
    cost_usd: float | None = None  # its subtree's dollars, known once it ends
    denied: int = 0
    compactions: int = 0
    last_denial: str = ""
    finished: str | None = None
    error: str = ""
    children: list[str] = field(default_factory=list)
    started: float = 0.0
    ended: float | None = None
    progress: str = ""
    denied_at: float | None = None
    calls: dict[str, _Call] = field(default_factory=dict)
    waiting: dict[str, str] = field(default_factory=dict)

    @property
    def role(self) -> str:
        """The role of the agent (its path's last part without ``#n``)."""
        return role_of(self.path)

    @property
    def name(self) -> str:
        """The last part of the path (``tester#1``)."""
        return self.path.rsplit("/", 1)[-1]

    def elapsed(self, now: float) -> float:
        """Seconds since the agent started (until it ended)."""
        return max(0.0, (self.ended if self.ended is not None else now) - self.started)

    def denial_rule(self) -> str:
        """The rule (or, without one, the reason) of the latest denial."""
        found = _RULE.search(self.last_denial)
        if found:
            return visible(found.group(1))
        return one_line(self.last_denial.split(":", 1)[-1].split(". The call")[0], 50)


class AgentBoard:
    """The state of every agent of a run, updated from its events.

    ``clock`` gives the time in seconds (``time.monotonic`` unless told), so elapsed times
    and the few seconds a denial stays shown can be tested without waiting.
    """

    def __init__(
        self,
        root: str,
        roles: frozenset[str] = frozenset(),
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.root = root
        self.roles = roles
        self.clock = clock
        self.agents: dict[str, AgentState] = {root: AgentState(root, started=clock())}

    def agent(self, path: str) -> AgentState:
        """The state of the agent at ``path``, created (under its parent) when new."""
        state = self.agents.get(path)
        if state is None:
            state = self.agents[path] = AgentState(path, started=self.clock())
            if path != self.root:
                parent = path.rsplit("/", 1)[0] if "/" in path else self.root
                self.agent(parent).children.append(path)
        return state

    def update(self, event: StreamEvent) -> tuple[AgentState, StreamEvent]:
        """Apply one event; returns the agent it concerns and the unwrapped event."""
        path = self.root
        while isinstance(event, SubAgentEvent):
            path, event = event.path, event.event
        state = self.agent(path)
        match event:
            case TextDelta() | ReasoningDelta():
                state.status = "thinking"
            case ToolUseStart(tool_use_id=call_id, name=name):
                state.calls[call_id] = _Call(name)
                state.status = "calling"
            case ToolInputDelta(tool_use_id=call_id, partial_json=delta):
                if call_id in state.calls:
                    state.calls[call_id].arguments += delta
            case ToolOutputDelta(delta=delta):
                line = one_line(delta.splitlines()[-1] if delta.strip() else "", 100)
                state.progress = line or state.progress
            case ApprovalRequested(tool_use_id=call_id, name=name, request_id=number):
                call = state.calls.get(call_id)
                state.waiting[call_id] = f"{call.label() if call else visible(name)} #{number}"
            case ToolCallStart(tool_use_id=call_id):
                state.waiting.pop(call_id, None)
            case ToolResult(tool_use_id=call_id, is_error=is_error, content=content):
                state.waiting.pop(call_id, None)
                state.calls.pop(call_id, None)
                if not state.calls:
                    state.progress = ""
                if is_error and content.startswith(DENIED_PREFIX):
                    state.denied += 1
                    state.last_denial = content
                    state.denied_at = self.clock()
                state.status = "thinking"
            case IterationEnd(usage=usage):
                state.iterations += 1
                state.tokens += usage.total_tokens
                state.cached += usage.cache_read_tokens
                state.status = "working"
            case ContextCompacted():
                state.compactions += 1
            case Error():
                state.error = one_line(event.message, 100)
            case SessionEndEvent(stop_reason=reason, usage_tree=tree):
                if tree is not None:
                    state.cost_usd = tree.total_cost_usd
                self._end(state, reason.value)
            case _:
                pass
        return state, event

    def _end(self, state: AgentState, reason: str) -> None:
        state.finished = reason
        state.ended = self.clock()
        state.calls.clear()
        state.waiting.clear()
        state.progress = ""
        state.status = "done" if reason == "end_turn" else f"stopped: {reason}"

    def stop_unfinished(self, reason: str = "cancelled") -> None:
        """Mark every agent that has not ended as ended for ``reason`` (after Ctrl-C,
        no agent is left showing that it works)."""
        for state in self.agents.values():
            if state.finished is None:
                self._end(state, reason)

    def activity(self, state: AgentState) -> str:
        """What the agent is doing, in a few words: ``thinking``, ``calling
        shell(pytest -q)``, ``waiting for approval: shell(make) #1``, ``waiting on
        tester#1``, ``denied: <rule>`` (for a few
        seconds after a denial), ``done``, ``error: <reason>``, ``budget``, ``cancelled``;
        what the model chose in it (a tool's name, an argument) made ``visible``."""
        return visible(self._activity(state))

    def _activity(self, state: AgentState) -> str:
        if state.finished is not None:
            if state.error or state.finished == "error":
                return f"error: {state.error}" if state.error else "error"
            return _ENDS.get(state.finished, state.finished)
        now = self.clock()
        if state.denied_at is not None and now - state.denied_at < FLASH_SECONDS:
            return f"denied: {state.denial_rule()}"
        if state.waiting:
            labels = list(state.waiting.values())
            more = f" +{len(labels) - 1}" if len(labels) > 1 else ""
            return f"waiting for approval: {labels[0]}{more}"
        waiting = [self.agents[c].name for c in state.children if self.agents[c].finished is None]
        if waiting:
            more = f" +{len(waiting) - 2}" if len(waiting) > 2 else ""
            return "waiting on " + ", ".join(waiting[:2]) + more
        if state.calls:
            labels = [call.label() for call in state.calls.values()]
            more = f" +{len(labels) - 1}" if len(labels) > 1 else ""
            return f"calling {labels[0]}{more}"
        return "starting" if state.status == "starting" else "thinking"

    def errors(self) -> list[tuple[str, str]]:
        """``(path, reason)`` of every agent that ended in an error."""
        return [
            (s.path, s.error or "error")
            for s in self.agents.values()
            if s.finished == "error" or (s.finished is not None and s.error)
        ]
