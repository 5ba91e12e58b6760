"""Delegation fan-out benchmark (not part of the test run).

    python benchmarks/bench_team.py

One orchestrator response delegates to 500 sub-agents at once. Every model call takes
50 ms (a scripted model sleeping with anyio), so the critical path is three calls: the
orchestrator's delegation turn, one worker turn, the orchestrator's answer (150 ms).
Reports the wall time against that critical path (target: within 1.2x) and the process's
resident memory after the 500 sub-agents finished.
"""

from __future__ import annotations

import gc
import resource
import statistics
import time
from collections.abc import AsyncIterator
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
from swarm.run import current_scope
from swarm.team import AgentSpec, Team
from swarm.team.delegation import run_team

WORKERS = 500
LATENCY = 0.05


class SlowModel:
    """50 ms per call; the orchestrator delegates to every worker at once, then answers."""

    async def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        await anyio.sleep(LATENCY)
        usage = Usage(100, 10)
        if system == "orchestrator" and not messages[-1].tool_results:
            for i in range(WORKERS):
                yield ToolUseStart(i, f"d{i}", "worker")
                yield ToolInputDelta(i, f"d{i}", f'{{"task": "part {i}"}}')
            yield IterationEnd(1, StopReason.tool_use, usage)
            return
        path = current_scope().path
        yield TextDelta(0, f"done: {path}")
        yield IterationEnd(1, StopReason.end_turn, usage)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def fan_out() -> tuple[float, int]:
    team = Team(
        [
            AgentSpec("orchestrator", "", "orchestrator", delegates=("worker",)),
            AgentSpec("worker", "A worker.", "worker"),
        ]
    )
    started = time.perf_counter()
    async with run_team(team, "split the work", transport=SlowModel()) as stream:
        end = await stream.get_session_end()
    wall = time.perf_counter() - started
    assert end.stop_reason == StopReason.end_turn, end
    assert end.usage_tree is not None
    return wall, len(end.usage_tree.children)


async def main() -> None:
    before = rss_mb()
    walls = []
    for _ in range(3):
        wall, children = await fan_out()
        walls.append(wall)
        gc.collect()
    critical = 3 * LATENCY
    wall = statistics.median(walls)
    print(
        f"fan-out of {children} sub-agents, 50 ms per model call: wall {wall * 1000:.0f} ms,"
        f" critical path {critical * 1000:.0f} ms, ratio {wall / critical:.2f} (target <= 1.2)"
    )
    print(
        f"peak RSS {rss_mb():.0f} MB (before: {before:.0f} MB; +{rss_mb() - before:.0f} MB for"
        f" {children} finished sub-agents, {(rss_mb() - before) * 1024 / children:.0f} KB each)"
    )


if __name__ == "__main__":
    anyio.run(main)
