"""Start-up benchmark against axio, side by side (not part of the test run).

    python benchmarks/bench_import.py [--runs 5] [--peer-python /tmp/bench-venv/bin/python]
                                      [--python PYTHON] [--example FILE]

Times fresh processes, each ``--runs`` times, interleaved round by round so that a
busy machine slows them alike: ``python -c "import swarm"``, ``swarm --help``, ``swarm
validate FILE`` (a shipped example by default) and, with the peer interpreter, ``python -c
"import axio"``; the bare interpreters (``python -c pass``) are timed too, to show the floor
both stand on, and so are the libraries ``swarm validate`` builds on (networkx for the
delegation graph, pydantic and yaml for the files): the part of its time that stays as long
as it uses them. One warm-up round runs first and is not counted. For each it prints the
median wall time and the median peak resident memory (``ru_maxrss`` of the child, from
``os.wait4``), and the ratio against ``import axio`` with the target:

- ``import swarm``: wall <= 1.0x, peak RSS <= 1.3x
- ``swarm --help`` and ``swarm validate``: wall <= 1.5x

``--python`` is the interpreter that runs swarm (default: this one; its ``swarm`` script
beside it, else ``python -m swarm``). Pass one of the peer's Python version for a ratio
that is not also a comparison of two Pythons.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

EXAMPLE = Path(__file__).parents[1] / "examples" / "build-a-calculator.yaml"
_PYDANTIC_YAML = "import yaml, pydantic; pydantic.BaseModel; pydantic.create_model('M', a=(int, 0))"


@dataclass
class Command:
    """One process to start, its measurements, and its target against ``import axio``."""

    name: str
    argv: list[str]
    wall_target: float | None = None
    rss_target: float | None = None
    walls: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)

    def run(self, cwd: str) -> None:
        started = time.perf_counter()
        child = subprocess.Popen(
            self.argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        assert child.stderr is not None
        errors = child.stderr.read().decode(errors="replace")
        child.stderr.close()
        if child.returncode != 0:
            raise SystemExit(f"{self.name} failed ({child.returncode}):\n{errors}")
        self.walls.append(wall)
        self.rss.append(usage.ru_maxrss / 1024)  # KiB on Linux

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def peak(self) -> float:
        return statistics.median(self.rss)


def swarm_command(python: str) -> list[str]:
    script = Path(python).parent / "swarm"
    return [str(script)] if script.exists() else [python, "-m", "swarm"]


def version(python: str) -> str:
    done = subprocess.run(
        [python, "-c", "import sys; print(sys.version.split()[0])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def verdict(ratio: float, target: float | None) -> str:
    if target is None:
        return ""
    return f"target <= {target:.1f}x: {'met' if ratio <= target else 'NOT met'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--peer-python", default="/tmp/bench-venv/bin/python")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--example", type=Path, default=EXAMPLE)
    args = parser.parse_args()

    swarm = swarm_command(args.python)
    peer = Command("python -c 'import axio'", [args.peer_python, "-c", "import axio"])
    commands = [
        Command("python -c pass (swarm's python)", [args.python, "-c", "pass"]),
        Command("python -c pass (axio's python)", [args.peer_python, "-c", "pass"]),
        peer,
        Command("python -c 'import swarm'", [args.python, "-c", "import swarm"], 1.0, 1.3),
        Command("swarm --help", [*swarm, "--help"], 1.5),
        Command("swarm validate EXAMPLE", [*swarm, "validate", str(args.example)], 1.5),
        # the bound of validate: the libraries it needs (the team's graph, the files' models)
        Command("  its networkx alone", [args.python, "-c", "import networkx"]),
        Command("  its pydantic and yaml alone", [args.python, "-c", _PYDANTIC_YAML]),
    ]
    # an empty directory: no package in the working directory shadows the installed ones
    with tempfile.TemporaryDirectory() as cwd:
        for command in commands:  # warm-up: page cache, .pyc files
            command.run(cwd)
            command.walls.clear()
            command.rss.clear()
        for _ in range(args.runs):
            for command in commands:
                command.run(cwd)

    print(
        f"swarm on Python {version(args.python)} ({args.python}), axio on Python"
        f" {version(args.peer_python)}; medians of {args.runs} interleaved runs"
    )
    print(f"{'':34} {'wall ms':>8} {'x axio':>7} {'RSS MB':>7} {'x axio':>7}")
    for command in commands:
        wall_ratio = command.wall / peer.wall
        rss_ratio = command.peak / peer.peak
        print(
            f"{command.name:34} {command.wall * 1000:8.1f} {wall_ratio:6.2f}x"
            f" {command.peak:7.1f} {rss_ratio:6.2f}x"
        )
        for what, ratio, target in (
            ("wall", wall_ratio, command.wall_target),
            ("RSS", rss_ratio, command.rss_target),
        ):
            if target is not None:
                print(f"{'':34} {what} {ratio:.2f}x, {verdict(ratio, target)}")


if __name__ == "__main__":
    main()
