from collections.abc import Iterable
from typing import Any

import anyio
import pytest

from swarm import (
    Agent,
    Error,
    IterationEnd,
    MaxIterationsReached,
    MemoryContextStore,
    Message,
    Progress,
    SessionEndEvent,
    StopReason,
    StreamEvent,
    TextBlock,
    TextDelta,
    Tool,
    ToolOutputDelta,
    ToolResult,
    ToolResultBlock,
    ToolUseBlock,
    TransportError,
    Usage,
    tool,
)
from swarm.testing import (
    FunctionTransport,
    StubTransport,
    history_problems,
    make_text_response,
    make_tool_use_response,
    make_tool_uses_response,
)


@tool
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


async def collect(agent: Agent, task: str | None, context: MemoryContextStore) -> list[StreamEvent]:
    async with agent.run_stream(task, context) as stream:
        return [event async for event in stream]


def assert_history_valid(history: list[Message]) -> None:
    assert history_problems(history, alternating=False) == []


@pytest.mark.anyio
async def test_text_only_run_returns_final_text_and_stores_history() -> None:
    context = MemoryContextStore()
    agent = Agent("Be brief.", StubTransport([make_text_response("Hello!")]))
    assert await agent.run("Hi", context) == "Hello!"
    history = await context.get_history()
    assert [(m.role, m.text) for m in history] == [("user", "Hi"), ("assistant", "Hello!")]


@pytest.mark.anyio
async def test_tool_loop_feeds_results_back_to_the_model() -> None:
    model = StubTransport(
        [make_tool_use_response("echo", "c1", {"text": "ping"}), make_text_response("pong")]
    )
    context = MemoryContextStore()
    events = await collect(Agent("s", model, [echo]), "go", context)
    assert [type(e).__name__ for e in events] == [
        "AgentStart",
        "MessageEnd",
        "TurnStart",
        "ToolUseStart",
        "ToolInputDelta",
        "IterationEnd",
        "ToolCallStart",
        "ToolResult",
        "MessageEnd",
        "MessageEnd",
        "TurnEnd",
        "TurnStart",
        "TextDelta",
        "IterationEnd",
        "MessageEnd",
        "TurnEnd",
        "SessionEndEvent",
    ]
    second_call_messages = model.calls[1][0]
    assert second_call_messages[-1].tool_results[0] == ToolResultBlock("c1", "ping")
    end = events[-1]
    assert isinstance(end, SessionEndEvent)
    assert (end.stop_reason, end.total_usage) == (StopReason.end_turn, Usage(20, 10))


@pytest.mark.anyio
async def test_system_prompt_and_tools_reach_the_transport() -> None:
    model = StubTransport([make_text_response()])
    await Agent("You are terse.", model, [echo]).run("x", MemoryContextStore())
    _, tools, system = model.calls[0]
    assert system == "You are terse." and [t.name for t in tools] == ["echo"]


@pytest.mark.anyio
async def test_parallel_calls_really_overlap_and_results_keep_call_order() -> None:
    arrived = 0
    everyone_here = anyio.Event()

    async def meet(n: int) -> str:
        nonlocal arrived
        arrived += 1
        if arrived == 3:
            everyone_here.set()
        await everyone_here.wait()  # returns only if all three calls are in flight at once
        return f"met {n}"

    model = StubTransport(
        [
            make_tool_uses_response([("meet", f"c{n}", {"n": n}) for n in (1, 2, 3)]),
            make_text_response(),
        ]
    )
    context = MemoryContextStore()
    with anyio.fail_after(5):  # a deadlock guard, not a timing assertion
        await Agent("s", model, [Tool("meet", meet)]).run("go", context)
    history = await context.get_history()
    assert [r.content for r in history[2].tool_results] == ["met 1", "met 2", "met 3"]


@pytest.mark.anyio
async def test_unknown_tool_lists_the_available_ones() -> None:
    model = StubTransport([make_tool_use_response("ecko", "c1", {}), make_text_response()])
    events = await collect(Agent("s", model, [echo]), "go", MemoryContextStore())
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.is_error and result.content == "Unknown tool 'ecko'. Available tools: echo."


@pytest.mark.anyio
async def test_unparseable_json_arguments_ask_for_valid_json_and_loop_goes_on() -> None:
    model = StubTransport(
        [
            make_tool_uses_response([("echo", "c1", '{"text": "unterminated')]),
            make_text_response("recovered"),
        ]
    )
    context = MemoryContextStore()
    events = await collect(Agent("s", model, [echo]), "go", context)
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.is_error and "not valid JSON" in result.content
    assert events[-1].stop_reason == StopReason.end_turn  # type: ignore[union-attr]
    assert_history_valid(await context.get_history())


