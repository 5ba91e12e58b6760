"""The loop's user-visible features: steering, follow-ups, transform_context, message
events, the result, partial text after an interrupt, selector failure, tool timeouts,
large outputs and after-call hooks."""

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import anyio
import pytest

from swarm import (
    Agent,
    AgentStart,
    AuditLog,
    Error,
    IterationEnd,
    MaxIterationsReached,
    MemoryContextStore,
    Message,
    MessageEnd,
    SessionEndEvent,
    StopReason,
    StreamEvent,
    SubAgentEvent,
    TextDelta,
    Tool,
    ToolInputDelta,
    ToolResult,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseStart,
    TurnEnd,
    Usage,
    tool,
)
from swarm.scope import RunScope, current_scope, emit
from swarm.testing import (
    FunctionTransport,
    StubTransport,
    history_problems,
    make_text_response,
    make_tool_use_response,
)


@tool
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


def texts(messages: list[Message]) -> list[str]:
    return [m.text for m in messages if m.role == "user" and m.text]


@pytest.mark.anyio
async def test_steering_reaches_the_next_model_call_while_a_slow_tool_finishes() -> None:
    started, release = anyio.Event(), anyio.Event()

    @tool
    async def slow() -> str:
        """Take a while."""
        started.set()
        await release.wait()
        return "slow done"

    model = StubTransport(
        [make_tool_use_response("slow", "c1", {}), make_text_response("Redirected.")]
    )
    context = MemoryContextStore()
    stream = Agent("s", model, [slow]).run_stream("Do the slow thing.", context)

    async def steer_while_the_tool_runs() -> None:
        await started.wait()
        stream.steer("Stop and summarise instead.")
        release.set()

    async with stream, anyio.create_task_group() as group:
        group.start_soon(steer_while_the_tool_runs)
        await stream.get_session_end()
    assert stream.session_end is not None
    assert stream.session_end.stop_reason == StopReason.end_turn
    second = model.calls[1][0]
    last = second[-1]
    assert last.tool_results[0] == ToolResultBlock("c1", "slow done")  # not cancelled
    assert last.text == "Stop and summarise instead."
    assert history_problems(await context.get_history(), alternating=True) == []


@pytest.mark.anyio
async def test_steering_after_a_plain_answer_is_appended_and_the_loop_goes_on() -> None:
    model = StubTransport([make_text_response("First answer."), make_text_response("Second.")])
    context = MemoryContextStore()
    stream = Agent("s", model).run_stream("Hi", context)
    async with stream:
        async for event in stream:
            if isinstance(event, TextDelta) and event.delta == "First answer.":
                stream.steer("Also say it in French.")
    assert await stream.get_final_text() == "Second."
    history = await context.get_history()
    assert [(m.role, m.text) for m in history] == [
        ("user", "Hi"),
        ("assistant", "First answer."),
        ("user", "Also say it in French."),
        ("assistant", "Second."),
    ]


@pytest.mark.anyio
async def test_a_follow_up_arrives_after_the_answer() -> None:
    model = StubTransport([make_text_response("Done."), make_text_response("Tests written.")])
    context = MemoryContextStore()
    stream = Agent("s", model).run_stream("Fix the bug.", context)
    stream.follow_up("When you are done, also write a test.")
    async with stream:
        end = await stream.get_session_end()
    assert end.final_text == "Tests written." and end.iterations == 2
    assert [m.text for m in model.calls[1][0]] == [
        "Fix the bug.",
        "Done.",
        "When you are done, also write a test.",
    ]


@pytest.mark.anyio
async def test_steering_a_sub_agent_by_path() -> None:
    child_started, child_release = anyio.Event(), anyio.Event()

    @tool
    async def wait_here() -> str:
        """Wait."""
        child_started.set()
        await child_release.wait()
        return "waited"

    child_model = StubTransport(
        [make_tool_use_response("wait_here", "k1", {}), make_text_response("child done")]
    )
    child = Agent("child", child_model, [wait_here], name="worker")

    async def run_worker(task: str) -> str:
        scope = current_scope().child(path="boss/worker#1")
        return await child.run(task, MemoryContextStore(), scope=scope)

    delegate = Tool("delegate", run_worker, "Run the worker.", streams=True)

    boss_model = StubTransport(
        [make_tool_use_response("delegate", "b1", {"task": "go"}), make_text_response("ok")]
    )
    boss = Agent("boss", boss_model, [delegate], name="boss")
    stream = boss.run_stream("start", MemoryContextStore(), scope=RunScope(path="boss"))
    async with stream, anyio.create_task_group() as group:

        async def steer_when_running() -> None:
            await child_started.wait()
            stream.steer("Focus on the tests.", path="boss/worker#1")
            child_release.set()

        group.start_soon(steer_when_running)
        await stream.get_session_end()
    assert child_model.calls[1][0][-1].text == "Focus on the tests."
    assert all(m.text != "Focus on the tests." for m in boss_model.calls[1][0])
    with pytest.raises(LookupError, match="boss/worker#1"):
        stream.steer("too late", path="boss/worker#1")


