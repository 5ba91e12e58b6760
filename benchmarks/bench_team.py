"""Delegation fan-out benchmark (not part of the test run).

    python benchmarks/bench_team.py [--workers 500] [--latency 0.05] [--runs 7] [--freeze]
                                    [--background]

One orchestrator response delegates to 500 sub-agents at once. Every model call takes
50 ms (a scripted model sleeping with anyio), so the critical path is three calls: the
orchestrator's delegation turn, one worker turn, the orchestrator's answer (150 ms).
Reports the wall time against that critical path (target: within 1.2x), next to the
floor: the same shape with bare anyio tasks and no framework at all (three sleeps, 500
tasks sleeping in between), measured in the same process. Also reports the full garbage
collections that fell inside the measured runs, and the process's resident memory after
the sub-agents finished, and what one waiting sub-agent holds: the objects the collector
tracks and the bytes allocated, taken while all of them wait for their model call (one
more fan-out, untimed, under ``tracemalloc``). Every object a sub-agent holds while it waits
outlives the young collections, so full collections grow with it: that is most of the gap
between default garbage collection and ``--freeze``, which first takes the startup heap
out of the collector's full passes with ``gc.freeze()``, as the ``swarm`` command does.

``--background`` measures the same fan-out a second way beside the first: the
orchestrator starts every worker with ``background: true``, then calls ``agents wait``
(a model call that overlaps the workers' own), then answers; the critical path is the
same three calls. Both are reported, with what each costs per sub-agent over the floor.
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio

from swarm import (
    IterationEnd,
    Message,
    StopReason,
    StreamEvent,
    TextDelta,
    Tool,
    ToolInputDelta,
    ToolUseStart,
    Usage,
)
from swarm.scope import current_scope
from swarm.team import AgentSpec, Team
from swarm.team.delegation import run_team

WORKERS = 500
LATENCY = 0.05


class SlowModel:
    """LATENCY per call; the orchestrator delegates to every worker at once, then answers.
    ``on_all_waiting`` (if set) runs once every worker is in its model call."""

    def __init__(
        self, on_all_waiting: Callable[[], None] | None = None, *, background: bool = False
    ) -> None:
        self.on_all_waiting = on_all_waiting
        self.background = background
        self.waiting = 0

    async def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        if system == "worker" and self.on_all_waiting is not None:
            self.waiting += 1
            if self.waiting == WORKERS:
                self.on_all_waiting()
        await anyio.sleep(LATENCY)
        usage = Usage(100, 10)
        turn = sum(1 for m in messages if m.role == "assistant")
        if system == "orchestrator" and turn == 0:
            flag = ', "background": true' if self.background else ""
            for i in range(WORKERS):
                yield ToolUseStart(i, f"d{i}", "worker")
                yield ToolInputDelta(i, f"d{i}", f'{{"task": "part {i}"{flag}}}')
            yield IterationEnd(1, StopReason.tool_use, usage)
            return
        if system == "orchestrator" and turn == 1 and self.background:
            yield ToolUseStart(0, "wait", "agents")
            yield ToolInputDelta(0, "wait", '{"action": "wait"}')
            yield IterationEnd(1, StopReason.tool_use, usage)
            return
        path = current_scope().path
        yield TextDelta(0, f"done: {path}")
        yield IterationEnd(1, StopReason.end_turn, usage)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class FullCollections:
    """Counts the full (generation 2) garbage collections and the time they take."""

    def __init__(self) -> None:
        self.count = 0
        self.seconds = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.count += 1
            self.seconds += time.perf_counter() - self._started


async def background_fan_out(model: SlowModel | None = None) -> tuple[float, int]:
    """The fan-out with every worker started in the background, then ``agents wait``."""
    return await fan_out(model or SlowModel(background=True))


async def fan_out(model: SlowModel | None = None) -> tuple[float, int]:
    team = Team(
        [
            AgentSpec("orchestrator", "", "orchestrator", delegates=("worker",)),
            AgentSpec("worker", "A worker.", "worker"),
        ]
    )
    started = time.perf_counter()
    async with run_team(team, "split the work", transport=model or SlowModel()) as stream:
        end = await stream.get_session_end()
    wall = time.perf_counter() - started
    assert end.stop_reason == StopReason.end_turn, end
    assert end.usage_tree is not None
    assert all(c.stop_reason == StopReason.end_turn for c in end.usage_tree.children)
    return wall, len(end.usage_tree.children)


async def bare_tasks(model: SlowModel) -> None:
    """WORKERS bare anyio tasks that each wait in ``model`` (the floor's shape)."""

    async def wait() -> None:
        async for _ in model.stream([], [], "worker"):
            pass

    async with anyio.create_task_group() as group:
        for _ in range(WORKERS):
            group.start_soon(wait)


async def held_per_sub_agent(
    run: Callable[[SlowModel], Awaitable[object]],
) -> tuple[float, float]:
    """Objects tracked by the collector and bytes allocated, per sub-agent, while all of
    them wait for their model call in ``run`` (over the same moment of an idle process)."""
    seen: dict[str, float] = {}

    def measure() -> None:
        gc.collect()
        seen["objects"] = len(gc.get_objects())
        seen["bytes"] = tracemalloc.get_traced_memory()[0]

    gc.collect()
    tracemalloc.start()
    objects, allocated = len(gc.get_objects()), tracemalloc.get_traced_memory()[0]
    try:
        await run(SlowModel(on_all_waiting=measure))
    finally:
        tracemalloc.stop()
    return (seen["objects"] - objects) / WORKERS, (seen["bytes"] - allocated) / WORKERS


async def floor() -> float:
    """The same shape with no framework: what the runtime alone costs."""
    started = time.perf_counter()
    await anyio.sleep(LATENCY)
    async with anyio.create_task_group() as group:
        for _ in range(WORKERS):
            group.start_soon(anyio.sleep, LATENCY)
    await anyio.sleep(LATENCY)
    return time.perf_counter() - started


async def compare_background(runs: int) -> None:
    """Blocking and background fan-out side by side, alternating, with the floor."""
    blocking, background, floors = [], [], []
    await background_fan_out()  # warm-up
    for _ in range(runs):
        blocking.append((await fan_out())[0])
        background.append((await background_fan_out())[0])
        floors.append(await floor())
    bare = statistics.median(floors)
    ms = 1000
    for name, walls in (("blocking", blocking), ("background", background)):
        wall = statistics.median(walls)
        print(
            f"{name:>10} fan-out of {WORKERS}: wall median {wall * ms:.0f} ms"
            f" (best {min(walls) * ms:.0f}), {(wall - bare) / WORKERS * 1e6:.0f} µs per"
            f" sub-agent over the floor ({bare * ms:.0f} ms)"
        )
    objects, allocated = await held_per_sub_agent(background_fan_out)
    print(
        f"one waiting background sub-agent holds {objects:.0f} objects the collector tracks"
        f" and {allocated / 1024:.1f} KB"
    )


async def main(runs: int, freeze: bool, background: bool) -> None:
    before = rss_mb()
    await fan_out()  # warm-up: tool schemas, first imports
    if freeze:
        gc.freeze()
    collections = FullCollections()
    gc.callbacks.append(collections)
    walls, floors, children = [], [], 0
    for _ in range(runs):
        wall, children = await fan_out()
        walls.append(wall)
        floors.append(await floor())
    gc.callbacks.remove(collections)
    peak = rss_mb()  # before the held-memory pass below, which runs under tracemalloc
    critical = 3 * LATENCY
    wall, best = statistics.median(walls), min(walls)
    bare = statistics.median(floors)
    ms = 1000
    print(
        f"fan-out of {children} sub-agents, {LATENCY * ms:.0f} ms per model call, {runs} runs:"
        f" wall median {wall * ms:.0f} ms (best {best * ms:.0f}), critical path"
        f" {critical * ms:.0f} ms, ratio {wall / critical:.2f} (best {best / critical:.2f};"
        " target <= 1.2)"
    )
    print(
        f"floor (bare anyio tasks, no framework): median {bare * ms:.0f} ms, ratio"
        f" {bare / critical:.2f}; the framework adds {(wall - bare) * ms:.0f} ms,"
        f" {(wall - bare) / children * 1e6:.0f} µs per sub-agent"
    )
    print(
        f"full garbage collections during the runs: {collections.count},"
        f" {collections.seconds * ms:.0f} ms in all" + (" (startup heap frozen)" if freeze else "")
    )
    print(
        f"peak RSS {peak:.0f} MB (before: {before:.0f} MB; +{peak - before:.0f} MB for"
        f" {children} finished sub-agents, {(peak - before) * 1024 / children:.0f} KB each)"
    )
    objects, allocated = await held_per_sub_agent(fan_out)
    bare_objects, bare_allocated = await held_per_sub_agent(bare_tasks)
    print(
        f"one waiting sub-agent holds {objects:.0f} objects the collector tracks and"
        f" {allocated / 1024:.1f} KB; a bare anyio task waiting {bare_objects:.0f} objects and"
        f" {bare_allocated / 1024:.1f} KB"
    )
    if background:
        await compare_background(runs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=WORKERS)
    parser.add_argument("--latency", type=float, default=LATENCY, help="seconds per call")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--freeze", action="store_true", help="gc.freeze() after warm-up")
    parser.add_argument(
        "--background", action="store_true", help="compare background with blocking fan-out"
    )
    options = parser.parse_args()
    WORKERS, LATENCY = options.workers, options.latency
    anyio.run(main, options.runs, options.freeze, options.background)