@pytest.mark.anyio
async def test_validation_failure_names_the_field() -> None:
    model = StubTransport(
        [make_tool_use_response("echo", "c1", {"txt": "x"}), make_text_response()]
    )
    events = await collect(Agent("s", model, [echo]), "go", MemoryContextStore())
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.is_error
    assert "field 'text': Field required" in result.content
    assert "field 'txt': unexpected field" in result.content


@pytest.mark.anyio
async def test_handler_exception_becomes_error_result() -> None:
    async def fail() -> str:
        raise ValueError("disk full")

    model = StubTransport([make_tool_use_response("fail", "c1", {}), make_text_response("ok")])
    events = await collect(Agent("s", model, [Tool("fail", fail)]), "go", MemoryContextStore())
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.is_error and result.content == "Tool 'fail' failed: ValueError: disk full"


@pytest.mark.anyio
async def test_timed_out_call_becomes_error_result_using_the_agent_default() -> None:
    async def hang() -> str:
        await anyio.sleep_forever()
        return ""

    model = StubTransport([make_tool_use_response("hang", "c1", {}), make_text_response()])
    agent = Agent("s", model, [Tool("hang", hang)], tool_timeout=0.01)
    events = await collect(agent, "go", MemoryContextStore())
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.is_error and "timed out after 0.01s" in result.content


@pytest.mark.anyio
async def test_transport_exception_ends_session_with_error_not_raise() -> None:
    async def broken(messages: Any, tools: Any, system: str) -> Iterable[StreamEvent]:
        raise TransportError("503 from provider", status=503, retryable=True)

    context = MemoryContextStore()
    events = await collect(Agent("s", FunctionTransport(broken)), "go", context)
    assert isinstance(events[-2], Error) and "503 from provider" in events[-2].message
    end = events[-1]
    assert isinstance(end, SessionEndEvent)
    assert (end.stop_reason, end.total_usage) == (StopReason.error, Usage())
    assert isinstance(end.error, TransportError) and end.error.status == 503
    assert [m.role for m in await context.get_history()] == ["user"]


class FailingStore(MemoryContextStore):
    """Fails (as a full disk would) on the given write; the writes before it stay."""

    def __init__(self, failing_write: int) -> None:
        super().__init__()
        self.writes = 0
        self.failing_write = failing_write

    async def _write(self) -> None:
        self.writes += 1
        if self.writes == self.failing_write:
            raise OSError(28, "No space left on device")

    async def append(self, message: Message) -> None:
        await self._write()
        await super().append(message)

    async def append_turn(self, messages: Any, input_tokens: int, output_tokens: int) -> None:
        await self._write()
        await super().append_turn(messages, input_tokens, output_tokens)


@pytest.mark.anyio
@pytest.mark.parametrize("failing_write", [1, 2, 3], ids=["task", "first turn", "last turn"])
async def test_a_failing_store_ends_the_run_with_an_error_not_a_raise(failing_write: int) -> None:
    model = StubTransport(
        [make_tool_use_response("echo", "c1", {"text": "hi"}), make_text_response("done")]
    )
    context = FailingStore(failing_write)
    events = await collect(Agent("sys", model, [echo]), "go", context)
    end = events[-1]
    assert isinstance(end, SessionEndEvent) and end.stop_reason == StopReason.error
    errors = [e for e in events if isinstance(e, Error)]
    assert [e.message for e in errors] == [
        "the context store failed: OSError: [Errno 28] No space left on device"
    ]
    assert_history_valid(await context.get_history())  # what was stored before stays valid


@pytest.mark.anyio
async def test_error_event_from_transport_ends_session() -> None:
    model = StubTransport([[TextDelta(0, "partial"), Error(RuntimeError("stream broke"))]])
    events = await collect(Agent("s", model), "go", MemoryContextStore())
    assert isinstance(events[-2], Error) and events[-2].message == "stream broke"
    assert events[-1].stop_reason == StopReason.error  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_transport_that_cannot_start_is_an_error_not_a_raise() -> None:
    from swarm import DummyCompletionTransport

    events = await collect(Agent("s", DummyCompletionTransport()), "go", MemoryContextStore())
    assert isinstance(events[-2], Error) and "agent.copy(transport=" in events[-2].message