@pytest.mark.anyio
async def test_transform_context_changes_what_is_sent_never_what_is_stored() -> None:
    async def add_time(messages: list[Message]) -> list[Message]:
        messages[0].content.clear()  # even changing what it gets must not reach the store
        for message in messages:
            for use in message.tool_uses:
                use.input.clear()
        return [Message.user("It is 10:00."), *messages]

    model = StubTransport(
        [make_tool_use_response("echo", "c1", {"text": "hi"}), make_text_response("Noted.")]
    )
    context = MemoryContextStore()
    agent = Agent("s", model, [echo], transform_context=add_time)
    await agent.run("What time is it?", context)
    assert model.calls[0][0][0].text == "It is 10:00."
    history = await context.get_history()
    assert history[0].text == "What time is it?" and history[-1].text == "Noted."
    assert history[1].tool_uses[0].input == {"text": "hi"}


@pytest.mark.anyio
async def test_a_failing_transform_context_ends_the_run_with_an_error() -> None:
    async def broken(messages: list[Message]) -> list[Message]:
        raise ValueError("no clock")

    agent = Agent("s", StubTransport([make_text_response("x")]), transform_context=broken)
    async with agent.run_stream("go", MemoryContextStore()) as stream:
        events = [e async for e in stream]
    assert isinstance(events[-2], Error) and "no clock" in events[-2].message
    end = events[-1]
    assert isinstance(end, SessionEndEvent) and end.stop_reason == StopReason.error
    assert isinstance(end.error, ValueError)


@pytest.mark.anyio
async def test_events_arrive_in_order_for_a_two_level_run() -> None:
    child = Agent("child", StubTransport([make_text_response("child says hi")]), name="kid")

    async def run_kid(task: str) -> str:
        scope = current_scope().child(path="top/kid#1")
        async with child.run_stream(task, MemoryContextStore(), scope=scope) as inner:
            async for event in inner:
                emit(SubAgentEvent("top/kid#1", event))
            return inner.final_text

    ask_kid = Tool("ask_kid", run_kid, "Ask the kid.", streams=True)

    model = StubTransport(
        [make_tool_use_response("ask_kid", "c1", {"task": "hi"}), make_text_response("bye")]
    )
    async with Agent("top", model, [ask_kid]).run_stream("go", MemoryContextStore()) as stream:
        events = [e async for e in stream]
    names = [
        type(e).__name__ if not isinstance(e, SubAgentEvent) else "sub:" + type(e.event).__name__
        for e in events
        if not isinstance(e, TextDelta | SubAgentEvent)
        or (isinstance(e, SubAgentEvent) and not isinstance(e.event, TextDelta))
    ]
    assert names == [
        "AgentStart",
        "MessageEnd",
        "TurnStart",
        "ToolUseStart",
        "ToolInputDelta",
        "IterationEnd",
        "ToolCallStart",
        "sub:AgentStart",
        "sub:MessageEnd",
        "sub:TurnStart",
        "sub:IterationEnd",
        "sub:MessageEnd",
        "sub:TurnEnd",
        "sub:SessionEndEvent",
        "ToolResult",
        "MessageEnd",
        "MessageEnd",
        "TurnEnd",
        "TurnStart",
        "IterationEnd",
        "MessageEnd",
        "TurnEnd",
        "SessionEndEvent",
    ]
    ends = [e for e in events if isinstance(e, TurnEnd)]
    assert ends[0].tool_results[0].content == "child says hi"
    assert [e.message.role for e in events if isinstance(e, MessageEnd)] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]


