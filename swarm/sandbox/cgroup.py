"""A memory and process budget for each sandboxed command as a whole: its own cgroup.

``command_budget(limits)`` makes a cgroup for one command, with ``limits.memory`` as its
memory limit (swap counted in it: none beyond it) and ``limits.processes`` as its process
limit, and gives the words to put before the command's launch (``CommandBudget.prefix``):
a ``/bin/sh`` that moves itself into the cgroup and only then execs the launch, so
the launcher, the sandbox and everything the command starts are in it from their first
instruction, with no window. Leaving the context kills whatever is still in the cgroup
and removes it.

Where the cgroup is made, in this order:

- cgroup v2, below swarm's own cgroup, when that cgroup can have children with the
  ``memory`` and ``pids`` controllers (a delegated cgroup, or the root);
- cgroup v1, below swarm's own cgroups of the ``memory`` and ``pids`` hierarchies, when
  they are writable (root, usually);
- nowhere: then the per-process limits are sized so that their sum fits the budget
  (``ResourceLimits.shared``), and ``describe`` says it is per process.

Each cgroup is named ``swarm-<pid namespace>-<pid>-<start time>-<n>`` after the swarm
process that made it. A swarm killed by SIGKILL cannot remove its cgroups: every new
budget first removes those of swarm processes of the same PID namespace that are gone
(killing anything still in them).

The command cannot leave its cgroup: it has no capabilities, and the cgroup files are
read-only inside bubblewrap (a read-only mount) and unwritable under Landlock (no write
right on ``/sys``). Unconfined (``sandbox: off``) it can, as root: there the budget binds
only a command that does not try.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import itertools
import os
import shlex
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from swarm.sandbox.base import Launch
from swarm.sandbox.limits import ResourceLimits, format_size

__all__ = [
    "Budget",
    "Cgroups",
    "CommandBudget",
    "budget_line",
    "command_budget",
    "find_cgroups",
    "in_budget",
    "remove_stale",
]

Budget = Literal["cgroup v2", "cgroup v1", "per process"]
"""What holds the budget: a cgroup of either version, or per-process limits alone."""

PREFIX = "swarm-"
"""The start of the name of every cgroup swarm makes."""
REMOVE_WITHIN = 5.0
"""How long (seconds) to go on killing what is left in a cgroup and trying to remove it
while it is busy: a killed process takes a moment to leave, on a loaded machine more than
0.2 s."""
_SH = "/bin/sh"
_JOIN = 'for f in {files}; do echo {who} > "$f" || exit 126; done; exec "$@"'
JOIN_FILE = {1: ("tasks", "0"), 2: ("cgroup.procs", "$$")}
"""Per cgroup version, the file the launch's ``/bin/sh`` writes to join the command's
cgroup, and what it writes. In v1, ``0`` to ``tasks``: the writing thread alone (the shell
has one), which the kernel moves without its global lock on every thread group, whose
taking waits for an RCU grace period (about 10 ms a launch on an idle machine; writing the
PID to ``cgroup.procs`` took that lock). v2 has no such file for a process of a domain
cgroup."""
_counter = itertools.count()


@dataclass(frozen=True, slots=True)
class Cgroups:
    """Where this process can make cgroups: ``version`` 2 or 1, and the parent directory
    for the memory controller and for the pids controller (the same one in v2)."""

    version: Literal[1, 2]
    memory: Path
    pids: Path

    @property
    def budget(self) -> Budget:
        """``cgroup v2`` or ``cgroup v1``."""
        return "cgroup v2" if self.version == 2 else "cgroup v1"


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and ``""`` for the v2 one."""
    found: dict[str, str] = {}
    with open("/proc/self/cgroup", encoding="utf-8") as handle:
        for line in handle:
            _id, controllers, path = line.rstrip("\n").split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                found[name] = path
    return found


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """The cgroup mounts: (root in the hierarchy, mount point, fs type, options)."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            dash = fields.index("-")
            kind = fields[dash + 1]
            if kind in ("cgroup", "cgroup2"):
                options = set(fields[dash + 3].split(","))
                found.append((fields[3], fields[4].replace("\\040", " "), kind, options))
    return found


def _directory(root: str, mount: str, path: str) -> Path | None:
    """The directory of cgroup ``path`` in a hierarchy mounted at ``mount`` from ``root``."""
    if root != "/" and path != root and not path.startswith(root + "/"):
        return None
    relative = path[len(root) :] if root != "/" else path
    return Path(mount) / relative.lstrip("/")


def _writable(directory: Path | None) -> bool:
    return directory is not None and os.access(directory, os.W_OK)


def _v2(own: dict[str, str], mounts: list[tuple[str, str, str, set[str]]]) -> Cgroups | None:
    if "" not in own:
        return None
    for root, mount, kind, _options in mounts:
        if kind != "cgroup2":
            continue
        base = _directory(root, mount, own[""])
        if not _writable(base):
            continue
        assert base is not None
        try:
            controllers = (base / "cgroup.controllers").read_text().split()
            if not {"memory", "pids"} <= set(controllers):
                continue
            enabled = set((base / "cgroup.subtree_control").read_text().split())
            if not {"memory", "pids"} <= enabled:
                # Refused (EBUSY) when processes sit in a cgroup other than the root.
                (base / "cgroup.subtree_control").write_text("+memory +pids")
        except OSError:
            continue
        return Cgroups(2, base, base)
    return None


def _v1(own: dict[str, str], mounts: list[tuple[str, str, str, set[str]]]) -> Cgroups | None:
    found: dict[str, Path] = {}
    for controller in ("memory", "pids"):
        for root, mount, kind, options in mounts:
            if kind == "cgroup" and controller in options and controller in own:
                base = _directory(root, mount, own[controller])
                if _writable(base):
                    assert base is not None
                    found[controller] = base
                    break
    if len(found) < 2:
        return None
    return Cgroups(1, found["memory"], found["pids"])


@functools.cache
def find_cgroups() -> Cgroups | str:
    """Where this process can make a command's cgroup (v2 first, then v1), or why it
    cannot; looked up once per process."""
    try:
        own, mounts = _own_cgroups(), _mounts()
    except (OSError, ValueError) as exc:
        return f"cannot read this process's cgroups: {exc}"
    found = _v2(own, mounts) or _v1(own, mounts)
    if found is None:
        return "no writable cgroup with the memory and pids controllers"
    return found


@functools.cache
def _identity() -> str:
    """This process's part of its cgroups' names: PID namespace, PID and start time."""
    return f"{_namespace()}-{os.getpid()}-{_start_time(os.getpid())}"


def _namespace() -> str:
    link = os.readlink("/proc/self/ns/pid")  # pid:[4026531836]
    return link.partition("[")[2].rstrip("]")


def _start_time(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _owner_gone(name: str, namespace: str) -> bool:
    """Whether cgroup ``name`` was made by a swarm process of PID namespace ``namespace``
    that is no longer running (a reused PID has another start time)."""
    parts = name.removeprefix(PREFIX).split("-")
    if len(parts) != 4 or parts[0] != namespace or not parts[1].isdigit():
        return False  # another namespace's: its owner cannot be seen from here
    return _start_time(int(parts[1])) != parts[2]


def _procs(directory: Path) -> list[int]:
    try:
        return [int(pid) for pid in (directory / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _remove(directory: Path, *, version: int) -> bool:
    """Kill what runs in cgroup ``directory`` and remove it; whether it is gone."""
    deadline = time.monotonic() + REMOVE_WITHIN
    pause = 0.001
    while True:
        try:
            directory.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError as exc:
            if exc.errno != errno.EBUSY:  # only processes still in it keep it: they go
                return False
        killed = False
        if version == 2:
            with contextlib.suppress(OSError):
                (directory / "cgroup.kill").write_text("1")
                killed = True
        if not killed:
            for pid in _procs(directory):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return False
        time.sleep(pause)  # a killed process takes a moment to leave its cgroup
        pause = min(pause * 2, 0.05)


def remove_stale(where: Cgroups) -> list[Path]:
    """Remove the cgroups left by swarm processes that are gone (SIGKILLed, say), killing
    what still runs in them; returns those removed."""
    removed = []
    namespace = _namespace()
    for base in dict.fromkeys((where.memory, where.pids)):
        try:
            names = [e.name for e in os.scandir(base) if e.name.startswith(PREFIX) and e.is_dir()]
        except OSError:
            continue
        for name in names:
            if _owner_gone(name, namespace) and _remove(base / name, version=where.version):
                removed.append(base / name)
    return removed


@dataclass(frozen=True, slots=True)
class CommandBudget:
    """The budget of one command: what holds it (``budget``), the limits as the policy
    gives them (``limits``), the per-process limits the sandbox tier sets
    (``per_process``: where a cgroup holds the budget, 7/8 of its memory for one
    process alone and no process limit, which the cgroup counts exactly; sized so their
    sum fits where none does), and the words to put before the launch (``prefix``,
    empty without a cgroup). ``directories`` are the command's cgroups (none without
    one), and ``join`` the files a process joins them by (``JOIN_FILE``; the prefix
    writes them, or a launcher that joins first thing, see ``Launch.joined``)."""

    budget: Budget
    limits: ResourceLimits
    per_process: ResourceLimits
    prefix: tuple[str, ...] = ()
    directories: tuple[Path, ...] = ()
    version: int = 0
    join: tuple[Path, ...] = ()

    def describe(self) -> str:
        """The limits line, saying what holds memory and processes, e.g. ``limits: cpu
        600 s, memory 4 GiB and processes 512 for the whole command (cgroup v1), ...``."""
        if self.budget == "per process":
            return self.per_process.describe(budget=self.budget)
        return self.limits.describe(budget=self.budget)

    def _read(self, name: str) -> str:
        if not self.directories:
            return ""
        try:
            return (self.directories[0] / name).read_text()
        except OSError:
            return ""

    def oom_kills(self) -> int:
        """How many processes of the command the kernel killed at the memory budget."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        for line in self._read(name).splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def peak(self) -> int | None:
        """The most memory the command used at once, where the kernel says it."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        value = self._read(name).strip()
        return int(value) if value.isdigit() else None

    def killed(self) -> str | None:
        """``killed: memory budget of 512 MiB reached`` when the kernel killed a process
        of the command at its memory budget, else ``None``."""
        if self.limits.memory is None or self.oom_kills() == 0:
            return None
        return f"killed: memory budget of {format_size(self.limits.memory)} reached"

    def stop(self) -> None:
        """Kill every process still in the command's cgroup (nothing without one)."""
        for directory in self.directories[:1]:
            if self.version == 2:
                with contextlib.suppress(OSError):
                    (directory / "cgroup.kill").write_text("1")
                    continue
            for pid in _procs(directory):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)


