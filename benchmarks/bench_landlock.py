"""Landlock tier benchmark (not part of the test run).

    python benchmarks/bench_landlock.py

What one shell command pays for its sandbox: the wall time of ``true`` started bare and
through ``LandlockSandbox`` (launch, start, confine, exec, reap, clean up), as the shell
tool starts it; the one-time network probe; and, for comparison, what starting the launcher
as ``python -m swarm.sandbox._landlock_exec`` would add (importing the ``swarm`` package).
Median wall time and mean CPU time (user+system of the started processes, steadier on a
shared machine) over ``RUNS`` runs, after one warm-up.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from swarm.sandbox import Confinement, LandlockSandbox, Network

RUNS = 30


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median_ms(action: Callable[[], object], runs: int = RUNS) -> str:
    """Median wall time and mean CPU time of the started processes, in ms: on a loaded
    machine the CPU figure is the steadier one."""
    action()
    times = []
    cpu_before = children_cpu()
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    cpu = (children_cpu() - cpu_before) / runs
    return f"{statistics.median(times) * 1000:7.1f} ms wall, {cpu * 1000:6.1f} ms CPU"


def start(argv: tuple[str, ...], env: dict[str, str], cwd: Path) -> None:
    subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        start_new_session=True,
        check=True,
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as workspace_name:
        workspace = Path(workspace_name)
        env = {"PATH": "/usr/bin:/bin"}
        sandbox = LandlockSandbox()

        probe_start = time.perf_counter()
        method = sandbox.network_method
        probe_ms = (time.perf_counter() - probe_start) * 1000

        def bare() -> None:
            start(("true",), env, workspace)

        def sandboxed(network: Network) -> Callable[[], None]:
            conf = Confinement(workspace=workspace, env=env, network=network)

            def run() -> None:
                with sandbox.launch(("true",), conf) as launch:
                    start(launch.argv, dict(launch.env), launch.cwd)

            return run

        def import_swarm() -> None:
            start((sys.executable, "-I", "-c", "import swarm.sandbox"), {}, workspace)

        print(f"{sandbox.describe('none')}")
        print(f"network probe (once per process): {probe_ms:.1f} ms -> {method}")
        print(f"true, bare:                    {median_ms(bare)}")
        print(f"true, landlock, network host:  {median_ms(sandboxed('host'))}")
        print(f"true, landlock, network none:  {median_ms(sandboxed('none'))}")
        print(f"import swarm.sandbox (-m adds): {median_ms(import_swarm, 10)}")


if __name__ == "__main__":
    main()
