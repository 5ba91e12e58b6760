"""The memory and process budget of a command as a whole, by its effect: under each Linux
tier (and unconfined), three processes each under the per-process limit cannot together
take more than the budget (the kernel's own count of the cgroup's peak, and what the
processes say they got); the command cannot leave its cgroup or raise its budget; the
cgroup is gone after the call, and after swarm is SIGKILLed mid-command once the next
command starts. Where no cgroup can be made, per-process limits share out the budget."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from swarm import Progress, ResourceLimits, SandboxSettings, Tool
from swarm.errors import ToolError
from swarm.sandbox import Confinement, LandlockSandbox, command_environment
from swarm.sandbox.cgroup import Cgroups, budget_line, command_budget, find_cgroups
from swarm.sandbox.limits import SHARE_FLOOR, default_memory
from swarm.toolbox import make_toolbox

from .conftest import run, run_launched, text, tier_finder

MiB = 1024**2
BUDGET = ResourceLimits(memory=256 * MiB, processes=64)
TIERS = ["bubblewrap", "landlock", "off"]

# Holds WANT MiB, touched, in 8 MiB pieces; says how much it got, and holds it a moment so
# the three are alive at once.
HOG = """
import sys, time
want = int(sys.argv[1])
held = []
try:
    while len(held) * 8 < want:
        held.append(bytearray(8 << 20))
except MemoryError:
    pass
print("held", len(held) * 8, flush=True)
if len(sys.argv) > 2:  # hold it until the others hold theirs (not before: a busy machine)
    import os, pathlib
    pathlib.Path(f"held.{os.getpid()}").touch()
    deadline = time.monotonic() + 60
    while len(list(pathlib.Path().glob("held.*"))) < int(sys.argv[2]):
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
time.sleep(0.5)
"""
THREE = "for i in 1 2 3; do python3 hog.py 200 & done; wait"
THREE_AT_ONCE = "for i in 1 2 3; do python3 hog.py 200 3 & done; wait"


@pytest.fixture
def cgroups() -> Cgroups:
    """Where this machine makes commands' cgroups (never skipped in CI)."""
    found = find_cgroups()
    if isinstance(found, str):
        if os.environ.get("CI"):
            raise AssertionError(f"no cgroup can be made here: {found}")
        pytest.skip(f"no cgroup can be made here: {found}")
    return found


def shell_of(tier: str, ws: Path, limits: ResourceLimits = BUDGET) -> Tool[Any]:
    if tier == "off":
        settings = SandboxSettings(mode="off", limits=limits)
        return make_toolbox(ws, shell_timeout=60, sandbox=settings)["shell"]
    settings = SandboxSettings(mode="required", limits=limits)
    return make_toolbox(ws, shell_timeout=60, sandbox=settings, find=tier_finder(tier))["shell"]


def ours(where: Cgroups, pid: int | None = None) -> list[Path]:
    """The cgroups made by swarm process ``pid`` (default: this one) that exist now."""
    mark = f"-{pid or os.getpid()}-"
    found = []
    for base in {where.memory, where.pids}:
        found += [p for p in base.iterdir() if p.name.startswith("swarm-") and mark in p.name]
    return found


def held(out: str) -> list[int]:
    return [int(n) for n in re.findall(r"held (\d+)", out)]


@pytest.mark.anyio
@pytest.mark.parametrize("tier", TIERS)
async def test_three_processes_under_the_per_process_limit_stay_within_the_budget(
    tier: str, ws: Path, cgroups: Cgroups
) -> None:
    (ws / "hog.py").write_text(HOG)
    out = await run(shell_of(tier, ws), THREE)
    assert "killed: memory budget of 256 MiB reached" in text(out)
    # Each could hold its 200 MiB alone; together they got less than 600 MiB.
    assert sum(held(text(out))) < 3 * 200
    peak = out.details["memory_peak"]
    assert 100 * MiB < peak <= 256 * MiB


