"""A compaction's summary is a model call like any other under a dollar budget: its worst
case is held before it is sent, and it is charged at the summariser's prices."""

from __future__ import annotations

import re
from typing import Any

import pytest

from swarm import BudgetLimits, CompactionError, MemoryContextStore, Message, Usage
from swarm.budget import Budget
from swarm.context.compaction import compact_context
from swarm.scope import RunScope, use_scope
from swarm.testing import FunctionTransport, make_text_response

pytestmark = pytest.mark.anyio


async def long_context() -> MemoryContextStore:
    context = MemoryContextStore()
    await context.append(Message.user("task"))
    for n in range(8):
        await context.append(Message.assistant(f"step {n}"))
        await context.append(Message.user(f"result {n}"))
    return context


def summariser() -> FunctionTransport:
    def respond(messages: Any, tools: Any, system: Any) -> Any:
        return make_text_response("Summary.", usage=Usage(10_000, 1_000))

    transport = FunctionTransport(respond)
    transport.model = "gpt-4.1-mini"  # type: ignore[attr-defined]
    transport.max_tokens = 2_000  # type: ignore[attr-defined]
    return transport


async def test_a_summary_is_charged_at_the_summarisers_prices() -> None:
    budget = Budget("agent", BudgetLimits(usd=1.0), model="gpt-4.1-mini")
    transport = summariser()
    with use_scope(RunScope(path="agent", budget=budget)):
        compacted = await compact_context(await long_context(), transport, keep_recent=2)
    assert compacted is not None and transport.calls == 1
    assert budget.total_usd == pytest.approx((10_000 * 0.40 + 1_000 * 1.60) / 1e6)
    assert budget.reserved_usd == 0 and budget.iterations == 0


async def test_a_summary_that_would_cross_the_dollar_budget_is_not_requested() -> None:
    # the worst case holds 2,000 tokens of output at $1.60/M: $0.0032, over a $0.003 budget
    budget = Budget("agent", BudgetLimits(usd=0.003), model="gpt-4.1-mini")
    transport = summariser()
    context = await long_context()
    with (
        use_scope(RunScope(path="agent", budget=budget)),
        pytest.raises(CompactionError, match=re.escape("dollar budget of $0.003 for 'agent'")),
    ):
        await compact_context(context, transport, keep_recent=2)
    assert transport.calls == 0
    assert budget.tripped is not None and budget.reserved_usd == 0
