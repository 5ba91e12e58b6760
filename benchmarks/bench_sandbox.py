"""Sandbox benchmark (not part of the test run).

    python benchmarks/bench_sandbox.py [CALLS]
    python benchmarks/bench_sandbox.py [CALLS] --against OTHER_CHECKOUT
    python benchmarks/bench_sandbox.py proxy [ROUNDS]
    python benchmarks/bench_sandbox.py capture [CALLS]

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
``FILES`` files, and on one holding a 1 GiB file the call does not touch; ``capture``
alone runs only these. Each is measured both ways a call can be captured: by its
workspace overlay (bubblewrap, where overlays can be mounted: the call's cost is what it
changed) and by walking the workspace before and after (the other tiers: a walk of every
entry, and a first call that reads and stores every file once, shown apart).

With ``--against``, the same calls alternate, one by one, between this checkout and
``OTHER_CHECKOUT`` (each in a worker process of its own, importing its own ``swarm``), and
each row gives both medians and the median of the paired differences with its quartiles
(and the median paired difference of CPU time, swarm's and its children's): what a change
costs a call, which a machine busy with other work blurs far less than it
blurs two runs one after the other. Run as root, ``chrt -f 50`` in front keeps other work
from preempting the calls (the wall clock then moves a few percent, not thirty).
``proxy`` (also run after the tables above) measures what the egress proxy adds to a
10 MB download from a server on 127.0.0.1: ``curl`` in a bubblewrap sandbox with the
host's network, straight to the server, against the same through a network allow-list
(the door in the sandbox, the proxy in swarm); and, outside any sandbox, ``curl``
straight against ``curl`` through the proxy on a TCP port. Medians of ROUNDS downloads
(default 10), in milliseconds, and the difference.
"""

from __future__ import annotations

import functools
import http.server
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import anyio

from swarm import SandboxSettings, SandboxUnavailable, Tool, find_sandbox
from swarm.sandbox import SandboxFinder
from swarm.scope import CallRecord, use_call
from swarm.toolbox import make_toolbox
from swarm.undo import UndoCapture

CALLS = 200
WARMUP = 5
CAPTURED_CALLS = 20
FILES = 10_000
BIG = 1024**3
ROUNDS = 10
DOWNLOAD = 10 * 1024 * 1024
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
        find: SandboxFinder = functools.partial(find_sandbox, tiers=(tier,))
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
    with use_call(call):
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
    print(
        f"{'workspace':<20} {'captured by':<12} {'off':>8} {'on':>8} {'extra':>8} {'first on':>9}"
    )
    for kind, name in (("files", f"{FILES:,} files"), ("big", "one 1 GiB file")):
        with tempfile.TemporaryDirectory() as scratch:
            workspace = Path(scratch, "ws")
            _workspace(workspace, kind)
            shell = make_toolbox(workspace)["shell"]
            off = [await captured(shell, None, n) for n in range(calls)]
            off_ms = statistics.median(off)
            for way in ("overlay", "walk"):
                capture = UndoCapture(workspace, Path(scratch, f"record-{way}"))
                if way == "walk":
                    capture._overlays = lambda tool, call: False  # type: ignore[method-assign]
                elif not capture._overlays(shell, None):
                    print(f"{name:<20} {way:<12} (no overlay can be mounted here)")
                    capture.close()
                    continue
                first = await captured(shell, capture, 0)
                on = [await captured(shell, capture, n) for n in range(1, calls + 1)]
                used = {c.tool for c in capture.log.state.calls}
                capture.close()
                on_ms = statistics.median(on)
                print(
                    f"{name:<20} {way:<12} {off_ms:8.1f} {on_ms:8.1f} {on_ms - off_ms:+8.1f}"
                    f" {first:9.1f}" + ("" if used == {"shell"} else "  (nothing captured)")
                )


async def worker(tier: str, network: str) -> None:
    """Serve ``--against``: run each command read from stdin once, print its milliseconds."""
    find: SandboxFinder = find_sandbox
    if tier != "off":
        find = functools.partial(find_sandbox, tiers=(tier,))
    mode = "off" if tier == "off" else "required"
    settings = SandboxSettings(mode=mode, network=network)  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory() as workspace:
        shell = make_toolbox(Path(workspace), sandbox=settings, find=find)["shell"]
        for line in sys.stdin:
            taken, cpu = await timings(shell, line.rstrip("\n"), 1)
            print(f"{taken[0]:.4f} {cpu[0]:.4f}", flush=True)


