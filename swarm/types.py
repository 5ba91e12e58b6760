"""Primitive types shared by messages, events, tools and transports."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypeAlias

__all__ = ["StopReason", "ToolCallID", "ToolName", "Usage"]

ToolName: TypeAlias = str
ToolCallID: TypeAlias = str


class StopReason(StrEnum):
    """Why a model turn or a whole session ended."""

    end_turn = "end_turn"
    tool_use = "tool_use"
    max_tokens = "max_tokens"
    error = "error"
    cancelled = "cancelled"
    budget = "budget"
    max_iterations = "max_iterations"


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
