"""Budgets: limits on tokens, wall-clock time and delegations, per agent and per subtree.

A run's budgets form a tree that mirrors the tree of agents. Usage rolls up the tree live:
every model call is charged to its agent and to all of the agent's ancestors, so a
parent's limit covers everything its descendants spend. When a subtree's limit is passed,
every agent running in that subtree is stopped (their histories stay valid) and ends with
stop reason ``budget``; the rest of the run goes on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from swarm.types import StopReason, Usage, UsageNode

if TYPE_CHECKING:
    from swarm.control import Control

__all__ = ["Budget", "BudgetLimits", "UsageNode"]

_ZERO = Usage()  # frozen, so one instance serves every new node


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    """Limits for one agent and everything it delegates to; ``None`` means no limit.

    ``tokens`` bounds input plus output tokens, ``seconds`` wall-clock time,
    ``delegations`` the sub-agent calls, ``depth`` how many levels of delegation may open
    below the agent.
    """

    tokens: int | None = None
    seconds: float | None = None
    delegations: int | None = None
    depth: int | None = None

    @property
    def unlimited(self) -> bool:
        return (
            self.tokens is None
            and self.seconds is None
            and self.delegations is None
            and self.depth is None
        )


@dataclass(eq=False, slots=True)
class Budget:
    """One agent's node in the run's budget tree.

    ``charge`` records a model call here and in every ancestor; ``exceeded`` says why this
    agent may not go on (its own or an ancestor's limit), or ``None``. Agents attach their
    run's ``Control`` so a tripped subtree can stop them at once.
    """

    path: str
    limits: BudgetLimits = field(default_factory=BudgetLimits)
    parent: Budget | None = None
    model: str | None = None
    clock: Callable[[], float] = time.monotonic
    usage: Usage = _ZERO
    total: Usage = _ZERO
    iterations: int = 0
    delegations: int = 0
    output_retries: int = 0
    stop_reason: StopReason | None = None
    tripped: str | None = None
    children: list[Budget] = field(default_factory=list)
    started: float = 0.0
    _controls: set[Control] = field(default_factory=set)
    _chain: tuple[Budget, ...] = field(default=(), init=False, repr=False)
    _timed: bool = field(default=False, init=False, repr=False)

    def __post_init__(self) -> None:
        self.started = self.clock()
        self._chain = (self,) if self.parent is None else (self, *self.parent._chain)
        self._timed = any(node.limits.seconds is not None for node in self._chain)

    def child(
        self, path: str, limits: BudgetLimits | None = None, *, model: str | None = None
    ) -> Budget:
        """A node for an agent this one delegates to."""
        node = Budget(path, limits or BudgetLimits(), self, model, self.clock)
        self.children.append(node)
        return node

    def chain(self) -> list[Budget]:
        """This node and its ancestors, nearest first."""
        return list(self._chain)

    @property
    def exceeded(self) -> str | None:
        """Why this agent may not continue, or ``None`` while every limit above it holds."""
        now = self.clock() if self._timed else 0.0  # untimed: no node has seconds
        for node in self._chain:
            if node.tripped is not None:
                return node.tripped
            seconds = node.limits.seconds
            if seconds is not None and now - node.started >= seconds:
                return f"time budget of {seconds:g}s for '{node.path}' is spent"
        return None

    def seconds_left(self) -> float | None:
        """Seconds until the nearest time limit of this agent or an ancestor is spent
        (``None``: no time limit above it). The loop turns this into a deadline on every
        wait, so a long model or tool call cannot outlast the budget."""
        if not self._timed:
            return None
        now = self.clock()
        left = [
            node.started + node.limits.seconds - now
            for node in self._chain
            if node.limits.seconds is not None
        ]
        return min(left)

    def charge(self, usage: Usage, *, iteration: bool = True) -> None:
        """Record one model call (``iteration=False``: a call outside the loop's turns, such
        as a compaction's summary); trip every node whose token limit it passes."""
        self.usage += usage
        if iteration:
            self.iterations += 1
        for node in self._chain:
            node.total += usage
            limit = node.limits.tokens
            if limit is not None and node.tripped is None and node.total.total_tokens > limit:
                node.trip(
                    f"token budget of {limit:,} for '{node.path}' is spent"
                    f" ({node.total.total_tokens:,} used)"
                )

    def count_delegation(self) -> str | None:
        """Record one delegation by this agent; return why it is refused, if it is."""
        for levels, node in enumerate(self._chain, start=1):
            limit = node.limits.delegations
            if limit is not None and node.delegations >= limit:
                return f"delegation budget of {limit} for '{node.path}' is spent"
            depth = node.limits.depth
            if depth is not None and levels > depth:
                return f"delegation depth limit of {depth} below '{node.path}' is reached"
        for node in self._chain:
            node.delegations += 1
        return None

    def count_output_retry(self) -> None:
        """Record one final answer sent back for not meeting its ``output`` schema, here
        and in every ancestor (the retry's model call is charged like any other)."""
        for node in self._chain:
            node.output_retries += 1

    def trip(self, reason: str) -> None:
        """Stop this subtree: every agent running in it ends with stop reason ``budget``."""
        if self.tripped is None:
            self.tripped = reason
        for node in self.walk():
            for control in list(node._controls):
                control.interrupt(StopReason.budget)

    def walk(self) -> list[Budget]:
        nodes = [self]
        for child in self.children:
            nodes += child.walk()
        return nodes

    def attach(self, control: Control) -> None:
        self._controls.add(control)
        if self.exceeded is not None:
            control.interrupt(StopReason.budget)

    def detach(self, control: Control) -> None:
        self._controls.discard(control)

    def report(self) -> UsageNode:
        """This subtree's usage as a tree of frozen nodes."""
        return UsageNode(
            self.path,
            self.usage,
            self.total,
            self.iterations,
            self.delegations,
            self.model,
            self.stop_reason,
            tuple(child.report() for child in self.children),
            self.output_retries,
        )
