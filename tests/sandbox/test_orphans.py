"""Nothing of a sandboxed command outlives swarm, even when swarm is SIGKILLed mid-command
(no cleanup code runs then): under bubblewrap and Landlock, the launcher, the command
and what it started all go. Before the fix, the Landlock launcher and the command ran on,
reparented to init."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import tier_finder

RUNNER = """
import functools, sys, anyio
from pathlib import Path
from swarm import Progress, SandboxSettings
from swarm.sandbox import find_sandbox
from swarm.toolbox import make_toolbox

tier, ws, marker = sys.argv[1:4]
find = functools.partial(find_sandbox, tiers=(tier,))
shell = make_toolbox(Path(ws), sandbox=SandboxSettings(mode="required"), find=find)["shell"]

def show(key, text):
    print(text, end="", flush=True)

async def main():
    command = f"setsid sleep {marker} & echo started; sleep {marker}"
    await shell.execute(shell.validate({"command": command}), progress=Progress("c", "shell", show))

anyio.run(main)
"""


@contextlib.contextmanager
def _swarm(args: list[str], **options: Any) -> Iterator[subprocess.Popen[Any]]:
    """The stand-in for swarm, SIGKILLed at the end whatever the test found: a failed
    assertion must not leave it, and the test run with it, waiting."""
    with subprocess.Popen(args, **options) as process:
        try:
            yield process
        finally:
            process.kill()


@pytest.mark.parametrize("tier", ["bubblewrap", "landlock"])
def test_nothing_outlives_a_sigkilled_swarm(
    tier: str, ws: Path, tmp_path: Path, running: Any, marker: str
) -> None:
    tier_finder(tier)  # skips where the tier does not work (never in CI)
    script = tmp_path / "runner.py"
    script.write_text(RUNNER)
    with _swarm(
        [sys.executable, str(script), tier, str(ws), marker], stdout=subprocess.PIPE, text=True
    ) as swarm:
        assert swarm.stdout is not None
        assert swarm.stdout.readline() == "started\n"
        assert len(running(marker)) >= 2  # the sleeps, and the launcher naming them
        os.kill(swarm.pid, signal.SIGKILL)
        swarm.wait()
        # The kernel delivers the parent-death signals at once, but the processes take a
        # moment to exit: poll, bounded.
        deadline = time.monotonic() + 10
        while running(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert running(marker) == []


HELD = """
import functools, sys, time, anyio
from pathlib import Path
from swarm import SandboxSettings
from swarm.sandbox import bubblewrap, cgroup, find_sandbox
from swarm.toolbox import make_toolbox

def cap_never(pid, processes):
    # The process cap never comes while the sandbox lives: the command waits at its gate
    # until swarm dies. (Only without a cgroup does the command wait for that cap: the
    # cgroup's pids.max replaces it.) A set-up that failed (bubblewrap racing another
    # test's file in /etc) ends the sandbox: then the launch goes on to its next attempt,
    # as it does with the real cap, instead of waiting here for ever.
    while True:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] in "ZX":
                    return None
        except OSError:
            return None
        time.sleep(0.05)

bubblewrap.cap_pid_namespace = cap_never
cgroup.find_cgroups = lambda: "no cgroup, for this test"
ws, marker = sys.argv[1:3]
find = functools.partial(find_sandbox, tiers=("bubblewrap",))
shell = make_toolbox(Path(ws), sandbox=SandboxSettings(mode="required"), find=find)["shell"]
anyio.run(shell.execute, shell.validate({"command": f"touch ran; sleep {marker}"}))
"""


def _gates(pids: list[int]) -> list[int]:
    """Those of ``pids`` that are a sandbox's gate (``bubblewrap.GATE``), not the bwraps
    whose arguments hold its words."""
    found = []
    for pid in pids:
        with contextlib.suppress(OSError):
            words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if words[0] == b"bash" and b"swarm-gate" in words:
                found.append(pid)
    return found


def test_a_command_waiting_for_its_process_cap_dies_with_swarm(
    ws: Path, tmp_path: Path, running: Any, marker: str
) -> None:
    tier_finder("bubblewrap")
    script = tmp_path / "held.py"
    script.write_text(HELD)
    with _swarm([sys.executable, str(script), str(ws), marker]) as swarm:
        # The gate waiting: bubblewrap's set-up is over. Not a count of processes naming
        # the marker: swarm's own command line names it, and a set-up that failed (see
        # HELD) shows a bwrap for a moment and is launched again.
        deadline = time.monotonic() + 20
        while not _gates(running(marker)) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _gates(running(marker)) != []
        os.kill(swarm.pid, signal.SIGKILL)
        swarm.wait()
        deadline = time.monotonic() + 10
        while running(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert running(marker) == []
    assert not (ws / "ran").exists()


QUICK = """
import functools, sys, anyio
from pathlib import Path
from swarm import SandboxSettings
from swarm.sandbox import find_sandbox
from swarm.toolbox import make_toolbox

