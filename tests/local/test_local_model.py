"""Against a real model served by llama.cpp on 127.0.0.1: the plumbing, never the answers.

A 135M model's judgement is not tested here; its wire behaviour is: streaming, forced and
parallel tool calls with schema-valid arguments, usage, finish reasons, errors mid-stream,
cancellation, a server that dies, and record/replay of a whole run.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from swarm import (
    Agent,
    AgentStart,
    Error,
    IterationEnd,
    MemoryContextStore,
    Message,
    SessionEndEvent,
    StopReason,
    StreamEvent,
    SubAgentEvent,
    TextDelta,
    Tool,
    ToolInputDelta,
    ToolResult,
    ToolUseStart,
)
from swarm.audit import AuditLog, verify_log
from swarm.guards import apply_policy, load_policy
from swarm.local import LocalServer
from swarm.scope import RunScope
from swarm.team.delegation import _lean, make_agent_tools
from swarm.testing import history_problems
from swarm.transports import RecordingTransport, ReplayTransport, on_user_turn

pytestmark = [pytest.mark.local_model, pytest.mark.anyio]

REQUIRED: dict[str, Any] = {
    "tool_choice": on_user_turn("required", otherwise="auto"),
    "prefill": on_user_turn("<tool_call>\n"),
    "max_tokens": 400,
}


async def weather(city: str) -> str:
    """Get the weather for a city."""
    return f"Sunny and 21 degrees in {city}."


WEATHER = Tool("weather", weather, "Get the weather for a city.")
DIALECTS = ["openai", "anthropic"]


@pytest.fixture
async def transport(server: LocalServer) -> AsyncIterator[Callable[..., Any]]:
    """Makes transports on the shared server, and closes them after the test."""
    made: list[Any] = []

    def make(dialect: str = "openai", **options: Any) -> Any:
        factory = server.openai_transport if dialect == "openai" else server.anthropic_transport
        made.append(factory(**options))
        return made[-1]

    yield make
    for each in made:
        await each.aclose()


async def stream(t: Any, text: str, tools: list[Tool[Any]]) -> list[StreamEvent]:
    with anyio.fail_after(120):  # a hang guard, not a timing assertion
        return [e async for e in t.stream([Message.user(text)], tools, "You are helpful.")]


def calls(events: list[StreamEvent]) -> dict[str, tuple[str, str]]:
    """Tool calls by id: (name, the whole argument JSON)."""
    found: dict[str, list[str]] = {}
    names: dict[str, str] = {}
    for event in events:
        if isinstance(event, ToolUseStart):
            names[event.tool_use_id] = event.name
            found[event.tool_use_id] = []
        elif isinstance(event, ToolInputDelta):
            found[event.tool_use_id].append(event.partial_json)
    return {i: (names[i], "".join(parts)) for i, parts in found.items()}


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_streams_text_with_usage_and_a_finish_reason(
    server: LocalServer, transport: Callable[..., Any], dialect: str
) -> None:
    events = await stream(transport(dialect, max_tokens=40), "Say hello.", [])
    text = "".join(e.delta for e in events if isinstance(e, TextDelta))
    assert text.strip()
    assert sum(isinstance(e, TextDelta) for e in events) > 1  # streamed, not in one piece
    end = events[-1]
    assert isinstance(end, IterationEnd)
    assert end.stop_reason in (StopReason.end_turn, StopReason.max_tokens)
    assert end.usage.input_tokens > 0 and end.usage.output_tokens > 0


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_forced_parallel_tool_calls_have_schema_valid_arguments(
    server: LocalServer, transport: Callable[..., Any], dialect: str
) -> None:
    events = await stream(
        transport(dialect, **REQUIRED), "Get the weather in Paris and in London.", [WEATHER]
    )
    made = calls(events)
    assert len(made) >= 2 and len(set(made)) == len(made)  # parallel, distinct ids
    for name, arguments in made.values():
        assert name == "weather"
        assert isinstance(WEATHER.validate(json.loads(arguments))["city"], str)
    end = events[-1]
    assert isinstance(end, IterationEnd) and end.stop_reason == StopReason.tool_use


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_agent_runs_a_full_tool_loop(
    server: LocalServer, transport: Callable[..., Any], dialect: str
) -> None:
    agent = Agent("You are helpful.", transport(dialect, **REQUIRED), [WEATHER], max_iterations=4)
    context = MemoryContextStore()
    with anyio.fail_after(180):
        async with agent.run_stream("What is the weather in Paris?", context) as run:
            events = [e async for e in run]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert results and all(not r.is_error and r.content.startswith("Sunny") for r in results)
    assert isinstance(events[-1], SessionEndEvent)
    assert events[-1].stop_reason in (StopReason.end_turn, StopReason.max_tokens)
    history = await context.get_history()
    assert [m.role for m in history[:3]] == ["user", "assistant", "user"]
    assert history[-1].role == "assistant" and history[-1].text.strip()


async def test_delegation_with_guards_and_audit(
    server: LocalServer, transport: Callable[..., Any], tmp_path: Path
) -> None:
    policy = load_policy("default")
    worker_tools = apply_policy([WEATHER], policy, role="worker", workspace=tmp_path)
    # as `--model local` runs a team: each forced call is one call under the tools' JSON
    # schema, and the delegation tool offers only `task` and `topic` (a team's role with
    # `agents_tool: false`), so the model cannot start a sub-agent in the background
    grammar = {"tool_choice": on_user_turn("required", otherwise="auto"), "tool_grammar": True}
    worker = Agent(
        "You look up the weather.",
        transport("openai", **grammar),
        worker_tools,
        max_iterations=3,
    )
    agent_tools = [
        _lean(tool)
        for tool in make_agent_tools(
            {"worker": ("Looks up the weather for a city.", worker)},
            transport("openai", **grammar),
        )
    ]
    orchestrator = Agent(
        "You delegate weather questions to the worker.",
        transport("openai", **grammar),
        apply_policy(agent_tools, policy, role="orchestrator", workspace=tmp_path),
        max_iterations=3,
    )
    with AuditLog(tmp_path / "audit.jsonl") as audit:
        scope = RunScope(path="orchestrator", run_id="local", observers=(audit,))
        with anyio.fail_after(240):
            async with orchestrator.run_stream(
                "What is the weather in Paris?", MemoryContextStore(), scope=scope
            ) as run:
                events = [e async for e in run]
    # the worker's one weather call went through, and its answer reached the orchestrator
    inner = [e for e in events if isinstance(e, SubAgentEvent) and isinstance(e.event, ToolResult)]
    assert inner and inner[0].path.startswith("orchestrator/worker#")
    assert any(not e.event.is_error for e in inner)  # type: ignore[union-attr]
    delegated = [e for e in events if isinstance(e, ToolResult) and e.name == "worker"]
    assert delegated and not delegated[0].is_error, delegated
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    tools_decided = {
        (r.get("path"), r.get("tool")) for r in records if r.get("decision") == "allow"
    }
    assert ("orchestrator", "worker") in tools_decided
    assert any(
        path.startswith("orchestrator/worker#") and tool == "weather"
        for path, tool in tools_decided
    )
    assert verify_log(tmp_path / "audit.jsonl").ok


async def test_invented_tool_name_error_mid_stream_ends_the_session_cleanly(
    server: LocalServer,
    transport: Callable[..., Any],
) -> None:
    # the prefill without required tool_choice lets the model invent a tool name; the
    # server answers HTTP 200 and then an error object in the stream
    agent = Agent(
        "You are helpful.",
        transport("openai", prefill="<tool_call>\n", max_tokens=60),
        [WEATHER],
    )
    context = MemoryContextStore()
    with anyio.fail_after(120):
        async with agent.run_stream("Book me a flight to Rome.", context) as run:
            events = [e async for e in run]
    errors = [e for e in events if isinstance(e, Error)]
    end = events[-1]
    assert isinstance(end, SessionEndEvent)
    if errors:  # the recipe's case: a clear error, a clean end, a valid history
        assert end.stop_reason == StopReason.error
        assert [m.role for m in await context.get_history()] == ["user"]
    else:  # the model happened to pick the real tool: the loop went on normally
        assert end.stop_reason in (StopReason.end_turn, StopReason.max_tokens)


async def test_max_tokens_cutting_a_tool_call(
    server: LocalServer, transport: Callable[..., Any]
) -> None:
    t = transport("openai", **{**REQUIRED, "max_tokens": 4})
    events = await stream(t, "Get the weather in Paris.", [WEATHER])
    end = events[-1]
    assert isinstance(end, IterationEnd) and end.stop_reason == StopReason.max_tokens
    agent = Agent("You are helpful.", t, [WEATHER], max_iterations=1)
    context = MemoryContextStore()
    with anyio.fail_after(120):
        await agent.run("Get the weather in Paris.", context)
    # whatever was cut, every call has its result
    assert history_problems(await context.get_history()) == []


async def test_cancelling_mid_stream_stops_generation(
    server: LocalServer, transport: Callable[..., Any]
) -> None:
    agent = Agent("You are a storyteller.", transport("openai", max_tokens=2000))
    context = MemoryContextStore()
    run = agent.run_stream("Tell me a very long story about a lighthouse.", context)
    with anyio.fail_after(120):
        async for event in run:
            if isinstance(event, TextDelta):
                run.interrupt()
    assert run.session_end is not None and run.session_end.stop_reason == StopReason.cancelled
    history = await context.get_history()  # the text streamed before the interrupt is kept
    assert [m.role for m in history] == ["user", "assistant"]
    assert history[1].text == run.session_end.final_text != ""
    with anyio.fail_after(30):
        while True:  # the server notices the closed connection and frees its only slot
            async with httpx.AsyncClient() as client:
                slots = (await client.get(server.base_url + "/slots")).json()
            if not any(slot.get("is_processing") for slot in slots):
                break
            await anyio.sleep(0.05)


async def test_server_killed_mid_stream_is_a_clear_error_not_a_hang() -> None:
    with LocalServer() as doomed:
        story = doomed.openai_transport(max_tokens=2000, timeout=10)
        agent = Agent("You are a storyteller.", story)
        context = MemoryContextStore()
        with anyio.fail_after(60):
            async with agent.run_stream("Tell me a long story.", context) as run:
                events: list[StreamEvent] = []
                async for event in run:
                    events.append(event)
                    deltas = sum(isinstance(e, TextDelta) for e in events)
                    if isinstance(event, TextDelta) and deltas == 3:
                        doomed.kill()
    errors = [e for e in events if isinstance(e, Error)]
    assert errors and isinstance(events[-1], SessionEndEvent)
    assert events[-1].stop_reason == StopReason.error
    assert [m.role for m in await context.get_history()] == ["user"]
    await story.aclose()


async def test_a_recorded_run_replays_offline_bit_for_bit(
    server: LocalServer, transport: Callable[..., Any], tmp_path: Path
) -> None:
    cassette = tmp_path / "run.jsonl"
    recorder = RecordingTransport(transport("openai", **REQUIRED), cassette)
    with anyio.fail_after(180):
        async with Agent("You are helpful.", recorder, [WEATHER], max_iterations=4).run_stream(
            "What is the weather in Oslo?", MemoryContextStore()
        ) as run:
            recorded = [e async for e in run]
    replayer = ReplayTransport(cassette)
    async with Agent("You are helpful.", replayer, [WEATHER], max_iterations=4).run_stream(
        "What is the weather in Oslo?", MemoryContextStore()
    ) as run:
        replayed = [e async for e in run]

    def same_in_any_run(events: list[StreamEvent]) -> list[Any]:
        """The events without what differs between two runs (session id, time)."""
        return [
            (e.stop_reason, e.total_usage, e.final_text, e.iterations)
            if isinstance(e, SessionEndEvent)
            else e
            for e in events
            if not isinstance(e, AgentStart)
        ]

    assert same_in_any_run(replayed) == same_in_any_run(recorded)
