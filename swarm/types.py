"""Primitive types shared by messages, events, tools and transports, and the usage tree
a run reports (``UsageNode``, beside the ``Usage`` it is made of)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

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
    awaiting_approval = "awaiting_approval"


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model call, or a sum of several."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )


@dataclass(frozen=True, slots=True)
class UsageNode:
    """What one agent and its subtree spent: a tree a user can print with ``render()``."""

    path: str
    usage: Usage
    total: Usage
    iterations: int
    delegations: int
    model: str | None = None
    stop_reason: StopReason | None = None
    children: tuple[UsageNode, ...] = ()

    def walk(self) -> list[UsageNode]:
        """This node and every descendant, depth first."""
        nodes = [self]
        for child in self.children:
            nodes += child.walk()
        return nodes

    def render(self, cost: Callable[[str | None, Usage], float | None] | None = None) -> str:
        """An indented text tree: per agent its own tokens and its subtree's."""
        lines: list[str] = []

        def visit(node: UsageNode, depth: int) -> None:
            name = node.path.rsplit("/", 1)[-1] or node.path
            text = (
                f"{'  ' * depth}{name}: {node.usage.total_tokens:,} tokens"
                f" ({node.usage.input_tokens:,} in, {node.usage.output_tokens:,} out),"
                f" {plural(node.iterations, 'iteration')}"
            )
            if node.children:
                text += f"; subtree {node.total.total_tokens:,} tokens"
            if cost is not None:
                failed = node.stop_reason not in (None, StopReason.end_turn)
                text += ", " + cost_text(cost(node.model, node.usage), failed=failed)
            if node.stop_reason is not None and node.stop_reason != StopReason.end_turn:
                text += f" [{node.stop_reason.value}]"
            lines.append(text)
            for child in node.children:
                visit(child, depth + 1)

        visit(self, 0)
        return "\n".join(lines)
