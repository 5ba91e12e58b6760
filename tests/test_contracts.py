"""Typed results: an agent with an ``output`` schema answers through ``final_answer``."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pydantic
import pytest

from swarm import Agent, MemoryContextStore
from swarm.contracts import FINAL_ANSWER, OutputContract
from swarm.events import OutputInvalid, SessionEndEvent, StreamEvent
from swarm.testing import (
    FunctionTransport,
    StubTransport,
    history_problems,
    make_text_response,
    make_tool_use_response,
)
from swarm.types import StopReason


class Finding(pydantic.BaseModel):
    """One problem a reviewer found."""

    line: int
    note: str


class Review(pydantic.BaseModel):
    """What a reviewer reports."""

    verdict: str
    findings: list[Finding]


VALID = {"verdict": "ok", "findings": [{"line": 3, "note": "typo"}]}


def _answer(arguments: dict[str, Any], call: str = "c1") -> list[StreamEvent]:
    return make_tool_use_response(FINAL_ANSWER, call, arguments)


async def _run(agent: Agent) -> tuple[list[StreamEvent], SessionEndEvent, MemoryContextStore]:
    store = MemoryContextStore()
    events: list[StreamEvent] = []
    async with agent.run_stream("review it", store) as stream:
        async for event in stream:
            events.append(event)
    end = events[-1]
    assert isinstance(end, SessionEndEvent)
    return events, end, store


def test_valid_final_answer_is_the_typed_result() -> None:
    agent = Agent("review", StubTransport([_answer(VALID)]), output=Review)
    events, end, store = anyio.run(_run, agent)
    assert end.stop_reason == StopReason.end_turn
    assert end.output == VALID
    assert json.loads(end.final_text) == VALID
    assert not [e for e in events if isinstance(e, OutputInvalid)]
    assert history_problems(anyio.run(store.get_history)) == []


def test_invalid_answer_names_every_wrong_missing_and_extra_field() -> None:
    bad = {"findings": [{"line": "three", "note": "typo"}], "mood": "tired"}
    seen: list[str] = []

    def respond(messages: Any, tools: Any, system: str) -> list[StreamEvent]:
        last = messages[-1]
        if last.tool_results:
            seen.append(last.tool_results[0].text)
            return _answer(VALID, "c2")
        return _answer(bad)

    agent = Agent("review", FunctionTransport(respond), output=Review)
    events, end, _ = anyio.run(_run, agent)
    assert end.stop_reason == StopReason.end_turn and end.output == VALID
    (invalid,) = [e for e in events if isinstance(e, OutputInvalid)]
    assert invalid.attempt == 1 and invalid.retries == 2
    message = seen[0]
    assert "missing field 'verdict'" in message
    assert "field 'findings[0].line'" in message and "'three'" in message
    assert "unexpected field 'mood'" in message
    assert set(invalid.problems) == {
        p for p in invalid.problems if any(k in p for k in ("verdict", "findings", "mood"))
    }
    assert len(invalid.problems) == 3


def test_exhausted_retries_end_the_run_invalid_output_without_an_answer() -> None:
    turns = [_answer({"verdict": 1}, f"c{i}") for i in range(3)]
    agent = Agent("review", StubTransport(turns), output=Review, output_retries=2)
    events, end, store = anyio.run(_run, agent)
    assert end.stop_reason == StopReason.invalid_output
    assert end.output is None
    assert "after 3 attempts" in str(end.error)
    assert [e.attempt for e in events if isinstance(e, OutputInvalid)] == [1, 2]
    assert history_problems(anyio.run(store.get_history)) == []


def test_text_answer_that_is_valid_json_is_accepted() -> None:
    text = "```json\n" + json.dumps(VALID) + "\n```"
    agent = Agent("review", StubTransport([make_text_response(text)]), output=Review)
    _, end, _ = anyio.run(_run, agent)
    assert end.stop_reason == StopReason.end_turn and end.output == VALID


def test_text_answer_that_is_not_json_is_sent_back_with_the_reason() -> None:
    turns = [make_text_response("It looks fine to me."), _answer(VALID)]
    agent = Agent("review", StubTransport(turns), output=Review)
    events, end, store = anyio.run(_run, agent)
    assert end.output == VALID
    (invalid,) = [e for e in events if isinstance(e, OutputInvalid)]
    assert "not JSON" in invalid.problems[0]
    history = anyio.run(store.get_history)
    assert "not valid" in history[2].text and FINAL_ANSWER in history[2].text


def test_json_schema_output_and_the_tool_offered() -> None:
    schema = {
        "type": "object",
        "properties": {"score": {"type": "integer", "minimum": 0}},
        "required": ["score"],
    }
    offered: list[list[str]] = []

    def respond(messages: Any, tools: Any, system: str) -> list[StreamEvent]:
        offered.append([t.name for t in tools])
        if messages[-1].tool_results:
            return _answer({"score": 4}, "c2")
        return _answer({"score": -1})

    agent = Agent("judge", FunctionTransport(respond), output=schema)
    events, end, _ = anyio.run(_run, agent)
    assert end.output == {"score": 4}
    (invalid,) = [e for e in events if isinstance(e, OutputInvalid)]
    assert "field 'score'" in invalid.problems[0] and "minimum" in invalid.problems[0]
    assert offered == [[FINAL_ANSWER], [FINAL_ANSWER]]


def test_invalid_schema_is_refused_with_where() -> None:
    with pytest.raises(ValueError, match="properties"):
        OutputContract.of({"type": "object", "properties": {"a": {"type": "nope"}}})


def test_retries_are_counted_in_the_budget_tree() -> None:
    from swarm.budget import Budget
    from swarm.scope import RunScope

    turns = [_answer({"verdict": 1}, "c1"), _answer(VALID, "c2")]
    agent = Agent("review", StubTransport(turns), output=Review)
    scope = RunScope(path="lead", budget=Budget("lead"))

    async def main() -> SessionEndEvent:
        async with agent.run_stream("go", MemoryContextStore(), scope=scope) as stream:
            return await stream.get_session_end()

    end = anyio.run(main)
    assert end.usage_tree is not None and end.usage_tree.output_retries == 1
    assert "1 output retry" in end.usage_tree.render()
