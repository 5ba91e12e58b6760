"""Budgets: limits on tokens, dollars, wall-clock time and delegations, per agent and per
subtree.

A run's budgets form a tree that mirrors the tree of agents. Usage rolls up the tree live:
every model call is charged to its agent and to all of the agent's ancestors, so a
parent's limit covers everything its descendants spend. When a subtree's limit is passed,
every agent running in that subtree is stopped (their histories stay valid) and ends with
stop reason ``budget``; the rest of the run goes on.

Dollars are charged at each agent's model's prices (``ModelSpec.cost``, every part of the
usage at its own price; the run's ``ModelRegistry`` with any ``models:`` overrides). A
dollar limit is kept before the money is spent: ``reserve`` holds a request's worst case
against every dollar budget above the agent and refuses it (tripping the budget it would
cross) when one would be passed; ``settle`` swaps the hold for what the request cost.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from swarm.models.registry import ModelRegistry, ModelSpec, default_registry
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
    below the agent, ``usd`` the dollars spent at list prices.
    """

    tokens: int | None = None
    seconds: float | None = None
    delegations: int | None = None
    depth: int | None = None
    usd: float | None = None

    @property
    def unlimited(self) -> bool:
        """Whether no limit is set."""
        return (
            self.tokens is None
            and self.seconds is None
            and self.delegations is None
            and self.depth is None
            and self.usd is None
        )