@pytest.mark.anyio
async def test_the_measure_sees_three_processes_over_a_smaller_budget(
    ws: Path, cgroups: Cgroups
) -> None:
    # The control for the test above: under a budget of 1 GiB all three get their 200 MiB,
    # and the peak shows the sum.
    (ws / "hog.py").write_text(HOG)
    out = await run(shell_of("bubblewrap", ws, ResourceLimits(memory=1024 * MiB)), THREE_AT_ONCE)
    assert held(text(out)) == [200, 200, 200]
    assert out.details["memory_peak"] >= 600 * MiB


@pytest.mark.anyio
async def test_a_private_tmpfs_counts_in_the_budget(ws: Path, cgroups: Cgroups) -> None:
    # bubblewrap's private /tmp is memory: filling it is bounded by the budget (the
    # command is killed, or the write stops), not by the tmpfs's own size alone.
    fill = "head -c 400M /dev/zero > /tmp/fill; du -m /tmp/fill | cut -f1"
    try:
        out = text(await run(shell_of("bubblewrap", ws), fill))
    except ToolError as error:
        assert str(error).startswith("[killed: memory budget of 256 MiB reached; exit code")
    else:
        assert int(out.splitlines()[-2]) < 256


@pytest.mark.anyio
@pytest.mark.parametrize("tier", ["bubblewrap", "landlock", "landlock-tcp"])
async def test_the_command_cannot_leave_its_cgroup_nor_raise_its_budget(
    tier: str, ws: Path, cgroups: Cgroups
) -> None:
    (ws / "hog.py").write_text(HOG)
    bases = " ".join(str(b) for b in {cgroups.memory, cgroups.pids, Path("/sys/fs/cgroup")})
    escape = (
        f"for f in $(find {bases} -maxdepth 2 -name cgroup.procs); do echo $$ > $f; done;"
        f" for f in $(find {bases} -maxdepth 2 -name '*limit_in_bytes' -o -maxdepth 2"
        " -name memory.max -o -maxdepth 2 -name pids.max); do echo max > $f;"
        " echo 9000000000 > $f; done 2>/dev/null; "
    )
    if tier == "landlock-tcp":  # no namespaces: only Landlock keeps /sys unwritable
        tier_finder("landlock")
        sandbox = LandlockSandbox(network_method="landlock-tcp")
        settings = SandboxSettings(mode="required", network="host", limits=BUDGET)
        shell = make_toolbox(ws, shell_timeout=60, sandbox=settings, find=lambda _: sandbox)[
            "shell"
        ]
    else:
        shell = shell_of(tier, ws)
    out = await run(shell, escape + THREE)
    # Refused, or (bubblewrap: of /sys only the processors are there) not even found.
    refusals = ("Read-only file system", "Permission denied", "No such file or directory")
    assert any(refusal in text(out) for refusal in refusals)
    assert "killed: memory budget of 256 MiB reached" in text(out)
    assert out.details["memory_peak"] <= 256 * MiB


@pytest.mark.anyio
@pytest.mark.parametrize("tier", TIERS)
async def test_the_cgroup_is_there_during_the_call_and_gone_after(
    tier: str, ws: Path, cgroups: Cgroups
) -> None:
    during: list[Path] = []

    def look(_key: str, _text: str) -> None:
        during.extend(ours(cgroups))

    shell = shell_of(tier, ws)
    call = shell.validate({"command": "echo started; sleep 0.3"})
    await shell.execute(call, progress=Progress("c", "shell", look))
    assert {p.parent for p in during} == {cgroups.memory, cgroups.pids}
    assert not any(p.exists() for p in during)
    assert ours(cgroups) == []