@pytest.mark.anyio
async def test_the_result_carries_text_iterations_time_session_and_error() -> None:
    model = StubTransport(
        [make_tool_use_response("echo", "c1", {"text": "a"}), make_text_response("The end.")]
    )
    context = MemoryContextStore()
    async with Agent("s", model, [echo]).run_stream("go", context) as stream:
        events = [e async for e in stream]
    assert isinstance(events[0], AgentStart) and events[0].session_id == context.session_id
    end = events[-1]
    assert isinstance(end, SessionEndEvent)
    assert end.final_text == "The end." and end.iterations == 2
    assert end.session_id == context.session_id
    assert end.duration_s > 0 and end.error is None
    assert end.cost_usd is None  # a scripted model has no price


@pytest.mark.anyio
async def test_max_iterations_is_its_own_stop_reason() -> None:
    def always(messages: Any, tools: Any, system: str) -> Iterable[StreamEvent]:
        return make_tool_use_response("echo", f"c{len(messages)}", {"text": "x"})

    agent = Agent("s", FunctionTransport(always), [echo], max_iterations=2)
    async with agent.run_stream("go", MemoryContextStore()) as stream:
        end = await stream.get_session_end()
    assert end.stop_reason == StopReason.max_iterations and end.iterations == 2
    assert isinstance(end.error, MaxIterationsReached)


@pytest.mark.anyio
async def test_interrupt_keeps_the_text_streamed_so_far() -> None:
    class Endless:
        async def stream(self, messages: Any, tools: Any, system: str) -> Any:
            yield TextDelta(0, "The answer is ")
            yield TextDelta(0, "probably")
            await anyio.sleep_forever()

    context = MemoryContextStore()
    stream = Agent("s", Endless()).run_stream("go", context)
    async with stream:
        async for event in stream:
            if isinstance(event, TextDelta) and event.delta == "probably":
                stream.interrupt()
    assert stream.session_end is not None
    assert stream.session_end.stop_reason == StopReason.cancelled
    assert stream.final_text == "The answer is probably"
    history = await context.get_history()
    assert [(m.role, m.text) for m in history] == [
        ("user", "go"),
        ("assistant", "The answer is probably"),
    ]


@pytest.mark.anyio
async def test_a_failing_selector_ends_the_run_with_an_error_not_a_raise() -> None:
    class Broken:
        async def select(self, messages: Any, tools: Any) -> list[Tool[Any]]:
            raise RuntimeError("selector exploded")

    agent = Agent("s", StubTransport([make_text_response("x")]), [echo], selector=Broken())
    async with agent.run_stream("go", MemoryContextStore()) as stream:
        events = [e async for e in stream]
    assert isinstance(events[-2], Error) and "selector exploded" in events[-2].message
    assert isinstance(events[-1], SessionEndEvent)
    assert events[-1].stop_reason == StopReason.error


@pytest.mark.anyio
async def test_a_hung_tool_is_stopped_by_the_agent_tool_timeout() -> None:
    @tool
    async def hang() -> str:
        """Never return."""
        await anyio.sleep_forever()
        return ""

    assert Agent("s", StubTransport([])).tool_timeout == 600  # the default: 10 minutes
    model = StubTransport([make_tool_use_response("hang", "c1", {}), make_text_response("ok")])
    agent = Agent("s", model, [hang], tool_timeout=0.05)
    async with agent.run_stream("go", MemoryContextStore()) as stream:
        results = [e async for e in stream if isinstance(e, ToolResult)]
    assert results[0].is_error and "timed out after 0.05s" in results[0].content


@pytest.mark.anyio
async def test_each_call_keeps_its_own_time_limit_after_quick_calls_before_it() -> None:
    """Calls well within the limit first, then one that hangs: the hung one is cut at
    its own limit (counted from its start, not from the first call's), and none of the
    others is cut."""

    @tool
    async def step(hang: bool) -> str:
        """Take a tenth of the limit, or never return."""
        if hang:
            await anyio.sleep_forever()
        await anyio.sleep(0.1)
        return "quick"

    turns = [make_tool_use_response("step", f"q{i}", {"hang": False}) for i in range(4)]
    turns.append(make_tool_use_response("step", "h", {"hang": True}))
    turns.append(make_tool_use_response("step", "after", {"hang": False}))
    agent = Agent("s", StubTransport([*turns, make_text_response("ok")]), [step], tool_timeout=1)
    with anyio.fail_after(30):  # a bound on a hang, should the limit be lost
        async with agent.run_stream("go", MemoryContextStore()) as stream:
            results = [e async for e in stream if isinstance(e, ToolResult)]
            end = stream.session_end
    assert [r.content for r in results if not r.is_error] == ["quick"] * 5
    assert [r.tool_use_id for r in results if r.is_error] == ["h"]
    assert "timed out after 1s" in results[4].content
    assert end is not None and end.stop_reason == StopReason.end_turn


