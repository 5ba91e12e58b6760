"""Which waits of a lone tool call an interrupt or a time limit reaches, now that the
loop opens no cancel scope around guards and handlers that cannot wait; and the
stream's final text and end as the loop keeps them."""

import functools
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from swarm import (
    Agent,
    AgentStream,
    IterationEnd,
    MemoryContextStore,
    Message,
    PermissionGuard,
    SessionEndEvent,
    StopReason,
    StreamEvent,
    TextDelta,
    Tool,
    ToolResult,
    Usage,
)
from swarm._suspends import may_suspend
from swarm.testing import (
    StubTransport,
    history_problems,
    make_text_response,
    make_tool_use_response,
    make_tool_uses_response,
)


async def plain(x: int) -> int:
    return x + 1


async def awaits(x: int) -> int:
    await anyio.lowlevel.checkpoint()
    return x


async def loops(items: Any) -> int:
    async for _ in items:
        pass
    return 0


async def enters(lock: Any) -> int:
    async with lock:
        return 0


async def defines_but_never_awaits() -> int:
    async def inner() -> None:
        await anyio.sleep(1)

    inner().close()
    return 0


def sync(x: int) -> int:
    return x


class Guard(PermissionGuard):
    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        return kwargs


def test_only_coroutine_functions_that_never_await_are_known_not_to_wait() -> None:
    assert not may_suspend(plain)
    assert not may_suspend(defines_but_never_awaits)  # the nested function is its own code
    assert not may_suspend(Guard().check)  # a bound method: its function's code
    assert may_suspend(awaits)
    assert may_suspend(loops)
    assert may_suspend(enters)
    assert may_suspend(sync)  # may return anything awaitable
    assert may_suspend(functools.partial(plain, 1))
    assert may_suspend(lambda: plain(1))
    assert may_suspend(Guard())  # an object: its __call__ is not read


async def _interrupted_run(
    guard: PermissionGuard, handler: Any, waiting: anyio.Event
) -> tuple[SessionEndEvent, list[Message]]:
    """Run one guarded call, interrupt the run once ``waiting`` is set; how it ended and
    the history it left."""
    model = StubTransport([make_tool_use_response("act", "c1", {}), make_text_response("x")])
    context = MemoryContextStore()
    agent = Agent("s", model, [Tool("act", handler, guards=(guard,))])
    stream = agent.run_stream("go", context)
    async with anyio.create_task_group() as group:

        async def stop() -> None:
            await waiting.wait()
            stream.interrupt()

        group.start_soon(stop)
        with anyio.fail_after(30):  # a wait the interrupt cannot reach would hang here
            end = await stream.get_session_end()
    history = await context.get_history()
    assert history_problems(history, alternating=False) == []
    return end, history


@pytest.mark.anyio
async def test_an_interrupt_reaches_a_lone_call_whose_guard_is_waiting() -> None:
    waiting, ran = anyio.Event(), []

    class Asks(PermissionGuard):
        async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
            waiting.set()
            await anyio.sleep_forever()  # as a guard waiting for a person's approval
            return kwargs

    async def act() -> str:
        ran.append("act")
        return "done"

    end, history = await _interrupted_run(Asks(), act, waiting)
    assert end.stop_reason == StopReason.cancelled
    assert ran == []  # the call never ran
    assert history[-1].tool_results[0].is_error


@pytest.mark.anyio
async def test_an_interrupt_reaches_a_lone_handler_that_waits_behind_a_guard_that_cannot() -> None:
    started = anyio.Event()

    async def act() -> str:
        started.set()
        await anyio.sleep_forever()
        return "never"

    end, history = await _interrupted_run(Guard(), act, started)
    assert end.stop_reason == StopReason.cancelled
    assert "Cancelled" in history[-1].tool_results[0].text


@pytest.mark.anyio
async def test_the_final_text_is_the_turn_s_when_its_iteration_end_arrives() -> None:
    model = StubTransport([make_text_response("first answer")])
    seen: list[str] = []
    async with Agent("s", model).run_stream("go", MemoryContextStore()) as stream:
        async for event in stream:
            if isinstance(event, IterationEnd):
                seen.append(stream.final_text)
    assert seen == ["first answer"]
    assert stream.session_end is not None and stream.session_end.final_text == "first answer"


@pytest.mark.anyio
async def test_a_stream_over_any_generator_works_out_its_text_and_end() -> None:
    async def events() -> AsyncIterator[StreamEvent]:
        yield TextDelta(0, "made ")
        yield TextDelta(0, "by hand")
        yield IterationEnd(1, StopReason.end_turn, Usage())
        yield SessionEndEvent(StopReason.end_turn, Usage(), final_text="made by hand")

    stream = AgentStream(events())  # type: ignore[arg-type]
    assert await stream.get_final_text() == "made by hand"
    assert stream.session_end is not None
    assert [e async for e in stream] == []  # ended


@pytest.mark.anyio
async def test_concurrent_calls_are_each_cut_at_their_own_limit_and_only_they() -> None:
    """One turn's calls run at once under one watchdog: the hung ones are cut at their
    own limits (the shorter first), the quick ones and one with a long limit finish."""

    async def step(wait: float) -> str:
        if wait < 0:
            await anyio.sleep_forever()
        await anyio.sleep(wait)
        return f"slept {wait}"

    calls = [
        ("short", "h1", {"wait": -1}),  # hangs, cut at 0.2 s
        ("long", "h2", {"wait": -1}),  # hangs, cut at 0.6 s
        ("short", "q1", {"wait": 0}),
        ("long", "q2", {"wait": 0.3}),  # past the short limit, within its own
        ("short", "q3", {"wait": 0.05}),
    ]
    tools = [Tool("short", step, timeout=0.2), Tool("long", step, timeout=0.6)]
    model = StubTransport([make_tool_uses_response(calls), make_text_response("ok")])
    with anyio.fail_after(30):  # a bound on a hang, should a limit be lost
        async with Agent("s", model, tools).run_stream("go", MemoryContextStore()) as stream:
            results = {e.tool_use_id: e async for e in stream if isinstance(e, ToolResult)}
            end = stream.session_end
    assert {i for i, r in results.items() if r.is_error} == {"h1", "h2"}
    assert "timed out after 0.2s" in results["h1"].content
    assert "timed out after 0.6s" in results["h2"].content
    assert [results[i].content for i in ("q1", "q2", "q3")] == [
        "slept 0.0",
        "slept 0.3",
        "slept 0.05",
    ]
    assert end is not None and end.stop_reason == StopReason.end_turn


@pytest.mark.anyio
async def test_the_watchdog_forgets_ended_calls_and_cancels_only_late_ones() -> None:
    from swarm.control import _Watchdog

    watchdog = _Watchdog.start()
    assert watchdog is not None
    now = watchdog.time()
    for _ in range(1000):  # a long run of calls that end in time
        watchdog.unwatch(watchdog.watch(anyio.CancelScope(), now + 600))
    assert len(watchdog._heap) <= 130  # ended calls do not pile up
    with anyio.CancelScope() as late, anyio.CancelScope() as done:
        watchdog.watch(late, now + 0.05)
        watchdog.unwatch(watchdog.watch(done, now + 0.05))
        await anyio.sleep(0.2)
    assert late.cancelled_caught and not done.cancel_called
    watchdog.close()
