"""A run whose reader only waits for its end: sub-agents' events are not forwarded to
the root stream, and nothing else changes (callbacks, budgets, answers, continuing)."""

from typing import Any

import pytest
from team_scripts import scripted

from swarm import (
    Agent,
    MemoryContextStore,
    Message,
    SessionEndEvent,
    StopReason,
    StreamEvent,
    SubAgentEvent,
    TextDelta,
    Tool,
    ToolOutput,
    Usage,
)
from swarm.scope import RunScope
from swarm.team import AgentSpec, BudgetSettings, Team
from swarm.team.delegation import make_agent_tools, run_team
from swarm.testing import (
    FunctionTransport,
    make_text_response,
    make_tool_use_response,
    make_tool_uses_response,
)


def answer_of(messages: list[Message]) -> list[StreamEvent]:
    return make_text_response(f"heard: {messages[-1].tool_results[0].text}")


def two_levels() -> FunctionTransport:
    return scripted(
        {
            "lead": [make_tool_use_response("middle", "m", {"task": "ask below"}), answer_of],
            "middle": [make_tool_use_response("leaf", "l", {"task": "say it"}), answer_of],
            "leaf": [make_text_response("from the leaf")],
        }
    )


def two_level_agents(model: FunctionTransport, on_event: Any = None) -> Agent:
    leaf = Agent("leaf", model, name="leaf")
    below = make_agent_tools({"leaf": ("Says it.", leaf)}, model, on_event=on_event)
    middle = Agent("middle", model, below, name="middle")
    tools = make_agent_tools({"middle": ("Asks below.", middle)}, model, on_event=on_event)
    return Agent("lead", model, tools, name="lead")


@pytest.mark.anyio
async def test_a_run_read_only_for_its_answer_still_gives_every_sub_agent_event_to_on_event() -> (
    None
):
    seen: list[tuple[str, StreamEvent]] = []
    lead = two_level_agents(two_levels(), on_event=lambda name, e: seen.append((name, e)))
    answer = await lead.run("go", MemoryContextStore(), scope=RunScope(path="lead"))
    assert answer == "heard: heard: from the leaf"
    assert ("leaf", TextDelta(0, "from the leaf")) in seen
    ends = [name for name, e in seen if isinstance(e, SessionEndEvent)]
    assert sorted(ends) == ["leaf", "middle"]


@pytest.mark.anyio
async def test_a_stream_that_is_read_gets_the_events_of_every_level() -> None:
    lead = two_level_agents(two_levels())
    async with lead.run_stream("go", MemoryContextStore(), scope=RunScope(path="lead")) as s:
        events = [event async for event in s]
    forwarded = [e for e in events if isinstance(e, SubAgentEvent)]
    leaf = [e.event for e in forwarded if e.path == "lead/middle#1/leaf#1"]
    assert TextDelta(0, "from the leaf") in leaf
    assert isinstance(leaf[-1], SessionEndEvent)
    assert any(e.path == "lead/middle#1" for e in forwarded)


@pytest.mark.anyio
async def test_reading_part_of_a_stream_then_its_answer_finishes_the_run() -> None:
    lead = two_level_agents(two_levels())
    async with lead.run_stream("go", MemoryContextStore(), scope=RunScope(path="lead")) as s:
        first = await s.__aiter__().__anext__()
        answer = await s.get_final_text()
    assert first.type == "agent_start"
    assert answer == "heard: heard: from the leaf"
    assert s.session_end is not None and s.session_end.stop_reason == StopReason.end_turn


@pytest.mark.anyio
async def test_budgets_still_stop_a_sub_agent_when_nobody_reads_the_events() -> None:
    async def work() -> str:
        return "more"

    model = scripted(
        {
            "lead": [
                make_tool_uses_response(
                    [("spender", "s", {"task": "spend"}), ("saver", "v", {"task": "save"})]
                ),
                make_text_response("carried on"),
            ],
            "spender": [make_tool_use_response("work", "w", {}, usage=Usage(400, 100))],
            "saver": [make_text_response("saved", usage=Usage(10, 5))],
        }
    )
    team = Team(
        [
            AgentSpec("lead", "", "lead", delegates=("spender", "saver")),
            AgentSpec(
                "spender", "", "spender", tools=("work",), budget=BudgetSettings(tokens=1200)
            ),
            AgentSpec("saver", "", "saver"),
        ]
    )
    stream = run_team(team, "go", transport=model, toolbox={"work": Tool("work", work)})
    async with stream:
        end = await stream.get_session_end()
    assert end.stop_reason == StopReason.end_turn and end.final_text == "carried on"
    assert end.usage_tree is not None
    spender = next(n for n in end.usage_tree.walk() if "spender" in n.path)
    saver = next(n for n in end.usage_tree.walk() if "saver" in n.path)
    assert spender.stop_reason == StopReason.budget and spender.usage.total_tokens == 1500
    assert saver.stop_reason == StopReason.end_turn


@pytest.mark.anyio
async def test_a_continued_sub_agent_answers_again_from_its_context_when_nobody_reads() -> None:
    def recalled(messages: list[Message]) -> list[StreamEvent]:
        said = [m.text for m in messages if m.role == "user"]
        return make_text_response(" | ".join(said))

    model = scripted(
        {
            "lead": [
                make_tool_use_response("worker", "a", {"task": "first"}),
                make_tool_use_response(
                    "worker", "b", {"task": "second", "continue_from": "lead/worker#1"}
                ),
                answer_of,
            ],
            "worker": [recalled],
        }
    )
    team = Team(
        [
            AgentSpec("lead", "", "lead", delegates=("worker",), agents_tool=True),
            AgentSpec("worker", "", "worker"),
        ]
    )
    async with run_team(team, "go", transport=model) as stream:
        end = await stream.get_session_end()
    assert end.final_text == "heard: first | second"


def test_a_handlers_value_becomes_tool_output() -> None:
    assert ToolOutput.of("text").content == "text"
    assert ToolOutput.of(None).content == ""
    assert ToolOutput.of({"a": 1}).content == '{"a": 1}'
    same = ToolOutput("x", details={"k": 1})
    assert ToolOutput.of(same) is same
