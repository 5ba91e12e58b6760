"""Loop overhead benchmarks (not part of the test run).

    python benchmarks/bench_loop.py

1. Per-iteration overhead of the loop: a zero-latency scripted model, one trivial tool call
   per iteration through a chain of 5 guards, MemoryContextStore. The handler and the
   guards never await, so the loop needs no cancel scope around them; case 1b has them
   each await once (as real tools and approval-asking guards do).
2. The same with SQLiteContextStore (durable), when it is available.
3. 1,000 tool calls of one response dispatched concurrently: wall time against the slowest
   single call.
4. Case 1 with an ``OtelObserver`` attached (an SDK tracer provider with no exporter: the
   cost of making the spans), when OpenTelemetry is installed. Case 1 is the run without.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from swarm import (
    Agent,
    ContextStore,
    IterationEnd,
    MemoryContextStore,
    Message,
    PermissionGuard,
    RunScope,
    StopReason,
    StreamEvent,
    TextDelta,
    Tool,
    ToolInputDelta,
    ToolUseStart,
    Usage,
)

ITERATIONS_PER_SESSION = 20


class PassThrough(PermissionGuard):
    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        return kwargs


class WaitingPassThrough(PermissionGuard):
    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        await anyio.lowlevel.checkpoint()
        return kwargs


class ScriptedModel:
    """Answers with one tool call until the session's last iteration, then with text."""

    def __init__(self, calls_per_session: int) -> None:
        self.calls_per_session = calls_per_session
        self.count = 0
        usage = Usage(100, 10)
        self.tool_turn: list[StreamEvent] = [
            ToolUseStart(0, "call", "noop"),
            ToolInputDelta(0, "call", '{"value": 1}'),
            IterationEnd(1, StopReason.tool_use, usage),
        ]
        self.text_turn: list[StreamEvent] = [
            TextDelta(0, "done"),
            IterationEnd(1, StopReason.end_turn, usage),
        ]

    async def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        self.count += 1
        turn = self.text_turn if self.count % self.calls_per_session == 0 else self.tool_turn
        for event in turn:
            yield event


async def noop(value: int) -> str:
    return "ok"


async def waiting_noop(value: int) -> str:
    await anyio.lowlevel.checkpoint()
    return "ok"


def make_agent(waiting: bool = False) -> Agent:
    guard = WaitingPassThrough if waiting else PassThrough
    handler = waiting_noop if waiting else noop
    return Agent(
        "bench",
        ScriptedModel(ITERATIONS_PER_SESSION),
        [Tool("noop", handler, guards=tuple(guard() for _ in range(5)))],
        max_iterations=ITERATIONS_PER_SESSION + 1,
    )


async def per_iteration(
    make_context: Any, sessions: int, observer: Any = None, *, waiting: bool = False
) -> float:
    """Microseconds per loop iteration (best of 5 rounds); ``observer`` sees every call
    and every event when given; ``waiting``: the handler and guards each await once."""
    agent = make_agent(waiting)
    scope = RunScope(path="bench", observers=(observer,)) if observer is not None else None
    rounds = []
    for _ in range(5):
        contexts: list[ContextStore] = [await make_context(i) for i in range(sessions)]
        start = time.perf_counter()
        for context in contexts:
            async with agent.run_stream("go", context, scope=scope) as stream:
                async for event in stream:
                    if observer is not None:
                        observer(event)
        elapsed = time.perf_counter() - start
        rounds.append(elapsed / (sessions * ITERATIONS_PER_SESSION) * 1e6)
        for context in contexts:
            await context.close()
    return min(rounds)


async def fan_out(calls: int) -> tuple[float, float]:
    """Wall time of ``calls`` concurrent calls against the slowest single call (seconds)."""
    delays = [0.05 + 0.05 * (i % 11) / 10 for i in range(calls)]

    async def wait(i: int) -> str:
        await anyio.sleep(delays[i])
        return "ok"

    turn: list[StreamEvent] = []
    for i in range(calls):
        turn += [ToolUseStart(i, f"c{i}", "wait"), ToolInputDelta(i, f"c{i}", f'{{"i": {i}}}')]
    turn.append(IterationEnd(1, StopReason.tool_use, Usage()))

    class FanOut:
        def __init__(self) -> None:
            self.first = True

        async def stream(
            self, messages: Any, tools: Any, system: str
        ) -> AsyncIterator[StreamEvent]:
            events = (
                turn
                if self.first
                else [TextDelta(0, "done"), IterationEnd(2, StopReason.end_turn, Usage())]
            )
            self.first = False
            for event in events:
                yield event

    agent = Agent("bench", FanOut(), [Tool("wait", wait)])
    start = time.perf_counter()
    await agent.run("go", MemoryContextStore())
    return time.perf_counter() - start, max(delays)


async def main() -> None:
    async def memory(_: int) -> ContextStore:
        return MemoryContextStore()

    mem = await per_iteration(memory, 200)
    print(f"loop iteration, 1 tool call, 5 guards, memory store: {mem:6.1f} µs (target < 40)")
    waits = await per_iteration(memory, 200, waiting=True)
    print(f"loop iteration, as 1, handler and guards await once: {waits:6.1f} µs")

    try:
        from swarm.context import SQLiteContextStore  # type: ignore[attr-defined]
    except ImportError:
        SQLiteContextStore = None  # noqa: N806
    if SQLiteContextStore is not None:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "bench.db"

            async def sqlite(i: int) -> ContextStore:
                store: ContextStore = SQLiteContextStore(db)
                return store

            durable = await per_iteration(sqlite, 50)
        print(
            f"loop iteration, 1 tool call, 5 guards, SQLite store: {durable:6.1f} µs (target < 400)"
        )

    try:
        from opentelemetry.sdk.trace import TracerProvider

        from swarm import OtelObserver
    except ImportError:
        print("OpenTelemetry not installed: the observer's cost is not measured")
    else:
        observer = OtelObserver("bench", model="bench", tracer_provider=TracerProvider())
        traced = await per_iteration(memory, 200, observer)
        print(f"loop iteration, as 1, with OtelObserver (no exporter): {traced:6.1f} µs")

    walls = []
    for _ in range(3):
        wall, slowest = await fan_out(1000)
        walls.append(wall)
    wall = statistics.median(walls)
    limit = slowest * 1.1 + 0.05
    print(
        f"1,000 concurrent tool calls: wall {wall * 1000:.1f} ms, slowest call "
        f"{slowest * 1000:.0f} ms, target <= {limit * 1000:.0f} ms"
    )


if __name__ == "__main__":
    anyio.run(main)
