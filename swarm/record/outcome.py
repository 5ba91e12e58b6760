"""What a run did: the outcome of a segment, from its events and its calls.

``CallTally`` counts the decisions of a run's calls, ``EventTally`` follows its events (the
end, delegations, compactions, errors), and ``build_outcome`` makes the
``RunOutcome`` whose ``summary()`` becomes ``summary.json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarm.budget import Budget, UsageNode
from swarm.events import (
    ContextCompacted,
    Error,
    SessionEndEvent,
    StreamEvent,
    SubAgentEvent,
)
from swarm.messages import Message, ToolResultBlock
from swarm.models.registry import estimate_cost
from swarm.record.changes import WorkspaceChanges
from swarm.scenario.spec import Scenario
from swarm.scope import CallRecord
from swarm.types import StopReason, Usage

__all__ = [
    "CallTally",
    "EventTally",
    "RunOutcome",
    "build_outcome",
    "node_cost",
    "tree_cost",
    "usage_dict",
]


@dataclass(slots=True)
class CallTally:
    """A ``CallObserver`` counting decisions, and remembering denied calls by path."""

    allowed: int = 0
    denied: int = 0
    invalid: int = 0
    denied_calls: list[tuple[str, str, str, str | None]] = field(default_factory=list)

    async def on_decision(self, call: CallRecord) -> None:
        if call.decision == "allow":
            self.allowed += 1
        elif call.decision == "deny":
            self.denied += 1
            self.denied_calls.append((call.path, call.tool, call.reason or "", call.rule))
        else:
            self.invalid += 1

    async def on_finish(self, call: CallRecord, result: ToolResultBlock, duration: float) -> None:
        return None


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What a run did: how it ended, what it cost, what was allowed and denied.

    ``final_text`` is the entry agent's result (``SessionEndEvent.final_text``: after an
    interrupt or an error mid-turn, the text streamed so far); ``iterations`` counts the
    entry agent's model calls in this segment (0 when the run was cut before its end).
    ``outputs`` holds the typed answers (``output:`` roles) by agent path, the entry
    agent's under its own path.
    """

    run_id: str
    scenario: str
    record_dir: Path
    workspace: Path
    stop_reason: StopReason
    final_text: str
    usage: Usage
    usage_tree: UsageNode | None
    cost: float | None
    allowed: int
    denied: int
    denied_calls: tuple[tuple[str, str, str, str | None], ...]
    """Each denied call: agent path, tool, reason, and the policy rule's id (if a rule)."""
    delegations: tuple[str, ...]
    compactions: int
    errors: tuple[str, ...]
    duration: float
    root_session: str
    sessions: Mapping[str, str]
    interrupted: bool = False
    delegation_ends: Mapping[str, str] = field(default_factory=dict)
    agent_errors: tuple[tuple[str, str], ...] = ()
    changes: WorkspaceChanges = field(default_factory=WorkspaceChanges)
    iterations: int = 0
    outputs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def completed_delegations(self) -> tuple[str, ...]:
        """The paths of the delegations whose sub-agent finished and answered its caller
        (it ended with ``end_turn`` or ``max_tokens``, as the delegation tool counts it)."""
        done = (StopReason.end_turn.value, StopReason.max_tokens.value)
        return tuple(p for p in self.delegations if self.delegation_ends.get(p) in done)

    def summary(self) -> dict[str, Any]:
        """The JSON document written as ``summary.json``."""
        return {
            "run_id": self.run_id,
            "scenario": self.scenario,
            "workspace": str(self.workspace),
            "stop_reason": self.stop_reason.value,
            "interrupted": self.interrupted,
            "final_text": self.final_text,
            "usage": usage_dict(self.usage),
            "cost_usd": self.cost,
            "calls": {"allowed": self.allowed, "denied": self.denied},
            "denied_calls": [
                {"path": path, "tool": tool, "reason": reason, "rule": rule}
                for path, tool, reason, rule in self.denied_calls
            ],
            "delegations": list(self.delegations),
            "delegation_ends": dict(self.delegation_ends),
            "compactions": self.compactions,
            "errors": list(self.errors),
            "files": {kind: self.changes.of_kind(kind) for kind in ("added", "changed", "deleted")},
            "duration_seconds": round(self.duration, 3),
            "root_session": self.root_session,
            "sessions": dict(self.sessions),
            "usage_tree": _tree_to_dict(self.usage_tree) if self.usage_tree else None,
            "outputs": dict(self.outputs),
        }


def usage_dict(usage: Usage) -> dict[str, int]:
    """``usage`` as records write it: input and output, and the cache parts when any."""
    out = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    if usage.cached:
        out["cache_read_tokens"] = usage.cache_read_tokens
        out["cache_write_tokens"] = usage.cache_write_tokens
        out["cache_write_1h_tokens"] = usage.cache_write_1h_tokens
    return out


