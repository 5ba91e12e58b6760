"""Delegation at run time: sub-agents as tools, event forwarding, budgets."""

from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from team_scripts import scripted

from swarm import (
    Agent,
    Error,
    MemoryContextStore,
    Message,
    SessionEndEvent,
    StopReason,
    StreamEvent,
    SubAgentEvent,
    TextDelta,
    Tool,
    ToolResult,
    TransportError,
    Usage,
)
from swarm.budget import BudgetLimits
from swarm.scope import RunScope
from swarm.team import AgentSpec, BudgetSettings, Team
from swarm.team.delegation import build_team, make_agent_tools, run_team, team_scope
from swarm.testing import (
    FunctionTransport,
    StubTransport,
    history_problems,
    make_text_response,
    make_tool_use_response,
    make_tool_uses_response,
)


def role(name: str, *delegates: str, tools: Sequence[str] = (), **extra: Any) -> AgentSpec:
    return AgentSpec(
        name=name,
        description=f"The {name}.",
        system=name,
        delegates=tuple(delegates),
        tools=tuple(tools),
        **extra,
    )


async def run(stream_events: Any) -> list[StreamEvent]:
    async with stream_events as stream:
        return [event async for event in stream]


def results_of(events: list[StreamEvent]) -> dict[str, ToolResult]:
    return {e.tool_use_id: e for e in events if isinstance(e, ToolResult)}


def last_tool_result_text(messages: list[Message]) -> str:
    return messages[-1].tool_results[0].text


@pytest.mark.anyio
async def test_sub_agent_answer_comes_back_as_the_tool_result() -> None:
    model = scripted(
        {
            "orchestrator": [
                make_tool_use_response("worker", "d1", {"task": "count to 3", "topic": "counting"}),
                lambda m: make_text_response(f"worker said: {last_tool_result_text(m)}"),
            ],
            "worker": [make_text_response("1 2 3")],
        }
    )
    worker = Agent("worker", model)
    tools = make_agent_tools({"worker": ("Counts.", worker)}, model)
    orchestrator = Agent("orchestrator", model, tools)
    events = await run(
        orchestrator.run_stream("go", MemoryContextStore(), scope=RunScope(path="orchestrator"))
    )
    result = results_of(events)["d1"]
    assert not result.is_error and result.content == "1 2 3"
    assert result.details is not None and result.details["path"] == "orchestrator/worker#1"
    assert result.details["topic"] == "counting"
    assert events[-1].stop_reason == StopReason.end_turn  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_sub_agent_events_reach_the_root_tagged_with_their_path() -> None:
    seen: list[tuple[str, StreamEvent]] = []
    model = scripted(
        {
            "orchestrator": [
                make_tool_use_response("worker", "d1", {"task": "t"}),
                make_text_response(),
            ],
            "worker": [make_text_response("from below")],
        }
    )
    tools = make_agent_tools(
        {"worker": ("", Agent("worker", model))}, model, on_event=lambda n, e: seen.append((n, e))
    )
    events = await run(
        Agent("orchestrator", model, tools).run_stream(
            "go", MemoryContextStore(), scope=RunScope(path="orchestrator")
        )
    )
    forwarded = [e for e in events if isinstance(e, SubAgentEvent)]
    assert {e.path for e in forwarded} == {"orchestrator/worker#1"}
    assert TextDelta(0, "from below") in [e.event for e in forwarded]
    assert isinstance(forwarded[-1].event, SessionEndEvent)
    assert ("worker", TextDelta(0, "from below")) in seen


@pytest.mark.anyio
async def test_each_run_numbers_its_delegations_from_one() -> None:
    model = scripted(
        {
            "orchestrator": [
                make_tool_uses_response(
                    [("worker", "a", {"task": "x"}), ("worker", "b", {"task": "y"})]
                ),
                make_text_response("done"),
            ],
            "worker": [make_text_response("ok")],
        }
    )
    team = Team([role("orchestrator", "worker"), role("worker")])
    paths = []
    for run_id in ("first", "second"):
        events = await run(run_team(team, "go", transport=model, run_id=run_id))
        paths.append(sorted(r.details["path"] for r in results_of(events).values() if r.details))
    assert paths[0] == paths[1] == ["orchestrator/worker#1", "orchestrator/worker#2"]