@pytest.mark.anyio
async def test_fork_and_get_history_cannot_alter_the_store() -> None:
    store = MemoryContextStore([Message.user("original")])
    forked = await store.fork()
    (await forked.get_history())[0].content.clear()
    (await store.get_history())[0].content.clear()
    await forked.append(Message.user("only in the fork"))
    forked_history = await forked.get_history()
    forked_history[0].content.append(forked_history[1].content[0])
    assert [m.text for m in await store.get_history()] == ["original"]
    assert [m.text for m in await forked.get_history()] == ["original", "only in the fork"]


@pytest.mark.anyio
async def test_a_5_mb_tool_output_is_saved_and_the_model_gets_the_head(tmp_path: Path) -> None:
    big = "".join(f"line {i:07d}\n" for i in range(400_000))  # about 5 MB

    @tool
    async def dump() -> str:
        """Print a lot."""
        return big

    seen: list[tuple[list[Message], list[str]]] = []

    def respond(messages: list[Message], tools: Any, system: str) -> Iterable[StreamEvent]:
        seen.append((messages, [t.name for t in tools]))
        if len(seen) == 1:
            return make_tool_use_response("dump", "c1", {})
        if len(seen) == 2:
            return make_tool_use_response("read_output", "c2", {"call_id": "c1", "offset": 60})
        return make_text_response("Read it.")

    scope = RunScope(path="", output_dir=tmp_path / "outputs")
    agent = Agent("s", FunctionTransport(respond), [dump], max_result_chars=1000)
    async with agent.run_stream("go", MemoryContextStore(), scope=scope) as stream:
        results = [e async for e in stream if isinstance(e, ToolResult)]
    shown = seen[1][0][-1].tool_results[0]
    assert len(shown.text) < 2000 and shown.text.startswith("line 0000000\n")
    assert "5,200,000 characters" in shown.text and "read_output" in shown.text
    saved = Path(results[0].details["saved_output"])  # type: ignore[index]
    assert saved.parent == tmp_path / "outputs"
    assert await anyio.Path(saved).read_text() == big
    assert "read_output" in seen[1][1] and "read_output" not in seen[0][1]
    assert results[1].content.startswith(big[60:560])