def _tree_to_dict(node: UsageNode) -> dict[str, Any]:
    return {
        "path": node.path,
        "model": node.model,
        **usage_dict(node.usage),
        "subtree_tokens": node.total.total_tokens,
        "iterations": node.iterations,
        "stop_reason": node.stop_reason.value if node.stop_reason else None,
        "cost_usd": node_cost(node),
        "subtree_cost_usd": tree_cost(node),
        "children": [_tree_to_dict(child) for child in node.children],
    }


def _cost(model: str | None, usage: Usage) -> float | None:
    return estimate_cost(model, usage) if model else None


def node_cost(node: UsageNode) -> float | None:
    """What one agent's own model calls cost: as charged during the run (at the run's
    prices, ``models:`` overrides included), else (a record written before runs kept
    dollars) at the shipped prices; ``None`` when unknown."""
    if node.cost_usd is not None:
        return node.cost_usd
    return _cost(node.model, node.usage)


def tree_cost(node: UsageNode | None) -> float | None:
    """The dollars of a usage tree; ``None`` when any agent in it has no known cost (a
    partial sum would read as the whole bill)."""
    if node is None:
        return None
    if node.total_cost_usd is not None:
        return node.total_cost_usd
    total = 0.0
    for n in node.walk():
        cost = node_cost(n) if n.usage.total_tokens else 0.0
        if cost is None:
            return None
        total += cost
    return total


@dataclass(slots=True)
class EventTally:
    """What the run's events say: the entry agent's end (its result, with the final
    text), delegations (and how each sub-agent ended), compactions, and the errors (every
    ``Error`` ends its agent; the entry agent's have the path ``""``)."""

    end: SessionEndEvent | None = None
    delegations: dict[str, None] = field(default_factory=dict)
    compactions: int = 0
    errors: list[str] = field(default_factory=list)
    agent_errors: list[tuple[str, str]] = field(default_factory=list)
    ends: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)  # typed answers; "" the entry's

    def finish_from(self, history: list[Message]) -> None:
        """End as the stored history did (its last message is the final answer)."""
        text = history[-1].text if history else ""
        self.end = SessionEndEvent(StopReason.end_turn, Usage(), None, final_text=text)

    def see(self, event: StreamEvent) -> None:
        """Take in one event of the run's stream."""
        inner = event
        if isinstance(event, SubAgentEvent):
            self.delegations.setdefault(event.path)
            inner = event.event
        if isinstance(inner, ContextCompacted):
            self.compactions += 1
        elif isinstance(inner, Error):
            path = event.path if isinstance(event, SubAgentEvent) else ""
            self.errors.append(f"{path}: {inner.message}" if path else inner.message)
            self.agent_errors.append((path, inner.message))
        elif isinstance(inner, SessionEndEvent):
            if isinstance(event, SubAgentEvent):
                self.ends[event.path] = inner.stop_reason.value
            else:
                self.end = inner
            if inner.output is not None:
                self.outputs[event.path if isinstance(event, SubAgentEvent) else ""] = inner.output


def build_outcome(
    scenario: Scenario,
    *,
    run_id: str,
    record_dir: Path,
    workspace: Path,
    final: EventTally,
    tally: CallTally,
    budget: Budget | None,
    duration: float,
    root_session: str,
    sessions: Mapping[str, str],
    changes: WorkspaceChanges | None = None,
    cut_text: str = "",
) -> RunOutcome:
    """The outcome of a segment. Its final text is the entry agent's result's; for a
    run cut before its end event (Ctrl-C), ``cut_text``: the text of the model's last
    whole turn, as the run's stream held it, and its usage what the run's ``budget``
    counted."""
    end = final.end
    tree = end.usage_tree if end is not None else (budget.report() if budget is not None else None)
    usage = tree.total if tree is not None else (end.total_usage if end else Usage())
    return RunOutcome(
        run_id=run_id,
        scenario=scenario.name,
        record_dir=record_dir,
        workspace=workspace,
        stop_reason=end.stop_reason if end is not None else StopReason.cancelled,
        final_text=end.final_text if end is not None else cut_text,
        usage=usage,
        usage_tree=tree,
        cost=tree_cost(tree),
        allowed=tally.allowed,
        denied=tally.denied,
        denied_calls=tuple(tally.denied_calls),
        delegations=tuple(final.delegations),
        compactions=final.compactions,
        errors=tuple(final.errors),
        duration=duration,
        root_session=root_session,
        sessions=dict(sessions),
        interrupted=end is None,
        delegation_ends=dict(final.ends),
        agent_errors=tuple(final.agent_errors),
        changes=changes or WorkspaceChanges(),
        iterations=end.iterations if end is not None else 0,
        outputs={
            (path or (tree.path if tree is not None else "")): value
            for path, value in final.outputs.items()
        },
    )
