"""Resource limits on every sandboxed command: CPU time, memory, file size, processes and
open files, so an allowed command cannot exhaust the machine.

Each tier applies them before the command starts, to everything it starts: bubblewrap and
``sandbox-exec`` are started through util-linux ``prlimit`` (or, where there is none, a
small launcher of swarm's own, ``_limits_exec.py``) that sets the limits and execs them,
so they and the command inherit them; the Landlock launcher sets them in the command's
own process. What each limit is, and how sure it is:

- ``cpu``: seconds of CPU per process (``RLIMIT_CPU``): SIGXCPU at the limit, SIGKILL
  ``CPU_GRACE`` seconds later for a process that ignores it;
- ``memory``: the command's memory budget, for all its processes together, where a
  cgroup holds it (``swarm.sandbox.cgroup``: past it the kernel kills a process), and
  also bytes of private writable memory per process (``RLIMIT_DATA``: heap and private
  mappings, not address space merely reserved, so runtimes that reserve a lot still
  start; an allocation past it fails). Where no cgroup can be made, the per-process
  limit is the budget shared out among ``processes`` (``ResourceLimits.shared``). The
  default is the smaller of 4 GiB and half of the machine's RAM;
- ``file_size``: the largest file a process may write (``RLIMIT_FSIZE``): a write past it
  fails (EFBIG) or kills with SIGXFSZ, and the file stays at the limit;
- ``processes``: where a cgroup holds the budget, its ``pids.max``: every process of
  the command at once, its launcher and sandbox included. Besides, on Linux the command's
  PID namespace gets ``pid_max`` = ``processes`` +
  301 (kernel 6.14 or later; the kernel allows no less than 301, and after the
  namespace's PIDs wrap it reuses only those from 300): at least ``processes`` and at most
  ``processes`` + 300 processes at once, counted in the sandbox only. Bubblewrap run by
  a user other than root makes that namespace in a user namespace swarm cannot enter, so
  there the cap fails (a warning says so once). ``RLIMIT_NPROC`` is also set, to the
  processes the user runs now plus ``processes`` (the kernel counts it across the whole
  machine, and never for root);
- ``open_files``: open file descriptors per process (``RLIMIT_NOFILE``);
- no core files (``RLIMIT_CORE`` 0), always.

``None`` means no limit of that kind. A limit is never raised above a hard limit already
in force.
"""

from __future__ import annotations

import functools
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from swarm.sandbox import _limits_exec

__all__ = [
    "PID_MAX_FLOOR",
    "SHARE_FLOOR",
    "SHARE_PROCESSES",
    "ResourceLimits",
    "cap_pid_namespace",
    "default_memory",
    "format_size",
    "parse_size",
]

GiB = 1024**3
PID_MAX_FLOOR = _limits_exec.PID_MAX_FLOOR
"""What the kernel adds, in effect, to a PID namespace's process cap (see the module)."""
SHARE_FLOOR = 256 * 1024**2
"""The memory each process gets, where per-process limits share out a budget, before the
process limit is lowered for it."""
SHARE_PROCESSES = 8
"""The fewest processes a shared-out budget lowers the process limit to."""
_LAUNCHER = Path(_limits_exec.__file__)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": GiB, "t": 1024**4}
_SIZE = re.compile(r"\s*(\d+)\s*([kmgt]?)(?:i?b)?\s*", re.I)


def parse_size(text: str | int) -> int:
    """Bytes from ``4GiB``, ``512 MB``, ``100k`` or a plain number (units are powers of
    1024). Raises ``ValueError`` for anything else, or for zero."""
    if isinstance(text, bool):
        raise ValueError("give a size such as 4GiB or 512MiB")
    if isinstance(text, int):
        number = text
    else:
        found = _SIZE.fullmatch(text)
        if found is None:
            raise ValueError(f"{text!r} is not a size: give one such as 4GiB, 512MiB or 100k")
        number = int(found.group(1)) * _UNITS[found.group(2).lower()]
    if number <= 0:
        raise ValueError("a limit must be above 0 (or 'unlimited')")
    return number