@pytest.mark.anyio
@pytest.mark.parametrize("tier", TIERS)
async def test_a_fork_bomb_stops_at_the_process_budget(
    tier: str, ws: Path, cgroups: Cgroups, running: Any, marker: str
) -> None:
    most = 0

    def count(_key: str, _text: str) -> None:
        nonlocal most  # the bomb's processes, as the host sees them, while it runs
        most = max(most, len(running(marker)))

    bomb = f"b() {{ sleep {marker} & b | b & }}; b; sleep 3"
    shell = shell_of(tier, ws, ResourceLimits(memory=1024 * MiB, processes=50))
    await shell.execute(shell.validate({"command": bomb}), progress=Progress("c", "shell", count))
    assert 10 < most <= 50
    assert running(marker) == []


RUNNER = """
import functools, sys, anyio
from pathlib import Path
from swarm import Progress, ResourceLimits, SandboxSettings
from swarm.sandbox import find_sandbox
from swarm.toolbox import make_toolbox

tier, ws, marker = sys.argv[1:4]
find = functools.partial(find_sandbox, tiers=(tier,))
settings = SandboxSettings(mode="required", limits=ResourceLimits(memory=256 << 20))
shell = make_toolbox(Path(ws), sandbox=settings, find=find)["shell"]

def show(key, text):
    print(text, end="", flush=True)

async def main():
    command = sys.argv[4] if len(sys.argv) > 4 else f"echo started; sleep {marker}"
    await shell.execute(shell.validate({"command": command}), progress=Progress("c", "shell", show))

anyio.run(main)
"""

# In a PID namespace of its own, so that no other swarm process (another test worker's
# command) removes the killed one's cgroups first: a swarm process removes only those of
# its own namespace. Prints the killed swarm's cgroups after the kill, then after the next
# command.
KILLER = """
import json, os, signal, subprocess, sys, time
from swarm.sandbox.cgroup import find_cgroups

runner, tier, ws, marker = sys.argv[1:5]
where = find_cgroups()

def left(pid):  # this namespace's: another's may have had a process of this number
    mark = f"swarm-{os.readlink('/proc/self/ns/pid')[5:-1]}-{pid}-"
    bases = {where.memory, where.pids}
    return sorted(str(p) for b in bases for p in b.iterdir() if p.name.startswith(mark))

def running():
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():  # the killer has the marker too
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    found.append(entry)
        except OSError:
            pass
    return found

command = [sys.executable, runner, tier, ws, marker]
swarm = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
assert swarm.stdout.readline() == "started\\n"
during = left(swarm.pid)
os.kill(swarm.pid, signal.SIGKILL)
swarm.wait()
deadline = time.monotonic() + 10
while running() and time.monotonic() < deadline:
    time.sleep(0.02)
print(json.dumps({"during": during, "killed": left(swarm.pid), "running": running()}), flush=True)
subprocess.run([*command, "true"], check=True)
after = left(swarm.pid)
print(json.dumps({"after": after}), flush=True)
for path in after:  # once this namespace is gone, no swarm process could remove them
    os.rmdir(path)
"""


