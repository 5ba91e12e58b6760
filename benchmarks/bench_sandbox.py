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

Then the cost of undo's capture (``swarm.undo.UndoCapture``) per shell call that changes
one small file, with capture off and on, in the tier found here: on a workspace of
``FILES`` files, and on one holding a 1 GiB file the call does not touch. The first
captured call of a run reads (and stores) every file once; it is shown apart.
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
from swarm.run import CallRecord
from swarm.sandbox import SandboxFinder
from swarm.toolbox import make_toolbox
from swarm.undo import UndoCapture

CALLS = 200
WARMUP = 5
CAPTURED_CALLS = 20
FILES = 10_000
BIG = 1024**3
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


async def captured(shell: Tool[Any], capture: UndoCapture | None, n: int) -> float:
    """Milliseconds of one shell call that changes one small file, captured or not."""
    arguments = shell.validate({"command": f"echo {n} > touched.txt"})
    call = CallRecord(f"call-{n}", "shell", "bench", arguments)
    start = time.perf_counter()
    if capture is None:
        await shell.execute(arguments)
    else:
        await capture.admit(call, shell, arguments)
        async with capture.capturing(call, shell, arguments):
            await shell.execute(arguments)
    return (time.perf_counter() - start) * 1000


def _workspace(root: Path, kind: str) -> None:
    root.mkdir()
    (root.parent / "record").mkdir()
    if kind == "files":
        for i in range(FILES):
            directory = root / f"d{i // 100:03}"
            directory.mkdir(exist_ok=True)
            (directory / f"f{i:05}.txt").write_text(f"file {i}\n" * 20)
    else:
        with (root / "big.bin").open("wb") as big:
            chunk = b"\x5a" * 2**20
            for _ in range(BIG // len(chunk)):
                big.write(chunk)


async def capture_costs(calls: int) -> None:
    """Print the capture's cost per shell call (see the module's docstring)."""
    label = find_sandbox(SandboxSettings()).describe("none")
    print(f"undo capture, one shell call changing one small file, {label} (ms)")
    print(f"{'workspace':<28} {'off':>8} {'on':>8} {'extra':>8} {'first on':>9}")
    for kind, name in (("files", f"{FILES:,} files"), ("big", "one 1 GiB file")):
        with tempfile.TemporaryDirectory() as scratch:
            workspace, record = Path(scratch, "ws"), Path(scratch, "record")
            _workspace(workspace, kind)
            shell = make_toolbox(workspace)["shell"]
            off = [await captured(shell, None, n) for n in range(calls)]
            capture = UndoCapture(workspace, record)
            first = await captured(shell, capture, 0)
            on = [await captured(shell, capture, n) for n in range(1, calls + 1)]
            capture.close()
            off_ms, on_ms = statistics.median(off), statistics.median(on)
            print(f"{name:<28} {off_ms:8.1f} {on_ms:8.1f} {on_ms - off_ms:+8.1f} {first:9.1f}")


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else CALLS)
    anyio.run(capture_costs, CAPTURED_CALLS)