@pytest.mark.anyio
async def test_three_level_hierarchy_runs_its_leaves_concurrently() -> None:
    arrived = 0
    all_leaves_running = anyio.Event()

    async def wait_for_siblings() -> str:
        nonlocal arrived
        arrived += 1
        if arrived == 4:
            all_leaves_running.set()
        await all_leaves_running.wait()  # returns only if all four leaves run at once
        return "met"

    model = scripted(
        {
            "orchestrator": [
                make_tool_uses_response(
                    [("lead", "l1", {"task": "a"}), ("lead", "l2", {"task": "b"})]
                ),
                make_text_response("all done"),
            ],
            "lead": [
                make_tool_uses_response(
                    [("leaf", "f1", {"task": "x"}), ("leaf", "f2", {"task": "y"})]
                ),
                make_text_response("lead done"),
            ],
            "leaf": [make_tool_use_response("meet", "m1", {}), make_text_response("leaf done")],
        }
    )
    team = Team([role("orchestrator", "lead"), role("lead", "leaf"), role("leaf", tools=["meet"])])
    stream = run_team(
        team, "build it", transport=model, toolbox={"meet": Tool("meet", wait_for_siblings)}
    )
    with anyio.fail_after(10):  # a deadlock guard, not a timing assertion
        events = await run(stream)
    assert events[-1].stop_reason == StopReason.end_turn  # type: ignore[union-attr]
    leaf_paths = {e.path for e in events if isinstance(e, SubAgentEvent) and "/leaf#" in e.path}
    assert leaf_paths == {
        "orchestrator/lead#1/leaf#1",
        "orchestrator/lead#1/leaf#2",
        "orchestrator/lead#2/leaf#1",
        "orchestrator/lead#2/leaf#2",
    }
    tree = events[-1].usage_tree  # type: ignore[union-attr]
    assert tree is not None
    assert [len(lead.children) for lead in tree.children] == [2, 2]
    assert tree.total.total_tokens == sum(n.usage.total_tokens for n in tree.walk())


@pytest.mark.anyio
async def test_a_role_cannot_call_a_role_it_did_not_declare() -> None:
    model = scripted(
        {
            "orchestrator": [
                make_tool_use_response("secret", "d1", {"task": "t"}),
                make_text_response(),
            ],
            "helper": [make_text_response()],
            "secret": [make_text_response("leaked")],
        }
    )
    team = Team([role("orchestrator", "helper"), role("helper", "secret"), role("secret")])
    events = await run(run_team(team, "go", transport=model))
    result = results_of(events)["d1"]
    assert result.is_error
    assert result.content == "Unknown tool 'secret'. Available tools: agents, helper."
    assert not any(isinstance(e, SubAgentEvent) and "secret" in e.path for e in events)


