"""File tool benchmarks (not part of the test run).

    python benchmarks/bench_files.py

The cost of one read_file and one write_file call, measured on the handler itself (the
plain function ``Tool`` runs in a worker thread, so thread hand-off does not blur it):
a 40-line file at the workspace root, and the same file four directories down. Each
figure is the median over ``ROUNDS`` of the mean time of ``CALLS`` calls, in µs.
write_file fsyncs every file it writes, so its figure depends on the disk.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swarm.toolbox import make_toolbox

CALLS = 2_000
ROUNDS = 5
CONTENT = "".join(f"line {n}: some text of a source file\n" for n in range(40))


def per_call(call: Callable[[], Any], calls: int) -> float:
    """The median over ``ROUNDS`` of the mean time of one ``call()``, in µs."""
    rounds = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for _ in range(calls):
            call()
        rounds.append((time.perf_counter() - started) / calls * 1e6)
    return statistics.median(rounds)


def main() -> None:
    with tempfile.TemporaryDirectory() as temp:
        tools = make_toolbox(Path(temp))
        read = tools["read_file"].handler
        write = tools["write_file"].handler
        for path in ("a.txt", "src/pkg/sub/deep/a.txt"):
            write(path=path, content=CONTENT)
            reading = per_call(lambda p=path: read(path=p), CALLS)
            writing = per_call(lambda p=path: write(path=p, content=CONTENT), CALLS // 4)
            print(f"{path:<24} read_file {reading:8.1f} µs   write_file {writing:8.1f} µs")


if __name__ == "__main__":
    main()