@dataclass(eq=False, slots=True)
class Budget:
    """One agent's node in the run's budget tree.

    ``charge`` records a model call here and in every ancestor (its dollars at the prices
    of ``model`` in ``registry``, which children share); ``exceeded`` says why this agent
    may not go on (its own or an ancestor's limit), or ``None``. Agents attach their run's
    ``Control`` so a tripped subtree can stop them at once.
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
    registry: ModelRegistry = field(default=default_registry, kw_only=True)
    usd: float = 0.0  # this agent's own dollars, priced parts only
    total_usd: float = 0.0  # the subtree's
    reserved_usd: float = 0.0  # held for the subtree's requests in flight
    unpriced: bool = False  # some of this agent's usage has no known price
    total_unpriced: bool = False
    # The runs attached (``attach``): nearly always one, so no set for it (a set would be
    # one more object held by every waiting sub-agent of a fan-out).
    _control: Control | None = None
    _more_controls: set[Control] | None = None
    _chain: tuple[Budget, ...] = field(default=(), init=False, repr=False)
    _timed: bool = field(default=False, init=False, repr=False)
    _spec: ModelSpec | None = field(default=None, init=False, repr=False)
    _dollars: tuple[Budget, ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        self.started = self.clock()
        limits, parent = self.limits, self.parent
        timed, dollars = limits.seconds is not None, (self,) if limits.usd is not None else ()
        if parent is None:
            self._chain, self._timed, self._dollars = (self,), timed, dollars
        else:  # what the parent worked out for its own chain, and this node
            self._chain = (self, *parent._chain)
            self._timed, self._dollars = timed or parent._timed, dollars + parent._dollars
        self._spec = self.registry.lookup(self.model) if self.model else None

    def child(
        self, path: str, limits: BudgetLimits | None = None, *, model: str | None = None
    ) -> Budget:
        """A node for an agent this one delegates to."""
        node = Budget(
            path, limits or BudgetLimits(), self, model, self.clock, registry=self.registry
        )
        self.children.append(node)
        return node

    @property
    def spec(self) -> ModelSpec | None:
        """What the registry knows of this agent's model (``None``: nothing)."""
        return self._spec

    @property
    def dollar_limited(self) -> bool:
        """Whether a dollar budget applies to this agent (its own or an ancestor's)."""
        return bool(self._dollars)

    def unpriced_under_dollars(self) -> str | None:
        """Why this agent may not run at all: a dollar budget applies and its model has no
        price (the run could not keep the budget); ``None`` when it may."""
        if not self._dollars or (self._spec is not None and self._spec.priced):
            return None
        node = self._dollars[0]
        return (
            f"the dollar budget of ${node.limits.usd:g} for '{node.path}' cannot be kept:"
            f" model {self.model or '(unnamed)'!r} of '{self.path}' has no price (set one"
            " under `models:` in the team or scenario file)"
        )

    def reserve(self, input_tokens: int, max_output_tokens: int) -> float | str:
        """Hold the worst case of a request (``input_tokens`` at the highest input price,
        ``max_output_tokens`` at the output price) against every dollar budget on the
        path; return the amount held, or why the request may not be sent (the budget it
        would cross is then tripped, stopping its subtree). Holds nothing when no dollar
        budget applies."""
        if not self._dollars:
            return 0.0
        spec = self._spec
        worst = spec.worst_case(input_tokens, max_output_tokens) if spec is not None else None
        if worst is None:
            return self.unpriced_under_dollars() or "the model has no price"
        for node in self._dollars:
            limit = node.limits.usd
            assert limit is not None
            committed = node.total_usd + node.reserved_usd
            if committed + worst > limit:
                reason = (
                    f"dollar budget of ${limit:g} for '{node.path}' would be exceeded by"
                    f" ${committed + worst - limit:.4f}: ${node.total_usd:.4f} spent,"
                    f" ${node.reserved_usd:.4f} held for requests in flight, and this request"
                    f" may cost up to ${worst:.4f}"
                )
                node.trip(reason)
                return reason
        for node in self._dollars:
            node.reserved_usd += worst
        return worst

    def release(self, held: float) -> None:
        """Give back what ``reserve`` held (the request failed before its usage came)."""
        if held:
            for node in self._dollars:
                node.reserved_usd = max(0.0, node.reserved_usd - held)

    def settle(self, held: float, usage: Usage, *, iteration: bool = True) -> None:
        """Release what ``reserve`` held and charge what the request cost (``iteration``
        as for ``charge``)."""
        self.release(held)
        self.charge(usage, iteration=iteration)

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
        spec = self._spec
        cost = spec.cost(usage) if spec is not None else None
        unpriced = cost is None and usage.total_tokens > 0
        if unpriced:
            self.unpriced = True
        else:
            self.usd += cost or 0.0
        for node in self._chain:
            node.total += usage
            if unpriced:
                node.total_unpriced = True
            else:
                node.total_usd += cost or 0.0
            limit = node.limits.tokens
            if limit is not None and node.tripped is None and node.total.total_tokens > limit:
                node.trip(
                    f"token budget of {limit:,} for '{node.path}' is spent"
                    f" ({node.total.total_tokens:,} used)"
                )
            usd = node.limits.usd
            if usd is not None and node.tripped is None and node.total_usd > usd:
                node.trip(
                    f"dollar budget of ${usd:g} for '{node.path}' is spent"
                    f" (${node.total_usd:.4f} used)"
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
            for control in node._attached():
                control.interrupt(StopReason.budget)

    def walk(self) -> list[Budget]:
        """This node and every descendant, depth first."""
        nodes = [self]
        for child in self.children:
            nodes += child.walk()
        return nodes

    def attach(self, control: Control) -> None:
        """Let a trip of this node's subtree stop the run ``control`` controls."""
        if self._control is None:
            self._control = control
        elif self._control is not control:
            if self._more_controls is None:
                self._more_controls = set()
            self._more_controls.add(control)
        if self.exceeded is not None:
            control.interrupt(StopReason.budget)

    def detach(self, control: Control) -> None:
        """Undo ``attach``."""
        if self._control is control:
            self._control = None
        elif self._more_controls is not None:
            self._more_controls.discard(control)

    def _attached(self) -> list[Control]:
        """The runs attached to this node."""
        attached = [] if self._control is None else [self._control]
        return attached + list(self._more_controls or ())

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
            None if self.unpriced else self.usd,
            None if self.total_unpriced else self.total_usd,
            self.output_retries,
        )