@pytest.mark.anyio
async def test_read_output_reads_only_what_the_run_saved(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")

    @tool
    async def dump() -> str:
        """Print a lot."""
        return "x" * 5000

    calls = iter(
        [
            make_tool_use_response("dump", "c1", {}),
            make_tool_use_response("read_output", "c2", {"call_id": str(secret)}),
            make_tool_use_response("read_output", "c3", {"call_id": "../secret"}),
            make_text_response("done"),
        ]
    )
    scope = RunScope(output_dir=tmp_path / "outputs")
    model = FunctionTransport(lambda m, t, s: next(calls))
    agent = Agent("s", model, [dump], max_result_chars=100)
    async with agent.run_stream("go", MemoryContextStore(), scope=scope) as stream:
        results = [e async for e in stream if isinstance(e, ToolResult)]
    assert [r.is_error for r in results] == [False, True, True]
    assert "saved_output" in (results[0].details or {})
    assert all("do not read" not in r.content for r in results)
    assert "No saved output for call" in results[1].content


class Redact:
    """Replaces a secret in every result."""

    name = "redact"

    async def after(
        self, tool: str, arguments: dict[str, Any], result: ToolResultBlock
    ) -> ToolResultBlock | None:
        if "hunter2" not in result.text:
            return None
        return ToolResultBlock(result.tool_use_id, result.text.replace("hunter2", "[redacted]"))


class Explodes:
    """A hook that fails."""

    name = "explodes"

    async def after(
        self, tool: str, arguments: dict[str, Any], result: ToolResultBlock
    ) -> ToolResultBlock | None:
        raise RuntimeError("boom")


@pytest.mark.anyio
async def test_an_after_call_hook_redacts_the_result_and_the_audit_log_says_so(
    tmp_path: Path,
) -> None:
    @tool
    async def read_config() -> str:
        """Read the configuration."""
        return "the password is hunter2"

    model = StubTransport(
        [make_tool_use_response("read_config", "c1", {}), make_text_response("ok")]
    )
    context = MemoryContextStore()
    with AuditLog(tmp_path / "audit.jsonl", fsync=False) as audit:
        scope = RunScope(observers=(audit,))
        agent = Agent("s", model, [read_config], after_call=(Redact(),))
        await agent.run("go", context, scope=scope)
    sent = model.calls[1][0][-1].tool_results[0].text
    assert sent == "the password is [redacted]"
    assert "hunter2" not in str(await context.get_history())
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    finish = [r for r in records if r["event"] == "finish"]
    assert finish[0]["after"] == ["redact"]


@pytest.mark.anyio
async def test_a_failing_after_call_hook_withholds_the_result() -> None:
    model = StubTransport(
        [make_tool_use_response("echo", "c1", {"text": "hunter2"}), make_text_response("ok")]
    )
    agent = Agent("s", model, [echo], after_call=(Explodes(),))
    await agent.run("go", MemoryContextStore())
    sent = model.calls[1][0][-1].tool_results[0]
    assert sent.is_error and "withheld" in sent.text and "hunter2" not in sent.text


@pytest.mark.anyio
async def test_a_huge_error_result_is_saved_too_and_stays_an_error(tmp_path: Path) -> None:
    @tool
    async def fail_loudly() -> str:
        """Fail with a long message."""
        raise RuntimeError("x" * 50_000)

    model = StubTransport(
        [make_tool_use_response("fail_loudly", "c1", {}), make_text_response("ok")]
    )
    agent = Agent("s", model, [fail_loudly], max_result_chars=1000)
    await agent.run("go", MemoryContextStore(), scope=RunScope(output_dir=tmp_path))
    sent = model.calls[1][0][-1].tool_results[0]
    assert sent.is_error and len(sent.text) < 2000 and "read_output" in sent.text


@pytest.mark.anyio
async def test_calls_that_share_an_id_or_have_none_each_get_their_own(tmp_path: Path) -> None:
    """A model that gives two calls one id (or none) must not leave a history a provider
    refuses, nor an audit log in which two calls look like one."""
    ran: list[int] = []

    @tool
    async def act(n: int) -> str:
        """Act."""
        ran.append(n)
        return f"did {n}"

    def respond(messages: list[Message], tools: Any, system: str) -> Iterable[StreamEvent]:
        if len(messages) > 1:
            return make_text_response("ok")
        events: list[StreamEvent] = []
        for index, (call_id, n) in enumerate([("same", 1), ("same", 2), ("", 3)]):
            events += [
                ToolUseStart(index, call_id, "act"),
                ToolInputDelta(index, call_id, json.dumps({"n": n})),
            ]
        return [*events, IterationEnd(1, StopReason.tool_use, Usage())]

    context = MemoryContextStore()
    with AuditLog(tmp_path / "audit.jsonl", fsync=False) as audit:
        agent = Agent("s", FunctionTransport(respond), [act])
        async with agent.run_stream("go", context, scope=RunScope(observers=(audit,))) as stream:
            events = [e async for e in stream]
    assert ran == [1, 2, 3]
    history = await context.get_history()
    assert history_problems(history) == []
    uses = history[1].tool_uses
    assert uses[0].id == "same" and len({u.id for u in uses}) == 3
    assert [u.input for u in uses] == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert [r.tool_use_id for r in history[2].tool_results] == [u.id for u in uses]
    shown = [e.tool_use_id for e in events if isinstance(e, ToolUseStart)]
    assert shown == [u.id for u in uses]  # the reader sees the ids that are stored
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    decided = [r["call_id"] for r in records if r["event"] == "decision"]
    assert sorted(decided) == sorted(u.id for u in uses)


def test_history_problems_sees_a_call_id_used_twice() -> None:
    uses = [ToolUseBlock("x", "act", {}), ToolUseBlock("x", "act", {})]
    results = [ToolResultBlock("x", "a"), ToolResultBlock("x", "b")]
    history = [Message.user("go"), Message("assistant", uses), Message("user", results)]
    assert history_problems(history) == [
        "message 1 uses a call id twice",
        "message 2 uses a call id twice",
    ]