@pytest.mark.anyio
async def test_max_iterations_has_its_stop_reason_and_last_message_only_on_last_iteration() -> None:
    seen: list[list[Message]] = []

    def always_call(messages: list[Message], tools: Any, system: str) -> list[StreamEvent]:
        seen.append(messages)
        return make_tool_use_response("echo", f"c{len(seen)}", {"text": "again"})

    last = Message.user("Answer now without tools.")
    agent = Agent(
        "s", FunctionTransport(always_call), [echo], max_iterations=3, last_iteration_message=last
    )
    context = MemoryContextStore()
    events = await collect(agent, "go", context)
    assert [m[-1] == last for m in seen] == [False, False, True]
    assert isinstance(events[-2], Error) and "limit of 3 iterations" in events[-2].message
    end = events[-1]
    assert isinstance(end, SessionEndEvent)
    assert end.stop_reason == StopReason.max_iterations and end.iterations == 3
    assert isinstance(end.error, MaxIterationsReached)
    history = await context.get_history()
    assert last not in history
    assert "Not run" in history[-1].tool_results[0].text
    assert_history_valid(history)


@pytest.mark.anyio
async def test_usage_is_summed_over_iterations() -> None:
    model = StubTransport(
        [
            make_tool_use_response("echo", "c1", {"text": "a"}, usage=Usage(100, 7)),
            make_text_response("b", usage=Usage(150, 3)),
        ]
    )
    events = await collect(Agent("s", model, [echo]), "go", MemoryContextStore())
    ends = [e for e in events if isinstance(e, IterationEnd)]
    assert [e.iteration for e in ends] == [1, 2]
    assert events[-1].total_usage == Usage(250, 10)  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_max_tokens_without_tool_calls_is_the_stop_reason() -> None:
    model = StubTransport(
        [[TextDelta(0, "cut"), IterationEnd(1, StopReason.max_tokens, Usage(1, 1))]]
    )
    events = await collect(Agent("s", model), "go", MemoryContextStore())
    assert events[-1].stop_reason == StopReason.max_tokens  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_progress_streams_as_tool_output_deltas() -> None:
    async def build(progress: Progress) -> str:
        progress("compiling")
        progress("linking")
        return "built"

    model = StubTransport([make_tool_use_response("build", "c1", {}), make_text_response()])
    events = await collect(Agent("s", model, [Tool("build", build)]), "go", MemoryContextStore())
    deltas = [e.delta for e in events if isinstance(e, ToolOutputDelta)]
    assert deltas == ["compiling", "linking"]


@pytest.mark.anyio
async def test_details_are_kept_in_events_and_history() -> None:
    from swarm import ToolOutput

    async def lookup() -> ToolOutput:
        return ToolOutput("3 rows", details={"rows": [1, 2, 3]})

    model = StubTransport([make_tool_use_response("lookup", "c1", {}), make_text_response()])
    context = MemoryContextStore()
    events = await collect(Agent("s", model, [Tool("lookup", lookup)]), "go", context)
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.details == {"rows": [1, 2, 3]}
    assert (await context.get_history())[2].tool_results[0].details == {"rows": [1, 2, 3]}


@pytest.mark.anyio
async def test_cancelling_the_consumer_mid_tool_leaves_a_valid_history() -> None:
    started = anyio.Event()

    async def slow() -> str:
        started.set()
        await anyio.sleep_forever()
        return ""

    model = StubTransport(
        [
            make_tool_uses_response([("slow", "c1", {}), ("echo", "c2", {"text": "fast"})]),
            make_text_response(),
        ]
    )
    context = MemoryContextStore()
    agent = Agent("s", model, [Tool("slow", slow), echo])
    async with anyio.create_task_group() as group:

        async def consume() -> None:
            async with agent.run_stream("go", context) as stream:
                async for _ in stream:
                    pass

        group.start_soon(consume)
        await started.wait()
        group.cancel_scope.cancel()
    history = await context.get_history()
    assert_history_valid(history)
    results = {r.tool_use_id: r for r in history[-1].tool_results}
    assert results["c1"].is_error and "Cancelled" in results["c1"].text
    assert results["c2"].text == "fast"


@pytest.mark.anyio
async def test_aclose_mid_tool_leaves_a_valid_history() -> None:
    async def slow(progress: Progress) -> str:
        progress("working")
        await anyio.sleep_forever()
        return ""

    model = StubTransport([make_tool_use_response("slow", "c1", {}), make_text_response()])
    context = MemoryContextStore()
    stream = Agent("s", model, [Tool("slow", slow)]).run_stream("go", context)
    async for event in stream:
        if isinstance(event, ToolOutputDelta):
            break
    await stream.aclose()
    history = await context.get_history()
    assert_history_valid(history)
    assert history[-1].tool_results[0].is_error


