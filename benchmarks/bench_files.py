"""File tool benchmarks (not part of the test run).

    python benchmarks/bench_files.py

The cost of one read_file and one write_file call, measured on the handler itself (the
plain function ``Tool`` runs in a worker thread, so thread hand-off does not blur it):
a 40-line file at the workspace root, and the same file four directories down. Each
figure is the best over ``ROUNDS`` of the mean time of ``CALLS`` calls, in µs (the best,
as ``timeit`` reports, because on a shared machine the other rounds measure the others).
write_file fsyncs every file it writes, so its figure depends on the disk.
"""

from __future__ import annotations

import functools
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swarm.toolbox import make_toolbox

CALLS = 2_000
ROUNDS = 7
CONTENT = "".join(f"line {n}: some text of a source file\n" for n in range(40))


def per_call(call: Callable[[], Any], calls: int) -> str:
    """The best over ``ROUNDS`` of the mean time of one ``call()``, wall clock and CPU time
    of this process (less disturbed by other processes), in µs."""
    walls, cpus = [], []
    for _ in range(ROUNDS):
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(calls):
            call()
        walls.append((time.perf_counter() - wall) / calls * 1e6)
        cpus.append((time.process_time() - cpu) / calls * 1e6)
    return f"{min(walls):7.1f} µs (CPU {min(cpus):6.1f})"


def main() -> None:
    with tempfile.TemporaryDirectory() as temp:
        tools = make_toolbox(Path(temp))
        read = tools["read_file"].handler
        write = tools["write_file"].handler
        for path in ("a.txt", "src/pkg/sub/deep/a.txt"):
            write(path=path, content=CONTENT)
            reading = per_call(functools.partial(read, path=path), CALLS)
            writing = per_call(functools.partial(write, path=path, content=CONTENT), CALLS // 4)
            print(f"{path:<24} read_file {reading}   write_file {writing}")


if __name__ == "__main__":
    main()