tier, ws, marker = sys.argv[1:4]
find = functools.partial(find_sandbox, tiers=(tier,))
shell = make_toolbox(Path(ws), sandbox=SandboxSettings(mode="required"), find=find)["shell"]
find(SandboxSettings(mode="required"))  # probed before the line below, not after it
print("ready", flush=True)
anyio.run(shell.execute, shell.validate({"command": f"sleep {marker}"}))
"""


def _describe(pid: int) -> str:
    """A leftover process as the failure should show it: state, parent, namespaces' PIDs,
    what it waits in, its command line."""
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
        wanted = [line for line in status if line.startswith(("State", "PPid", "NSpid"))]
        wchan = Path(f"/proc/{pid}/wchan").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:80]
    except OSError:
        return f"{pid} (gone)"
    return f"{pid} {' '.join(wanted)} wchan={wchan} {cmdline.decode(errors='replace')}"


@contextlib.contextmanager
def _cpu_load() -> Iterator[None]:
    """A busy process per core (and one more), for the length of the block."""
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range((os.cpu_count() or 1) + 1)
    ]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


@pytest.mark.parametrize("tier", ["bubblewrap", "landlock"])
def test_nothing_outlives_swarm_killed_while_launching_under_load(
    tier: str, ws: Path, tmp_path: Path, running: Any, marker: str
) -> None:
    """swarm SIGKILLed at the first sign of the launch (the sandbox still being set up),
    on a machine whose cores are all busy, several times: nothing of any launch is left."""
    tier_finder(tier)
    script = tmp_path / "quick.py"
    script.write_text(QUICK)
    left: list[str] = []
    with _cpu_load():
        for attempt in range(4):
            mark = f"{marker}{attempt}"
            with _swarm(
                [sys.executable, str(script), tier, str(ws), mark],
                stdout=subprocess.PIPE,
                text=True,
            ) as swarm:
                assert swarm.stdout is not None
                assert swarm.stdout.readline() == "ready\n"
                deadline = time.monotonic() + 20
                while not [p for p in running(mark) if p != swarm.pid]:
                    assert time.monotonic() < deadline, "the launch never started"
                os.kill(swarm.pid, signal.SIGKILL)
                swarm.wait()
            # The launcher swarm was starting when it died may be in its execve: seen by
            # no marker for a moment.
            deadline = time.monotonic() + 10
            while running(mark, in_exec=True) and time.monotonic() < deadline:
                time.sleep(0.02)
            left += [_describe(pid) for pid in running(mark)]
            for pid in running(mark):  # so one failure does not leave processes behind
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
    assert left == []


UNWATCHED = """
import functools, sys, anyio
from pathlib import Path
from swarm import Progress, SandboxSettings
from swarm.sandbox import bubblewrap, find_sandbox
from swarm.toolbox import make_toolbox

# No parent-death signal anywhere (as when swarm dies before one is set): only the
# gate's watcher can end the sandbox.
arguments = bubblewrap.bwrap_arguments
bubblewrap.bwrap_arguments = lambda *a, **k: [
    w for w in arguments(*a, **k) if w != "--die-with-parent"
]
ws, marker = sys.argv[1:3]
find = functools.partial(find_sandbox, tiers=("bubblewrap",))
shell = make_toolbox(Path(ws), sandbox=SandboxSettings(mode="required"), find=find)["shell"]

def show(key, text):
    print(text, end="", flush=True)

async def main():
    command = f"setsid sleep {marker} & echo started; sleep {marker}"
    await shell.execute(shell.validate({"command": command}), progress=Progress("c", "shell", show))

anyio.run(main)
"""


def test_the_gate_ends_the_sandbox_without_any_parent_death_signal(
    ws: Path, tmp_path: Path, running: Any, marker: str
) -> None:
    """bwrap and its sandbox started without parent-death signals (as when swarm dies
    before one is set): the gate's watcher sees the pipe end and kills the sandbox; bwrap
    then exits."""
    tier_finder("bubblewrap")
    script = tmp_path / "unwatched.py"
    script.write_text(UNWATCHED)
    with _swarm(
        [sys.executable, str(script), str(ws), marker], stdout=subprocess.PIPE, text=True
    ) as swarm:
        assert swarm.stdout is not None
        assert swarm.stdout.readline() == "started\n"
        assert len(running(marker)) >= 3  # bwrap, the sleeps
        os.kill(swarm.pid, signal.SIGKILL)
        swarm.wait()
        deadline = time.monotonic() + 10
        while running(marker) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert running(marker) == []
