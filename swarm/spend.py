"""What a request may cost, held against the dollar budgets above an agent before it is
sent (``Budget.reserve``), and the estimate of its size that the hold rests on."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from swarm.budget import Budget
from swarm.errors import BudgetExceeded
from swarm.messages import Message, block_to_dict
from swarm.models.registry import DEFAULT_MAX_OUTPUT_TOKENS
from swarm.tools import Tool

__all__ = ["CHARS_PER_TOKEN_LOW", "hold_request", "request_tokens"]

CHARS_PER_TOKEN_LOW = 3
"""Characters per token the hold assumes: fewer than the usual four, so the estimate of a
request's input errs high (code, JSON and non-English text pack fewer characters)."""


def request_tokens(messages: Sequence[Message], tools: Sequence[Tool[Any]], system: str) -> int:
    """A high estimate of the input tokens of a request: its JSON size over
    ``CHARS_PER_TOKEN_LOW``."""
    size = len(system)
    for message in messages:
        size += len(json.dumps([block_to_dict(b) for b in message.content]))
    for tool in tools:
        size += len(tool.name) + len(tool.description) + len(json.dumps(tool.input_schema))
    return max(1, -(-size // CHARS_PER_TOKEN_LOW))


def max_output_of(transport: object, budget: Budget) -> int:
    """The most output a request can bring: the transport's ``max_tokens``, else the
    model's output limit."""
    limit = getattr(transport, "max_tokens", None)
    if isinstance(limit, int) and limit > 0:
        return limit
    spec = budget.spec
    return spec.max_output_tokens if spec is not None else DEFAULT_MAX_OUTPUT_TOKENS


def hold_request(
    budget: Budget,
    transport: object,
    messages: Sequence[Message],
    tools: Sequence[Tool[Any]],
    system: str,
) -> float:
    """Hold the worst case of the request about to be sent; return what was held.

    Raises ``BudgetExceeded`` (the request must not be sent) naming the dollar budget it
    would cross and by how much.
    """
    held = budget.reserve(request_tokens(messages, tools, system), max_output_of(transport, budget))
    if isinstance(held, str):
        raise BudgetExceeded(held)
    return held
