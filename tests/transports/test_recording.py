import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from swarm import (
    Agent,
    Error,
    MemoryContextStore,
    Message,
    SessionEndEvent,
    StopReason,
    StreamEvent,
    TransportError,
    event_to_dict,
    tool,
)
from swarm.scope import current_scope, use_scope
from swarm.testing import (
    FunctionTransport,
    StubTransport,
    make_text_response,
    make_tool_use_response,
)
from swarm.tools import Tool
from swarm.transports import OpenAITransport, RecordingTransport, ReplayTransport

from .recordings import sse_body


@tool
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


def scripted() -> StubTransport:
    return StubTransport(
        [make_tool_use_response("echo", "c1", {"text": "ping"}), make_text_response("pong")]
    )


async def run(agent: Agent, task: str) -> tuple[list[StreamEvent], list[Message]]:
    context = MemoryContextStore()
    async with agent.run_stream(task, context) as stream:
        events = [e async for e in stream]
    return events, await context.get_history()


def dicts(events: list[StreamEvent]) -> list[dict[str, Any]]:
    """The events as dicts without what differs between any two runs (session id, time)."""
    run_specific = {"session_id", "duration_s"}
    return [{k: v for k, v in event_to_dict(e).items() if k not in run_specific} for e in events]


@pytest.mark.anyio
async def test_a_recorded_run_replays_bit_for_bit(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    recorded, recorded_history = await run(
        Agent("Be brief.", RecordingTransport(scripted(), cassette), [echo]), "go"
    )
    replayed, replayed_history = await run(
        Agent("Be brief.", ReplayTransport(cassette), [echo]), "go"
    )
    assert dicts(replayed) == dicts(recorded)
    assert replayed_history == recorded_history
    assert recorded_history[-1].text == "pong"


@pytest.mark.anyio
async def test_the_cassette_holds_each_request_and_the_events_returned(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    await run(Agent("Be brief.", RecordingTransport(scripted(), cassette), [echo]), "go")
    first, second = (json.loads(line) for line in cassette.read_text().splitlines())
    assert (first["path"], first["call"], second["call"]) == ("", 0, 1)
    assert first["request"]["system"] == "Be brief."
    assert first["request"]["tools"] == [
        {"name": "echo", "description": "Echo the text back.", "input_schema": echo.input_schema}
    ]
    assert first["request"]["messages"] == [Message.user("go").to_dict()]
    assert [e["type"] for e in first["events"]] == [
        "tool_use_start",
        "tool_input_delta",
        "iteration_end",
    ]
    assert second["request"]["messages"][-1]["content"][0]["type"] == "tool_result"


@pytest.mark.anyio
async def test_strict_replay_fails_with_a_diff_when_the_request_changed(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    await run(Agent("Be brief.", RecordingTransport(scripted(), cassette), [echo]), "go")
    replay = ReplayTransport(cassette)
    with pytest.raises(TransportError) as caught:
        _ = [e async for e in replay.stream([Message.user("went")], [echo], "Be brief.")]
    message = str(caught.value)
    assert "does not match the cassette" in message
    assert '-          "text": "go"' in message
    assert '+          "text": "went"' in message


@pytest.mark.anyio
async def test_strict_mismatch_ends_an_agent_run_with_the_error(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    await run(Agent("Be brief.", RecordingTransport(scripted(), cassette), [echo]), "go")
    events, _ = await run(Agent("Be verbose.", ReplayTransport(cassette), [echo]), "go")
    errors = [e for e in events if isinstance(e, Error)]
    assert len(errors) == 1 and "Be verbose." in errors[0].message
    end = events[-1]
    assert isinstance(end, SessionEndEvent) and end.stop_reason == StopReason.error


@pytest.mark.anyio
async def test_lenient_replay_serves_by_order_whatever_is_asked(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    await run(Agent("Be brief.", RecordingTransport(scripted(), cassette), [echo]), "go")
    events, history = await run(
        Agent("Something else.", ReplayTransport(cassette, strict=False), [echo]), "other task"
    )
    assert history[-1].text == "pong"
    assert isinstance(events[-1], SessionEndEvent)
    assert events[-1].stop_reason == StopReason.end_turn


@pytest.mark.anyio
async def test_running_out_of_recordings_is_a_clear_error(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    await run(
        Agent("s", RecordingTransport(StubTransport([make_text_response("hi")]), cassette)), "go"
    )
    replay = ReplayTransport(cassette)
    _ = [e async for e in replay.stream([Message.user("go")], [], "s")]
    with pytest.raises(TransportError, match="no recording #1"):
        _ = [e async for e in replay.stream([Message.user("go")], [], "s")]


@pytest.mark.anyio
async def test_a_transport_error_is_recorded_and_raised_again_on_replay(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"

    def fail(messages: list[Message], tools: list[Tool[Any]], system: str) -> list[StreamEvent]:
        raise TransportError("overloaded", status=529, retryable=True)

    recorder = RecordingTransport(FunctionTransport(fail), cassette)
    with pytest.raises(TransportError):
        _ = [e async for e in recorder.stream([Message.user("go")], [], "")]
    replay = ReplayTransport(cassette)
    with pytest.raises(TransportError, match="overloaded") as caught:
        _ = [e async for e in replay.stream([Message.user("go")], [], "")]
    assert (caught.value.status, caught.value.retryable) == (529, True)


async def agent_at(path: str, agent: Agent, task: str, out: dict[str, Any]) -> None:
    with use_scope(current_scope().child(path=path)):
        out[path] = await run(agent, task)


@pytest.mark.anyio
async def test_concurrent_agents_replay_by_path_whatever_the_interleaving(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"

    def respond(messages: list[Message], tools: list[Tool[Any]], system: str) -> list[StreamEvent]:
        path = current_scope().path
        if not messages[-1].tool_results:
            return make_tool_use_response("echo", f"{path}-call", {"text": path})
        return make_text_response(f"{path} done")

    recorder = RecordingTransport(FunctionTransport(respond), cassette)
    recorded: dict[str, Any] = {}
    async with anyio.create_task_group() as group:
        for path in ("lead/a", "lead/b", "lead/c"):
            group.start_soon(agent_at, path, Agent("s", recorder, [echo]), path, recorded)

    replay = ReplayTransport(cassette)
    replayed: dict[str, Any] = {}
    async with anyio.create_task_group() as group:
        for path in ("lead/c", "lead/a", "lead/b"):
            group.start_soon(agent_at, path, Agent("s", replay, [echo]), path, replayed)
    for path in ("lead/a", "lead/b", "lead/c"):
        assert dicts(replayed[path][0]) == dicts(recorded[path][0])
        assert replayed[path][1][-1].text == f"{path} done"


@pytest.mark.anyio
async def test_recordings_never_hold_the_api_key(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    secret = "sk-live-do-not-record-me"

    def handler(request: httpx.Request) -> httpx.Response:
        body = sse_body("openai-chat__refusal-deltas.sse.txt")
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    inner = OpenAITransport("gpt-4o", api_key=secret, client=client)
    recorder = RecordingTransport(inner, cassette)
    _ = [e async for e in recorder.stream([Message.user("go")], [], "")]
    text = cassette.read_text()
    assert secret not in text
    assert json.loads(text)["request"]["model"] == "gpt-4o"
    assert recorder.context_window == 128_000


@pytest.mark.anyio
async def test_a_typed_run_with_a_retry_replays_the_same_events_and_output(
    tmp_path: Path,
) -> None:
    from swarm.events import OutputInvalid

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    turns = [
        make_tool_use_response("final_answer", "c1", {"n": "two"}),
        make_tool_use_response("final_answer", "c2", {"n": 2}),
    ]
    cassette = tmp_path / "typed.jsonl"
    recorded, _ = await run(
        Agent("Count.", RecordingTransport(StubTransport(turns), cassette), output=schema), "go"
    )
    replayed, _ = await run(Agent("Count.", ReplayTransport(cassette), output=schema), "go")
    assert dicts(replayed) == dicts(recorded)
    assert [e.attempt for e in replayed if isinstance(e, OutputInvalid)] == [1]
    end = replayed[-1]
    assert isinstance(end, SessionEndEvent) and end.output == {"n": 2}