def _write(path: Path, value: int | str) -> None:
    path.write_text(str(value))


def _make(where: Cgroups, limits: ResourceLimits) -> tuple[Path, ...]:
    """Make the command's cgroup(s) with ``limits``; raises ``OSError`` when it cannot
    (and removes what it made)."""
    name = f"{PREFIX}{_identity()}-{next(_counter)}"
    directories = tuple(dict.fromkeys((where.memory / name, where.pids / name)))
    made: list[Path] = []
    try:
        for directory in directories:
            directory.mkdir()
            made.append(directory)
        memory, pids = where.memory / name, where.pids / name
        if where.version == 2:
            if limits.memory is not None:
                _write(memory / "memory.max", limits.memory)
                with contextlib.suppress(FileNotFoundError):  # a kernel without swap
                    _write(memory / "memory.swap.max", 0)
        elif limits.memory is not None:
            _write(memory / "memory.limit_in_bytes", limits.memory)
            with contextlib.suppress(FileNotFoundError):  # no swap accounting
                _write(memory / "memory.memsw.limit_in_bytes", limits.memory)
        if limits.processes is not None:
            _write(pids / "pids.max", limits.processes)
    except OSError:
        for directory in reversed(made):
            _remove(directory, version=where.version)
        raise
    return directories


def in_budget(launch: Launch, budget: CommandBudget) -> Launch:
    """``launch`` started inside ``budget``'s cgroup (its ``prefix`` first, unless the
    launch joins it itself: ``Launch.joined``), and stopped with everything in that
    cgroup too (so even what left the process group goes)."""
    if not budget.prefix:
        return launch
    inner = launch.stop

    def stop() -> None:
        if inner is not None:
            inner()
        budget.stop()

    argv = launch.argv if launch.joined else (*budget.prefix, *launch.argv)
    return dataclasses.replace(launch, argv=argv, stop=stop)