@pytest.mark.anyio
async def test_aclose_mid_concurrent_calls_stops_them_and_leaves_a_valid_history() -> None:
    stopped: list[int] = []

    async def slow(n: int, progress: Progress) -> str:
        progress("working")
        try:
            await anyio.sleep_forever()
        finally:
            stopped.append(n)
        return ""

    turn = make_tool_uses_response([("slow", "c1", {"n": 1}), ("slow", "c2", {"n": 2})])
    context = MemoryContextStore()
    stream = Agent("s", StubTransport([turn]), [Tool("slow", slow)]).run_stream("go", context)
    async for event in stream:
        if isinstance(event, ToolOutputDelta):
            break
    await stream.aclose()
    assert sorted(stopped) == [1, 2]  # neither call is left running
    history = await context.get_history()
    assert_history_valid(history)
    assert all(r.is_error for r in history[-1].tool_results)


@pytest.mark.anyio
async def test_interrupt_during_tools_ends_with_cancelled_and_valid_history() -> None:
    started = anyio.Event()

    async def slow(n: int, progress: Progress) -> str:
        started.set()
        await anyio.sleep_forever()
        return ""

    model = StubTransport(
        [
            make_tool_uses_response([("slow", "c1", {"n": 1}), ("slow", "c2", {"n": 2})]),
            make_text_response(),
        ]
    )
    context = MemoryContextStore()
    stream = Agent("s", model, [Tool("slow", slow)]).run_stream("go", context)
    async with anyio.create_task_group() as group:

        async def stop_when_started() -> None:
            await started.wait()
            stream.interrupt()

        group.start_soon(stop_when_started)
        end = await stream.get_session_end()
    assert end.stop_reason == StopReason.cancelled
    history = await context.get_history()
    assert_history_valid(history)
    assert all(r.is_error for r in history[-1].tool_results)


@pytest.mark.anyio
async def test_interrupt_during_model_stream_stops_promptly() -> None:
    class Endless:
        async def stream(self, messages: Any, tools: Any, system: str) -> Any:
            yield TextDelta(0, "thinking")
            await anyio.sleep_forever()

    context = MemoryContextStore()
    stream = Agent("s", Endless()).run_stream("go", context)
    async for event in stream:
        if isinstance(event, TextDelta):
            stream.interrupt()
    assert stream.session_end is not None
    assert stream.session_end.stop_reason == StopReason.cancelled


@pytest.mark.anyio
async def test_selector_trims_the_offered_tools() -> None:
    class OnlyEcho:
        async def select(self, messages: Any, tools: Iterable[Tool[Any]]) -> list[Tool[Any]]:
            return [t for t in tools if t.name == "echo"]

    async def other() -> str:
        return ""

    model = StubTransport([make_text_response()])
    agent = Agent("s", model, [echo, Tool("other", other)], selector=OnlyEcho())
    await agent.run("go", MemoryContextStore())
    assert [t.name for t in model.calls[0][1]] == ["echo"]


@pytest.mark.anyio
async def test_run_with_none_continues_from_the_context() -> None:
    context = MemoryContextStore(
        [
            Message.user("go"),
            Message("assistant", [ToolUseBlock("c1", "echo", {"text": "x"})]),
            Message("user", [ToolResultBlock("c1", "x")]),
        ]
    )
    model = StubTransport([make_text_response("continued")])
    assert await Agent("s", model).run(None, context) == "continued"
    assert model.calls[0][0][-1].tool_results[0].text == "x"


@pytest.mark.anyio
async def test_user_message_may_carry_blocks() -> None:
    context = MemoryContextStore()
    await Agent("s", StubTransport([make_text_response()])).run(
        [TextBlock("a"), TextBlock("b")], context
    )
    assert (await context.get_history())[0].text == "ab"


def test_copy_replaces_fields_and_shares_the_rest() -> None:
    model = StubTransport([])
    agent = Agent("You are helpful.", model, [echo])
    strict = agent.copy(system="Be concise.")
    assert strict.system == "Be concise." and agent.system == "You are helpful."
    assert strict.transport is agent.transport and strict.tools == agent.tools


@pytest.mark.anyio
async def test_dispatch_tools_runs_calls_and_keeps_order() -> None:
    agent = Agent("s", StubTransport([]), [echo])
    results = await agent.dispatch_tools(
        [ToolUseBlock("a", "echo", {"text": "1"}), ToolUseBlock("b", "nope", {})], iteration=1
    )
    assert [(r.tool_use_id, r.is_error) for r in results] == [("a", False), ("b", True)]
