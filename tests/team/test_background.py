"""Background sub-agents, the agents tool, and continuing a finished sub-agent."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from swarm import (
    MemoryContextStore,
    Message,
    SessionEndEvent,
    StopReason,
    StreamEvent,
    SubAgentEvent,
    ToolResult,
)
from swarm.team import AgentSpec, Team
from swarm.team.delegation import make_agent_tools, run_team
from swarm.testing import (
    FunctionTransport,
    history_problems,
    make_text_response,
    make_tool_use_response,
    make_tool_uses_response,
)

pytestmark = pytest.mark.anyio


def role(name: str, *delegates: str, **extra: Any) -> AgentSpec:
    return AgentSpec(
        name=name, description=f"The {name}.", system=name, delegates=delegates, **extra
    )


def turn_of(messages: list[Message]) -> int:
    return sum(1 for m in messages if m.role == "assistant")


async def collect(team: Team, store: MemoryContextStore, model: FunctionTransport) -> list[Any]:
    async with run_team(team, "go", transport=model, context=store) as stream:
        return [event async for event in stream]


def results(events: list[StreamEvent]) -> dict[str, ToolResult]:
    return {e.tool_use_id: e for e in events if isinstance(e, ToolResult)}


def ends(events: list[StreamEvent]) -> dict[str, SessionEndEvent]:
    return {
        e.path: e.event
        for e in events
        if isinstance(e, SubAgentEvent) and isinstance(e.event, SessionEndEvent)
    }


async def test_background_children_run_while_the_lead_works_and_are_announced() -> None:
    gates = {f"part {i}": anyio.Event() for i in (1, 2, 3)}
    gates["part 1"].set()  # the first worker answers at once; the others wait for the lead
    order: list[str] = []

    async def respond(messages: list[Message], tools: Any, system: str) -> list[StreamEvent]:
        if system == "worker":
            task = messages[0].text
            await gates[task].wait()
            order.append(task)
            return make_text_response(f"report on {task}")
        turn = turn_of(messages)
        if turn == 0:
            calls = [
                ("worker", f"w{i}", {"task": f"part {i}", "background": True}) for i in (1, 2, 3)
            ]
            return make_tool_uses_response(calls)
        if turn == 1:  # the lead's own work: wait for the first
            return make_tool_use_response(
                "agents", "a1", {"action": "wait", "path": "lead/worker#1"}
            )
        if turn == 2:
            gates["part 2"].set()
            gates["part 3"].set()
            return make_text_response("my own part is done")
        return make_text_response("all parts reported")

    team = Team([role("lead", "worker"), role("worker")])
    store = MemoryContextStore()
    events = await collect(team, store, FunctionTransport(respond))
    got = results(events)
    for i in (1, 2, 3):
        assert json.loads(got[f"w{i}"].content) == {"path": f"lead/worker#{i}", "status": "running"}
    assert "report on part 1" in got["a1"].content
    end = events[-1]
    assert isinstance(end, SessionEndEvent) and end.stop_reason == StopReason.end_turn
    assert end.final_text == "all parts reported"
    assert {p: e.stop_reason for p, e in ends(events).items()} == {
        f"lead/worker#{i}": StopReason.end_turn for i in (1, 2, 3)
    }
    history = await store.get_history()
    told = "\n".join(m.text for m in history if m.role == "user")
    assert "report on part 2" in told and "report on part 3" in told
    assert told.count("report on part 1") <= 1  # announced at most once (if it ended early)
    assert history_problems(history, alternating=False) == []
    assert end.usage_tree is not None and len(end.usage_tree.children) == 3


async def test_on_exit_stop_stops_what_still_runs_when_the_lead_ends() -> None:
    never = anyio.Event()

    async def respond(messages: list[Message], tools: Any, system: str) -> list[StreamEvent]:
        if system == "worker":
            await never.wait()
        if turn_of(messages) == 0:
            return make_tool_use_response("worker", "w", {"task": "t", "background": True})
        return make_text_response("leaving")

    team = Team([role("lead", "worker", on_exit="stop"), role("worker")])
    events = await collect(team, MemoryContextStore(), FunctionTransport(respond))
    assert ends(events)["lead/worker#1"].stop_reason == StopReason.cancelled
    end = events[-1]
    assert isinstance(end, SessionEndEvent) and end.final_text == "leaving"
    assert events.index(next(e for e in events if isinstance(e, SubAgentEvent))) < len(events) - 1


async def test_agents_stop_and_status() -> None:
    never = anyio.Event()

    async def respond(messages: list[Message], tools: Any, system: str) -> list[StreamEvent]:
        if system == "worker":
            await never.wait()
        turn = turn_of(messages)
        if turn == 0:
            return make_tool_use_response("worker", "w", {"task": "t", "background": True})
        if turn == 1:
            return make_tool_use_response("agents", "s1", {"action": "status"})
        if turn == 2:
            return make_tool_use_response(
                "agents", "s2", {"action": "stop", "path": "lead/worker#1"}
            )
        return make_text_response("stopped it")

    team = Team([role("lead", "worker"), role("worker")])
    events = await collect(team, MemoryContextStore(), FunctionTransport(respond))
    got = results(events)
    (status,) = json.loads(got["s1"].content)
    assert status["path"] == "lead/worker#1" and status["status"] == "running"
    assert status["background"] is True and "usage" in status
    assert "lead/worker#1 (stopped, cancelled)" in got["s2"].content
    assert ends(events)["lead/worker#1"].stop_reason == StopReason.cancelled


async def test_a_finished_child_is_continued_with_its_context() -> None:
    seen: list[int] = []

    async def respond(messages: list[Message], tools: Any, system: str) -> list[StreamEvent]:
        if system == "worker":
            seen.append(len(messages))
            return make_text_response(f"answer {len(seen)} after {messages[-1].text}")
        turn = turn_of(messages)
        if turn == 0:
            return make_tool_use_response("worker", "d1", {"task": "first question"})
        if turn == 1:
            args = {"task": "a follow-up", "continue_from": "lead/worker#1"}
            return make_tool_use_response("worker", "d2", args)
        if turn == 2:
            args = {"action": "continue", "path": "lead/worker#1", "message": "one more"}
            return make_tool_use_response("agents", "d3", args)
        return make_text_response("done")

    team = Team([role("lead", "worker"), role("worker")])
    events = await collect(team, MemoryContextStore(), FunctionTransport(respond))
    got = results(events)
    assert got["d1"].content == "answer 1 after first question"
    assert got["d2"].content == "answer 2 after a follow-up"
    assert "answer 3 after one more" in got["d3"].content
    assert seen == [1, 3, 5]  # each run sees the whole earlier conversation
    end = events[-1]
    assert isinstance(end, SessionEndEvent) and end.usage_tree is not None
    (node,) = end.usage_tree.children  # one sub-agent, one budget node
    assert node.path == "lead/worker#1" and node.iterations == 3


async def test_continuing_an_unknown_child_is_an_error_result() -> None:
    async def respond(messages: list[Message], tools: Any, system: str) -> list[StreamEvent]:
        if turn_of(messages) == 0:
            args = {"task": "x", "continue_from": "lead/worker#7"}
            return make_tool_use_response("worker", "d", args)
        return make_text_response("ok")

    team = Team([role("lead", "worker"), role("worker")])
    events = await collect(team, MemoryContextStore(), FunctionTransport(respond))
    result = results(events)["d"]
    assert result.is_error and "No sub-agent 'lead/worker#7'" in result.content


async def test_background_without_the_agents_tool_is_refused() -> None:
    from swarm import Agent

    worker = Agent("worker", FunctionTransport(lambda *a: make_text_response("hi")))
    (tool,) = make_agent_tools({"worker": ("W.", worker)}, worker.transport)
    with pytest.raises(Exception, match="no 'agents'"):
        await tool.run_handler({"task": "t", "background": True})


async def test_a_lead_that_runs_out_of_budget_stops_its_background_children_first() -> None:
    from swarm.team import BudgetSettings

    never = anyio.Event()

    async def respond(messages: list[Message], tools: Any, system: str) -> list[StreamEvent]:
        if system == "worker":
            await never.wait()
        if turn_of(messages) == 0:
            return make_tool_use_response("worker", "w", {"task": "t", "background": True})
        return make_text_response("still waiting")

    lead = role("lead", "worker", budget=BudgetSettings(tokens=20))
    store = MemoryContextStore()
    events = await collect(Team([lead, role("worker")]), store, FunctionTransport(respond))
    end = events[-1]
    assert isinstance(end, SessionEndEvent) and end.stop_reason == StopReason.budget
    child_end = ends(events)["lead/worker#1"]
    assert child_end.stop_reason in (StopReason.budget, StopReason.cancelled)
    assert history_problems(await store.get_history(), alternating=False) == []


async def test_the_python_api_runs_background_sub_agents_with_agents_tool() -> None:
    from swarm import Agent, agents_tool

    async def respond(messages: list[Message], tools: Any, system: str) -> list[StreamEvent]:
        if system == "helper":
            return make_text_response("helped")
        if turn_of(messages) == 0:
            return make_tool_use_response("helper", "h", {"task": "t", "background": True})
        return make_text_response("done")

    model = FunctionTransport(respond)
    helper = Agent("helper", model)
    tools = [*make_agent_tools({"helper": ("Helps.", helper)}, model), agents_tool()]
    store = MemoryContextStore()
    async with Agent("lead", model, tools).run_stream("go", store) as stream:
        end = await stream.get_session_end()
    assert end.final_text == "done"
    history = await store.get_history()
    assert any("helped" in m.text for m in history if m.role == "user")  # announced


def test_agents_tool_false_keeps_a_role_s_tools_lean() -> None:
    from swarm.team.delegation import build_team

    team = Team([role("lead", "worker", agents_tool=False), role("worker")])
    agents = build_team(team, {}, FunctionTransport(lambda *a: []))
    (worker,) = agents["lead"].tools
    assert set(worker.input_schema["properties"]) == {"task", "topic"}
    model = FunctionTransport(lambda *a: [])
    full = build_team(Team([role("lead", "worker"), role("worker")]), {}, model)
    assert [t.name for t in full["lead"].tools] == ["worker", "agents"]