def budget_line(limits: ResourceLimits) -> str:
    """The limits line each command under ``limits`` gets here, saying what holds its
    budget (for the line a run prints at its start); makes no cgroup."""
    where = find_cgroups()
    if isinstance(where, str):
        return limits.shared().describe(budget="per process")
    return limits.describe(budget=where.budget)


@contextlib.contextmanager
def command_budget(
    limits: ResourceLimits, *, cgroups: Cgroups | str | None = None
) -> Iterator[CommandBudget]:
    """The budget of one command under ``limits``: in a cgroup of its own where one can
    be made (``cgroups``: where; by default ``find_cgroups()``), else per-process limits
    whose sum fits. Leaving the context kills what is left in the cgroup and removes it.
    Never raises for a cgroup that cannot be made: it falls back."""
    where = find_cgroups() if cgroups is None else cgroups
    if isinstance(where, str) or (limits.memory is None and limits.processes is None):
        yield CommandBudget("per process", limits, limits.shared())
        return
    remove_stale(where)
    try:
        directories = _make(where, limits)
    except OSError:
        yield CommandBudget("per process", limits, limits.shared())
        return
    name, who = JOIN_FILE[where.version]
    files = " ".join(shlex.quote(str(d / name)) for d in directories)
    prefix = (_SH, "-c", _JOIN.format(files=files, who=who), "swarm-budget")
    try:
        # pids.max counts exactly; the PID namespace's cap (at most 300 over) and the wait
        # for it would only cost the command start-up time. One process alone gets an
        # allocation failure (MemoryError) a little before the kernel's kill: the cgroup
        # also counts its program, libraries and page cache.
        memory = None if limits.memory is None else limits.memory - limits.memory // 8
        per_process = dataclasses.replace(limits, memory=memory, processes=None)
        join = tuple(d / name for d in directories)
        yield CommandBudget(
            where.budget, limits, per_process, prefix, directories, where.version, join
        )
    finally:
        for directory in directories:
            _remove(directory, version=where.version)
