"""Primitive types shared by messages, events, tools and transports, and the usage tree
a run reports (``UsageNode``, beside the ``Usage`` it is made of)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar, TypeAlias

from swarm._text import cost_text, plural

__all__ = ["StopReason", "ToolCallID", "ToolName", "Usage", "UsageNode"]

ToolName: TypeAlias = str
ToolCallID: TypeAlias = str


class StopReason(StrEnum):
    """Why a model turn or a whole session ended (``awaiting_approval``: a run stopped
    with calls held until a person answers them)."""

    end_turn = "end_turn"
    tool_use = "tool_use"
    max_tokens = "max_tokens"
    error = "error"
    cancelled = "cancelled"
    budget = "budget"
    max_iterations = "max_iterations"
    invalid_output = "invalid_output"
    awaiting_approval = "awaiting_approval"


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model call, or a sum of several.

    ``input_tokens`` counts the whole prompt, cached parts included (they all fill the
    context window); ``cache_read_tokens`` and ``cache_write_tokens`` say how much of it
    was read from the provider's prompt cache or written to it, and
    ``cache_write_1h_tokens`` how much of the write was kept for an hour (the rest for
    five minutes). Each part has its own price: see ``ModelSpec.cost``.
    """

    SPARSE_FIELDS: ClassVar[frozenset[str]] = frozenset(
        ("cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens")
    )  # written to records only when non-zero

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    @property
    def uncached_input_tokens(self) -> int:
        """The input tokens neither read from nor written to a cache (full price)."""
        return max(0, self.input_tokens - self.cache_read_tokens - self.cache_write_tokens)

    @property
    def cached(self) -> bool:
        """Whether any part of the prompt was read from or written to a cache."""
        return bool(self.cache_read_tokens or self.cache_write_tokens)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_write_1h_tokens + other.cache_write_1h_tokens,
        )

    def parts_text(self) -> str:
        """``1,200 in (900 cache read, 100 cache write), 40 out``: the parts a bill has."""
        text = f"{self.input_tokens:,} in"
        if self.cached:
            text += (
                f" ({self.cache_read_tokens:,} cache read, {self.cache_write_tokens:,} cache write)"
            )
        return f"{text}, {self.output_tokens:,} out"


@dataclass(frozen=True, slots=True)
class UsageNode:
    """What one agent and its subtree spent: a tree a user can print with ``render()``.

    ``cost_usd`` is the agent's own model calls at list prices and ``total_cost_usd`` its
    subtree's (so a parent's total is its own cost plus its children's totals); either is
    ``None`` when some usage in it has no known price. ``output_retries`` counts the final
    answers of the subtree that did not meet their ``output`` schema and were sent back to
    be fixed.
    """

    path: str
    usage: Usage
    total: Usage
    iterations: int
    delegations: int
    model: str | None = None
    stop_reason: StopReason | None = None
    children: tuple[UsageNode, ...] = ()
    cost_usd: float | None = None
    total_cost_usd: float | None = None
    output_retries: int = 0

    def walk(self) -> list[UsageNode]:
        """This node and every descendant, depth first."""
        nodes = [self]
        for child in self.children:
            nodes += child.walk()
        return nodes

    def render(self, cost: Callable[[str | None, Usage], float | None] | bool | None = None) -> str:
        """An indented text tree: per agent its own tokens (with their cache parts) and its
        subtree's; with ``cost`` (``True``: the node's own ``cost_usd``; a function of
        model and usage: its answer) the dollars too, ``cost unknown`` when unpriced."""
        lines: list[str] = []

        def visit(node: UsageNode, depth: int) -> None:
            name = node.path.rsplit("/", 1)[-1] or node.path
            text = (
                f"{'  ' * depth}{name}: {node.usage.total_tokens:,} tokens"
                f" ({node.usage.parts_text()}),"
                f" {plural(node.iterations, 'iteration')}"
            )
            if node.children:
                text += f"; subtree {node.total.total_tokens:,} tokens"
            if cost is not None and cost is not False:
                failed = node.stop_reason not in (None, StopReason.end_turn)
                own = node.cost_usd if cost is True else cost(node.model, node.usage)
                text += ", " + cost_text(own, failed=failed)
                both_unknown = own is None and node.total_cost_usd is None  # said once
                if node.children and cost is True and not both_unknown:
                    text += f" (subtree {cost_text(node.total_cost_usd, failed=failed)})"
            if node.output_retries:
                text += f", {plural(node.output_retries, 'output retry', 'output retries')}"
            if node.stop_reason is not None and node.stop_reason != StopReason.end_turn:
                text += f" [{node.stop_reason.value}]"
            lines.append(text)
            for child in node.children:
                visit(child, depth + 1)

        visit(self, 0)
        return "\n".join(lines)