def format_size(number: int) -> str:
    """``4 GiB``, ``512 MiB``, ``100 KiB`` or ``123 bytes``: the largest exact unit."""
    for unit, size in (("TiB", 1024**4), ("GiB", GiB), ("MiB", 1024**2), ("KiB", 1024)):
        if number % size == 0:
            return f"{number // size} {unit}"
    return f"{number} bytes"


@functools.cache
def default_memory() -> int:
    """The default memory budget of a command: the smaller of 4 GiB and half of this
    machine's RAM (4 GiB where the RAM cannot be read)."""
    try:
        ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 4 * GiB
    if ram <= 0:
        return 4 * GiB
    return min(4 * GiB, ram // 2 // 1024**2 * 1024**2)


@dataclass(frozen=True, slots=True)
class ResourceLimits:
    """The limits on each sandboxed command (see the module for what each means);
    ``None`` for no limit. The defaults never bother ordinary work."""

    cpu: int | None = 600
    memory: int | None = field(default_factory=default_memory)
    file_size: int | None = 1 * GiB
    processes: int | None = 512
    open_files: int | None = 4096

    def describe(self, *, budget: str | None = None) -> str:
        """One line, e.g. ``limits: cpu 600 s, memory 4 GiB, file 1 GiB, processes 512,
        open files 4096``. With ``budget`` (what holds memory and processes: ``cgroup v1``,
        ``cgroup v2`` or ``per process``, see ``swarm.sandbox.cgroup``) it says so:
        ``memory 4 GiB for the whole command (cgroup v1)`` or ``memory 256 MiB per
        process``."""
        memory = "memory unlimited" if self.memory is None else f"memory {format_size(self.memory)}"
        processes = f"processes {'unlimited' if self.processes is None else self.processes}"
        if budget == "per process":
            if self.memory is not None:
                memory += " per process"
            if self.memory is not None and self.processes is None:
                memory += " (no process limit: no bound on the sum)"
        elif budget is not None:
            memory += f" for the whole command ({budget})"
            processes += f" for the whole command ({budget})"
        parts = [
            "cpu unlimited" if self.cpu is None else f"cpu {self.cpu} s",
            memory,
            "file unlimited" if self.file_size is None else f"file {format_size(self.file_size)}",
            processes,
            f"open files {'unlimited' if self.open_files is None else self.open_files}",
        ]
        return "limits: " + ", ".join(parts)

    def shared(self) -> ResourceLimits:
        """Per-process limits whose sum fits this budget, for where no cgroup holds it:
        ``memory`` divided among ``processes``. Where that leaves a process less than
        ``SHARE_FLOOR``, the process limit is lowered so each gets that much, but not
        below ``SHARE_PROCESSES`` (then each gets less). Unchanged when either is
        unlimited."""
        if self.memory is None or self.processes is None:
            return self
        processes = self.processes
        if self.memory // processes < SHARE_FLOOR:
            processes = min(processes, max(SHARE_PROCESSES, self.memory // SHARE_FLOOR))
        return replace(self, memory=self.memory // processes, processes=processes)

    def options(self) -> list[str]:
        """The launchers' options (``--cpu=600`` ...; ``-1`` for no limit)."""
        values = {
            "cpu": self.cpu,
            "data": self.memory,
            "fsize": self.file_size,
            "nofile": self.open_files,
            "nproc": self.processes,
        }
        return [f"--{name}={-1 if value is None else value}" for name, value in values.items()]

    def _pairs(self) -> list[tuple[str, int, int]]:
        """``(name, soft, hard)`` of each limit set, in ``_limits_exec.NAMES``' names, as
        this process can give them: no higher than its own hard limits; ``nproc`` on top
        of the processes the user runs now (root is exempt from it)."""
        values = {
            "cpu": self.cpu,
            "data": self.memory,
            "fsize": self.file_size,
            "nofile": self.open_files,
            "nproc": self.processes,
        }
        pairs = []
        for name, value in values.items():
            if value is None:
                continue
            which = getattr(resource, _limits_exec.NAMES[name])
            if name == "nproc" and os.getuid() != 0:
                value += _limits_exec.user_processes(os.getuid())
            hard = value + _limits_exec.CPU_GRACE if name == "cpu" else value
            _, ceiling = resource.getrlimit(which)
            if ceiling != resource.RLIM_INFINITY:
                value, hard = min(value, ceiling), min(hard, ceiling)
            pairs.append((name, value, hard))
        return pairs

    def launcher(self) -> tuple[str, ...]:
        """The words to put before a program so it starts with these limits: util-linux's
        ``prlimit`` where there is one (it costs a millisecond), else swarm's own
        launcher (a Python start-up)."""
        prlimit = _prlimit()
        if prlimit is None:
            return (sys.executable, "-I", "-S", str(_LAUNCHER), *self.options())
        words = [prlimit, "--core=0"]
        words += [f"--{name}={soft}:{hard}" for name, soft, hard in self._pairs()]
        return tuple(words)

    def bash(self) -> str:
        """A bash command line (ending in ``; ``) that sets these limits on the shell and
        all it starts (soft limits first: a hard one below the soft fails), or exits 126
        with a ``swarm-limits:`` message: what the bubblewrap tier's gate runs instead of
        a ``prlimit`` in front of bubblewrap (a program fewer to start). bash counts sizes
        in KiB, so they are rounded down to one; ``set +o posix`` keeps that unit whatever
        the environment says (``POSIXLY_CORRECT`` would make it 512 bytes)."""
        hard_words = ["-c", "0"]
        soft_words = ["-c", "0"]
        for name, soft, hard in self._pairs():
            flag, unit = _BASH_FLAGS[name]
            hard_words += [flag, str(max(hard // unit, 1))]
            soft_words += [flag, str(max(soft // unit, 1))]
        failed = 'echo "swarm-limits: cannot set the resource limits" >&2; exit 126'
        return (
            f"set +o posix; ulimit -S {' '.join(soft_words)} && "
            f"ulimit -H {' '.join(hard_words)} || {{ {failed}; }}; "
        )

    def killed_by(self, signum: int) -> str | None:
        """What a command killed by signal ``signum`` ran into, when it was a limit:
        ``killed: CPU limit of 600 s`` or ``killed: file size limit of 1 GiB``."""
        if signum == signal.SIGXCPU and self.cpu is not None:
            return f"killed: CPU limit of {self.cpu} s"
        if signum == signal.SIGXFSZ and self.file_size is not None:
            return f"killed: file size limit of {format_size(self.file_size)}"
        return None


_BASH_FLAGS = {
    "cpu": ("-t", 1),
    "data": ("-d", 1024),
    "fsize": ("-f", 1024),
    "nofile": ("-n", 1),
    "nproc": ("-u", 1),
}
"""Per limit, bash's ``ulimit`` flag and the bytes in its unit."""


@functools.cache
def _prlimit() -> str | None:
    """util-linux's ``prlimit``, on Linux where it is installed."""
    return shutil.which("prlimit") if sys.platform.startswith("linux") else None


# Run in a process of its own: it joins the namespace, and only its child is inside.
_CAP = """
import ctypes, os, sys
pid, value = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(f"/proc/{pid}/ns/pid", os.O_RDONLY)
if libc.setns(fd, 0x20000000) != 0:
    sys.exit(f"setns: {os.strerror(ctypes.get_errno())}")
child = os.fork()
if child == 0:
    try:
        with open("/proc/sys/kernel/pid_max", "w") as f:
            f.write(value)
    except OSError as e:
        print(e, file=sys.stderr)
        os._exit(1)
    os._exit(0)
sys.exit(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]))
"""


def cap_pid_namespace(pid: int, processes: int) -> str | None:
    """Cap the processes of the PID namespace that process ``pid`` is in (see the
    module); ``None`` when done, else why not (an older kernel, no permission)."""
    value = str(processes + PID_MAX_FLOOR)
    nsenter = shutil.which("nsenter")
    if nsenter is not None:  # a few milliseconds, where Python takes tens
        write = 'echo "$1" > /proc/sys/kernel/pid_max'
        argv = [nsenter, f"--target={pid}", "--pid", "--", "/bin/sh", "-c", write, "sh", value]
    else:
        argv = [sys.executable, "-I", "-S", "-c", _CAP, str(pid), value]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=20,
            env={},
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if done.returncode != 0:
        return done.stderr.strip() or f"exit code {done.returncode}"
    return None