@pytest.mark.parametrize("tier", ["bubblewrap", "landlock"])
def test_the_cgroup_of_a_sigkilled_swarm_goes_with_the_next_command(
    tier: str, ws: Path, tmp_path: Path, cgroups: Cgroups, marker: str
) -> None:
    tier_finder(tier)
    (tmp_path / "runner.py").write_text(RUNNER)
    (tmp_path / "killer.py").write_text(KILLER)
    unshare = ["unshare", "--pid", "--fork", "--mount-proc"]
    if subprocess.run([*unshare, "true"], capture_output=True).returncode != 0:
        if os.environ.get("CI"):
            raise AssertionError("unshare cannot make a PID namespace here")
        pytest.skip("unshare cannot make a PID namespace here (needs root)")
    args = [sys.executable, str(tmp_path / "killer.py"), str(tmp_path / "runner.py")]
    done = subprocess.run(
        [*unshare, *args, tier, str(ws), marker], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    killed, after = (json.loads(line) for line in done.stdout.splitlines())
    assert {Path(p).parent for p in killed["during"]} == {cgroups.memory, cgroups.pids}
    assert killed["running"] == []  # the command died with swarm...
    assert killed["killed"] == killed["during"]  # ...but nobody removed its cgroups
    assert after["after"] == []  # the next command did


def test_the_run_can_say_what_holds_the_budget_before_any_command(cgroups: Cgroups) -> None:
    line = budget_line(BUDGET)
    assert f"memory 256 MiB for the whole command ({cgroups.budget})" in line
    assert f"processes 64 for the whole command ({cgroups.budget})" in line


def test_the_limits_say_what_holds_the_budget() -> None:
    limits = ResourceLimits(cpu=60, memory=512 * MiB, file_size=MiB, processes=100)
    assert limits.describe(budget="cgroup v1") == (
        "limits: cpu 60 s, memory 512 MiB for the whole command (cgroup v1), file 1 MiB,"
        " processes 100 for the whole command (cgroup v1), open files 4096"
    )
    assert limits.shared().describe(budget="per process") == (
        "limits: cpu 60 s, memory 64 MiB per process, file 1 MiB, processes 8, open files 4096"
    )


@pytest.mark.parametrize(
    ("memory", "processes", "share", "after"),
    [
        (4096 * MiB, 8, 512 * MiB, 8),  # shared out as it is
        (4096 * MiB, 512, SHARE_FLOOR, 16),  # each gets the floor; fewer processes
        (256 * MiB, 40, 32 * MiB, 8),  # never fewer than 8 processes: less each
        (256 * MiB, 4, 64 * MiB, 4),  # nor more processes than the limit
    ],
)
def test_without_a_cgroup_the_per_process_limits_sum_to_the_budget(
    memory: int, processes: int, share: int, after: int
) -> None:
    shared = ResourceLimits(memory=memory, processes=processes).shared()
    assert (shared.memory, shared.processes) == (share, after)
    assert shared.memory * shared.processes <= memory


def test_the_default_budget_is_the_smaller_of_4_gib_and_half_the_ram() -> None:
    total = int(Path("/proc/meminfo").read_text().split()[1]) * 1024  # MemTotal, kB
    assert abs(default_memory() - min(4096 * MiB, total // 2)) < MiB
    assert ResourceLimits().memory == default_memory()


def test_without_a_cgroup_the_shared_limits_bind_each_process(ws: Path) -> None:
    # Where no cgroup can be made: 768 MiB among 3 processes, 256 MiB each; three
    # processes each asking for 400 MiB get at most their share.
    (ws / "hog.py").write_text(HOG)
    limits = ResourceLimits(memory=768 * MiB, processes=3)
    with command_budget(limits, cgroups="no cgroup here") as budget:
        assert budget.budget == "per process" and budget.prefix == ()
        confinement = Confinement(ws, env=command_environment(), limits=budget.per_process)
        sandbox = tier_finder("bubblewrap")(SandboxSettings(mode="required"))
        command = ("bash", "-c", THREE.replace("200", "400"))
        done = run_launched(sandbox, command, confinement)
    got = held(done.stdout)
    assert len(got) == 3 and all(n < 256 for n in got)
    assert sum(got) <= 768


def test_a_command_that_cannot_join_its_cgroup_does_not_run(tmp_path: Path) -> None:
    # Plain directories stand in for the hierarchies; the file the command joins by is
    # made unwritable (a directory), as a cgroup that refuses the process would be.
    bases = Cgroups(1, tmp_path / "memory", tmp_path / "pids")
    bases.memory.mkdir()
    bases.pids.mkdir()
    with command_budget(BUDGET, cgroups=bases) as budget:
        assert budget.budget == "cgroup v1"
        (budget.directories[-1] / "tasks").mkdir()
        done = subprocess.run(
            [*budget.prefix, "touch", "ran"], cwd=tmp_path, capture_output=True, text=True
        )
    assert done.returncode == 126
    assert "tasks" in done.stderr
    assert not (tmp_path / "ran").exists()