def against(calls: int, other: str) -> None:
    """Alternate calls between this checkout and ``other``; print the paired costs."""
    here = str(Path(__file__).resolve().parents[1])

    def start(tree: str, tier: str, network: str) -> subprocess.Popen[str]:
        env = {**os.environ, "PYTHONPATH": tree}
        argv = [sys.executable, str(Path(__file__).resolve()), "--worker", tier, network]
        pipe = subprocess.PIPE
        return subprocess.Popen(argv, stdin=pipe, stdout=pipe, text=True, env=env, cwd="/")

    def call(worker: subprocess.Popen[str], command: str) -> tuple[float, float]:
        assert worker.stdin is not None and worker.stdout is not None
        worker.stdin.write(command + "\n")
        worker.stdin.flush()
        wall, cpu = worker.stdout.readline().split()
        return float(wall), float(cpu)

    print(f"each call alternating with {other}, {calls} pairs (ms)")
    header = f"{'tier':<22} {'command':<20} {'other':>7} {'this':>7}"
    print(f"{header} {'paired':>7} {'q1':>7} {'q3':>7} {'cpu':>7}")
    for tier, network in (("off", "host"), ("bubblewrap", "none"), ("landlock", "none")):
        workers = [start(other, tier, network), start(here, tier, network)]
        try:
            for name, command in COMMANDS.items():
                for _ in range(WARMUP):
                    for w in workers:
                        call(w, command)
                theirs, ours, cpu = [], [], []
                for i in range(calls):
                    order = workers if i % 2 else workers[::-1]
                    got = {id(w): call(w, command) for w in order}
                    (a, a_cpu), (b, b_cpu) = got[id(workers[0])], got[id(workers[1])]
                    theirs.append(a)
                    ours.append(b)
                    cpu.append(b_cpu - a_cpu)
                diff = [b - a for a, b in zip(theirs, ours, strict=True)]
                q1, mid, q3 = statistics.quantiles(diff, n=4)
                print(
                    f"{tier + ', ' + network:<22} {name:<20} {statistics.median(theirs):7.2f}"
                    f" {statistics.median(ours):7.2f} {mid:+7.2f} {q1:+7.2f} {q3:+7.2f}"
                    f" {statistics.median(cpu):+7.2f}"
                )
        except ValueError:  # a worker that could not start (a tier not working here)
            print(f"{tier}: does not work here")
        finally:
            for w in workers:
                w.kill()
                w.wait()


class _Blob(http.server.BaseHTTPRequestHandler):
    body = bytes(DOWNLOAD)

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


async def _median_ms(run: Any, rounds: int) -> float:
    await run()  # warm up
    taken = []
    for _ in range(rounds):
        start = time.perf_counter()
        await run()
        taken.append((time.perf_counter() - start) * 1000)
    return statistics.median(taken)


async def proxy_download(rounds: int) -> None:
    """The egress proxy's added time for a 10 MB download on loopback (see the module
    docstring)."""
    # Here, not at the top: --against runs this file with an older swarm, maybe without.
    from swarm.sandbox.egress import AllowList, Egress
    from swarm.sandbox.proxy import EgressProxy, mapped_resolver

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Blob)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    egress = Egress((AllowList.parse(["blob.test", "127.0.0.1/32"]),))
    resolver = mapped_resolver({"blob.test": "127.0.0.1"})
    rows: list[tuple[str, float]] = []
    find = functools.partial(find_sandbox, tiers=("bubblewrap",))
    curl = "curl -sS -o /dev/null -w '%{size_download}'"
    with tempfile.TemporaryDirectory() as workspace:
        try:
            find(SandboxSettings(mode="required"))
        except SandboxUnavailable as exc:
            print(f"(bubblewrap does not work here: {exc})")
        else:
            for label, settings, url in (
                (
                    "bubblewrap, network host, direct",
                    SandboxSettings(mode="required", network="host"),
                    f"http://127.0.0.1:{port}/",
                ),
                (
                    "bubblewrap, allow-list, through the proxy",
                    SandboxSettings(mode="required", egress=egress),
                    f"http://blob.test:{port}/",
                ),
            ):
                shell = make_toolbox(
                    Path(workspace), sandbox=settings, find=find, resolver=resolver
                )["shell"]
                arguments = shell.validate({"command": f"{curl} {url}"})

                async def download(shell: Tool[Any] = shell, arguments: Any = arguments) -> None:
                    out = await shell.execute(arguments)
                    assert str(out.content).startswith(str(DOWNLOAD)), out.content

                rows.append((label, await _median_ms(download, rounds)))
    proxy = EgressProxy(resolver)
    async with proxy.listen(egress, path="bench") as proxy_port:
        for label, extra in (
            ("no sandbox, direct", []),
            ("no sandbox, through the proxy", ["-x", f"http://127.0.0.1:{proxy_port}"]),
        ):
            host = "127.0.0.1" if not extra else "blob.test"

            async def fetch(extra: list[str] = extra, host: str = host) -> None:
                done = await anyio.run_process(
                    ["curl", "-sS", "-o", "/dev/null", *extra, f"http://{host}:{port}/"],
                    stdout=subprocess.DEVNULL,
                )
                assert done.returncode == 0

            rows.append((label, await _median_ms(fetch, rounds)))
    server.shutdown()
    server.server_close()
    print(f"10 MB download on loopback, median of {rounds} (ms)")
    for index, (label, median) in enumerate(rows):
        added = f"{median - rows[index - 1][1]:+8.2f}" if index % 2 else ""
        print(f"{label:<48} {median:8.2f} {added}")


async def _all(calls: int) -> None:
    await main(calls)
    await proxy_download(ROUNDS)
    await capture_costs(CAPTURED_CALLS)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        anyio.run(worker, sys.argv[2], sys.argv[3])
    elif "--against" in sys.argv:
        at = sys.argv.index("--against")
        rest = sys.argv[1:at] + sys.argv[at + 2 :]
        against(int(rest[0]) if rest else CALLS, sys.argv[at + 1])
    elif sys.argv[1:2] == ["capture"]:
        anyio.run(capture_costs, int(sys.argv[2]) if len(sys.argv) > 2 else CAPTURED_CALLS)
    elif sys.argv[1:2] == ["proxy"]:
        anyio.run(proxy_download, int(sys.argv[2]) if len(sys.argv) > 2 else ROUNDS)
    else:
        anyio.run(_all, int(sys.argv[1]) if len(sys.argv) > 1 else CALLS)