@pytest.mark.anyio
async def test_subtree_budget_stops_only_that_subtree() -> None:
    async def work() -> str:
        return "more"

    greedy = [make_tool_use_response("work", "w", {}, usage=Usage(400, 100))]
    model = scripted(
        {
            "orchestrator": [
                make_tool_uses_response(
                    [("spender", "s", {"task": "spend"}), ("saver", "v", {"task": "save"})]
                ),
                lambda m: make_text_response("carried on"),
            ],
            "spender": greedy,
            "saver": [make_text_response("saved", usage=Usage(10, 5))],
        }
    )
    team = Team(
        [
            role("orchestrator", "spender", "saver"),
            role("spender", tools=["work"], budget=BudgetSettings(tokens=1200)),
            role("saver"),
        ]
    )
    context = MemoryContextStore()
    events = await run(
        run_team(team, "go", transport=model, toolbox={"work": Tool("work", work)}, context=context)
    )
    results = results_of(events)
    assert results["v"].content == "saved" and not results["v"].is_error
    assert results["s"].is_error
    assert "(budget)" in results["s"].content and "token budget of 1,200" in results["s"].content
    end = events[-1]
    assert isinstance(end, SessionEndEvent) and end.stop_reason == StopReason.end_turn
    assert (await context.get_history())[-1].text == "carried on"
    tree = end.usage_tree
    assert tree is not None
    spender = next(n for n in tree.walk() if "spender" in n.path)
    assert spender.stop_reason == StopReason.budget and spender.usage.total_tokens == 1500
    spender_end = next(
        e.event
        for e in events
        if isinstance(e, SubAgentEvent)
        and "spender" in e.path
        and isinstance(e.event, SessionEndEvent)
    )
    assert spender_end.stop_reason == StopReason.budget  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_failing_sub_agent_is_an_error_result_and_the_caller_goes_on() -> None:
    def broken(messages: list[Message]) -> list[StreamEvent]:
        raise TransportError("provider is down", status=503)

    model = scripted(
        {
            "orchestrator": [
                make_tool_use_response("worker", "d1", {"task": "t"}),
                make_text_response("handled it"),
            ],
            "worker": [broken],
        }
    )
    team = Team([role("orchestrator", "worker"), role("worker")])
    events = await run(run_team(team, "go", transport=model))
    result = results_of(events)["d1"]
    assert result.is_error
    assert "did not finish (error): provider is down" in result.content
    assert events[-1].stop_reason == StopReason.end_turn  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_delegation_budget_refuses_further_calls() -> None:
    model = scripted(
        {
            "orchestrator": [
                make_tool_use_response("worker", "d1", {"task": "1"}),
                make_tool_use_response("worker", "d2", {"task": "2"}),
                make_text_response(),
            ],
            "worker": [make_text_response("ok")],
        }
    )
    team = Team(
        [role("orchestrator", "worker", budget=BudgetSettings(delegations=1)), role("worker")]
    )
    results = results_of(await run(run_team(team, "go", transport=model)))
    assert not results["d1"].is_error
    assert results["d2"].is_error
    assert "delegation budget of 1 for 'orchestrator' is spent" in results["d2"].content


@pytest.mark.anyio
async def test_time_budget_stops_a_slow_sub_agent() -> None:
    async def hang() -> str:
        await anyio.sleep_forever()
        return ""

    model = scripted(
        {
            "orchestrator": [
                make_tool_use_response("worker", "d1", {"task": "t"}),
                make_text_response(),
            ],
            "worker": [make_tool_use_response("hang", "h", {}), make_text_response()],
        }
    )
    team = Team(
        [
            role("orchestrator", "worker"),
            role("worker", tools=["hang"], budget=BudgetSettings(seconds=0.05)),
        ]
    )
    contexts: list[MemoryContextStore] = []

    def remember() -> MemoryContextStore:
        contexts.append(MemoryContextStore())
        return contexts[-1]

    events = await run(
        run_team(
            team,
            "go",
            transport=model,
            toolbox={"hang": Tool("hang", hang)},
            context_factory=remember,
        )
    )
    result = results_of(events)["d1"]
    assert result.is_error and "time budget of 0.05s" in result.content
    worker_history = await contexts[-1].get_history()
    assert worker_history[-1].tool_results[0].is_error  # the cut call still has its result


@pytest.mark.anyio
async def test_role_model_is_resolved_for_its_agent() -> None:
    asked: list[str] = []
    model = scripted(
        {
            "orchestrator": [
                make_tool_use_response("worker", "d1", {"task": "t"}),
                make_text_response(),
            ],
            "worker": [make_text_response("cheap answer")],
        }
    )

    def resolve(spec: str) -> Any:
        asked.append(spec)
        return model

    team = Team([role("orchestrator", "worker"), role("worker", model="openai:gpt-4o-mini")])
    results = results_of(await run(run_team(team, "go", transport=model, resolve_model=resolve)))
    assert asked == ["openai:gpt-4o-mini"]
    assert results["d1"].content == "cheap answer"


def test_each_role_gets_exactly_its_delegates_as_tools() -> None:
    team = Team([role("orchestrator", "a", "b"), role("a", "c"), role("b"), role("c")])
    agents = build_team(team, {}, FunctionTransport(lambda m, t, s: []))
    assert [t.name for t in agents["orchestrator"].tools] == ["a", "b", "agents"]
    assert [t.name for t in agents["a"].tools] == ["c", "agents"]
    assert agents["c"].tools == []


