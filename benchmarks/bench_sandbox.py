"""Sandbox benchmark (not part of the test run).

    python benchmarks/bench_sandbox.py [CALLS]

What a shell call costs through the real ``shell`` tool (``make_toolbox(...)["shell"]``):
``true``, and a pipeline of seven programs, run unconfined (``sandbox: off``) against the
same in each tier that works here (bubblewrap, then Landlock, each with no network and with
the host's), each call awaited one after another.
Prints, per command and tier, the median wall time, its spread (interquartile range, min and
max) and the median CPU time of a call (swarm's own and its children's, user and system), in
milliseconds. The CPU time moves far less than the wall clock on a shared machine: compare
versions by it.
"""

from __future__ import annotations

import functools
import resource
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
COMMANDS = {
    "true": "true",
    "7-program pipeline": "printf 'b\\na\\nc\\n' | sort | uniq | tr a-z A-Z | head -n 2 | wc -l"
    " | cat > /dev/null",
}


def _cpu() -> float:
    """Seconds of CPU used so far by this process and its waited-for children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def timings(shell: Tool[Any], command: str, calls: int) -> tuple[list[float], list[float]]:
    """Milliseconds of wall and of CPU time of each of ``calls`` calls of ``command``,
    after a few warm-up calls."""
    arguments = shell.validate({"command": command})
    for _ in range(WARMUP):
        await shell.execute(arguments)
    taken, cpu = [], []
    for _ in range(calls):
        start, start_cpu = time.perf_counter(), _cpu()
        out = await shell.execute(arguments)
        taken.append((time.perf_counter() - start) * 1000)
        cpu.append((_cpu() - start_cpu) * 1000)
        assert str(out.content).startswith("[exit code 0"), out.content
    return taken, cpu


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
    with tempfile.TemporaryDirectory() as workspace:
        for name, command in COMMANDS.items():
            rows = []
            for label, settings, find in cases:
                shell = make_toolbox(Path(workspace), sandbox=settings, find=find)["shell"]
                taken, cpu = await timings(shell, command, calls)
                q1, median, q3 = statistics.quantiles(taken, n=4)
                cpu_median = statistics.median(cpu)
                rows.append((label, median, q3 - q1, min(taken), max(taken), cpu_median))
            base = rows[0][1]
            print(f"shell tool, {name}, {calls} sequential calls each (ms)")
            header = f"{'tier':<48} {'median':>8} {'IQR':>7} {'min':>7} {'max':>7} {'extra':>8}"
            print(f"{header} {'cpu':>7}")
            for label, median, iqr, low, high, cpu_median in rows:
                extra = median - base
                print(
                    f"{label:<48} {median:8.2f} {iqr:7.2f} {low:7.2f} {high:7.2f} {extra:+8.2f}"
                    f" {cpu_median:7.2f}"
                )


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else CALLS)
