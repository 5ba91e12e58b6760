"""Sandbox benchmark (not part of the test run).

    python benchmarks/bench_sandbox.py [CALLS]

What a shell call costs through the real ``shell`` tool (``make_toolbox(...)["shell"]``):
``true`` run unconfined (``sandbox: off``) against ``true`` in each tier that works here
(bubblewrap, then Landlock, each with no network and with the host's), each call awaited
one after another.
Prints the median, the spread (interquartile range, min and max) in milliseconds.
"""

from __future__ import annotations

import functools
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from swarm import SandboxSettings, SandboxUnavailable, Tool, find_sandbox
from swarm.sandbox import SandboxFinder
from swarm.toolbox import make_toolbox

CALLS = 200
WARMUP = 5


async def timings(shell: Tool[Any], calls: int) -> list[float]:
    """Milliseconds of each of ``calls`` calls of ``true``, after a few warm-up calls."""
    arguments = shell.validate({"command": "true"})
    for _ in range(WARMUP):
        await shell.execute(arguments)
    taken = []
    for _ in range(calls):
        start = time.perf_counter()
        out = await shell.execute(arguments)
        taken.append((time.perf_counter() - start) * 1000)
        assert str(out.content).startswith("[exit code 0"), out.content
    return taken


async def main(calls: int) -> None:
    cases: list[tuple[str, SandboxSettings, SandboxFinder]] = [
        ("unconfined", SandboxSettings(mode="off"), find_sandbox)
    ]
    for tier in ("bubblewrap", "landlock"):
        find = functools.partial(find_sandbox, tiers=(tier,))
        for network in ("none", "host"):
            settings = SandboxSettings(mode="required", network=network)
            try:
                label = find(settings).describe(network)
            except SandboxUnavailable as exc:
                print(f"({tier} does not work here: {exc})")
                break
            cases.append((label.split(";")[0], settings, find))
    rows = []
    with tempfile.TemporaryDirectory() as workspace:
        for label, settings, find in cases:
            shell = make_toolbox(Path(workspace), sandbox=settings, find=find)["shell"]
            taken = await timings(shell, calls)
            q1, median, q3 = statistics.quantiles(taken, n=4)
            rows.append((label, median, q3 - q1, min(taken), max(taken)))
    base = rows[0][1]
    print(f"shell tool, `true`, {calls} sequential calls each (ms)")
    print(f"{'tier':<56} {'median':>8} {'IQR':>7} {'min':>7} {'max':>7} {'extra':>8}")
    for label, median, iqr, low, high in rows:
        extra = median - base
        print(f"{label:<56} {median:8.2f} {iqr:7.2f} {low:7.2f} {high:7.2f} {extra:+8.2f}")


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else CALLS)