@pytest.mark.anyio
async def test_cancelling_the_root_leaves_every_history_valid() -> None:
    started = anyio.Event()

    async def hang() -> str:
        started.set()
        await anyio.sleep_forever()
        return ""

    model = scripted(
        {
            "orchestrator": [
                make_tool_use_response("worker", "d1", {"task": "t"}),
                make_text_response(),
            ],
            "worker": [make_tool_use_response("hang", "h", {}), make_text_response()],
        }
    )
    team = Team([role("orchestrator", "worker"), role("worker", tools=["hang"])])
    root = MemoryContextStore()
    children: list[MemoryContextStore] = []

    def remember() -> MemoryContextStore:
        children.append(MemoryContextStore())
        return children[-1]

    async with anyio.create_task_group() as group:

        async def consume() -> None:
            await run(
                run_team(
                    team,
                    "go",
                    transport=model,
                    toolbox={"hang": Tool("hang", hang)},
                    context=root,
                    context_factory=remember,
                )
            )

        group.start_soon(consume)
        await started.wait()
        group.cancel_scope.cancel()
    for store in [root, *children]:
        assert history_problems(await store.get_history()) == []


def test_budget_limits_match_role_budget_settings() -> None:
    settings = BudgetSettings(tokens=1, seconds=2.0, delegations=3, depth=4)
    from swarm.team.delegation import _limits

    assert _limits(role("x", budget=settings)) == BudgetLimits(1, 2.0, 3, 4)


class Silent:
    """A model that never sends its first event."""

    async def stream(self, messages: Any, tools: Any, system: str) -> Any:
        await anyio.sleep_forever()
        yield make_text_response("never")[0]


async def hang() -> str:
    await anyio.sleep_forever()
    return ""


@pytest.mark.anyio
@pytest.mark.parametrize("wait", ["model", "one call", "concurrent calls"])
async def test_the_root_agents_time_budget_cuts_a_long_wait(wait: str) -> None:
    calls = {
        "model": [],
        "one call": [("hang", "h1", {})],
        "concurrent calls": [("hang", "h1", {}), ("hang", "h2", {})],
    }[wait]
    transport: Any = (
        Silent()
        if wait == "model"
        else StubTransport([make_tool_uses_response(calls), make_text_response("unreachable")])
    )
    agent = Agent("root", transport, [Tool("hang", hang)])
    context = MemoryContextStore()
    scope = team_scope("root", limits=BudgetLimits(seconds=0.05))
    with anyio.fail_after(30):  # a guard against hanging, not a timing claim
        events = await run(agent.run_stream("go", context, scope=scope))
    end = events[-1]
    assert isinstance(end, SessionEndEvent) and end.stop_reason == StopReason.budget
    assert any(
        isinstance(e, Error) and "time budget of 0.05s for 'root' is spent" in e.message
        for e in events
    )
    history = await context.get_history()
    assert history_problems(history) == []
    cut = [r for m in history for r in m.tool_results]
    assert [r.tool_use_id for r in cut] == [c[1] for c in calls]
    assert all(r.is_error and "Cancelled" in r.text for r in cut)


@pytest.mark.anyio
async def test_an_agent_subclass_with_its_own_run_stream_runs_its_own_way() -> None:
    ran: list[str] = []

    class Noted(Agent):
        def run_stream(self, user_message: Any, context: Any, *, scope: Any = None) -> Any:
            ran.append(str(user_message))
            return super().run_stream(user_message, context, scope=scope)

    model = scripted(
        {
            "orchestrator": [
                make_tool_use_response("worker", "d1", {"task": "note me"}),
                lambda m: make_text_response(f"worker said: {last_tool_result_text(m)}"),
            ],
            "worker": [make_text_response("noted")],
        }
    )
    tools = make_agent_tools({"worker": ("Notes.", Noted("worker", model))}, model)
    answer = await Agent("orchestrator", model, tools).run("go", MemoryContextStore())
    assert ran == ["note me"]
    assert answer == "worker said: noted"
