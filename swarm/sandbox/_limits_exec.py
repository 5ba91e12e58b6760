"""Set resource limits, then exec a program: ``python -I -S _limits_exec.py --NAME=VALUE...
PROGRAM ARGS...``.

Run by path (stdlib only, so it starts fast and never imports the rest of swarm) in front
of ``bwrap`` and ``sandbox-exec``, which pass the limits on to everything they start; the
Landlock launcher imports ``apply`` and calls it in the command's process instead. The
options are the words before the program that look like ``--NAME=VALUE``; there is no
``--``, so the program's own options stay as they are. Names: ``cpu`` (seconds),
``data`` (bytes), ``fsize`` (bytes), ``nofile``, ``nproc``; a value of ``-1`` means no
limit. The core file size is always 0.

``nproc`` (``RLIMIT_NPROC``) counts every process of the real user across the machine, so
it is set to the number the user runs now plus the value: about that many more. Root is
exempt from it (the kernel never checks it for uid 0).

Exit status 126 with a ``swarm-limits:`` message means a limit could not be set; the
program did not run.
"""

from __future__ import annotations

import os
import resource
import sys

TYPE_CHECKING = False  # typing's own costs an import; type checkers treat this name as True
if TYPE_CHECKING:
    import signal
else:  # the C module: `signal` wraps it in enums, which costs each launch 12 ms of CPU
    import _signal as signal

NAMES = {
    "cpu": "RLIMIT_CPU",
    "data": "RLIMIT_DATA",
    "fsize": "RLIMIT_FSIZE",
    "nofile": "RLIMIT_NOFILE",
    "nproc": "RLIMIT_NPROC",
}
"""Option names and the limits they set."""
PID_MAX_FLOOR = 301
"""What the kernel adds, in effect, to a PID namespace's process cap."""
CPU_GRACE = 5
"""Seconds of CPU between SIGXCPU (the soft limit) and SIGKILL (the hard one)."""


def user_processes(uid: int) -> int:
    """How many processes the real user ``uid`` runs now (0 where there is no /proc)."""
    count = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as handle:
                for line in handle:
                    if line.startswith("Uid:"):
                        count += int(line.split()[1]) == uid
                        break
        except (OSError, ValueError, IndexError):
            continue
    return count


def _set(name: str, value: int) -> None:
    which = getattr(resource, NAMES[name], None)
    if which is None:
        return  # this system has no such limit (RLIMIT_NPROC everywhere but a few)
    _soft, hard = resource.getrlimit(which)
    soft = value
    if name == "nproc":
        soft = value + user_processes(os.getuid())
    wanted_hard = soft + CPU_GRACE if name == "cpu" else soft
    if hard != resource.RLIM_INFINITY:
        soft, wanted_hard = min(soft, hard), min(wanted_hard, hard)
    resource.setrlimit(which, (soft, wanted_hard))


def apply(limits: dict[str, int]) -> None:
    """Set ``limits`` (option name to value; ``-1``: leave it as it is) on this process,
    never above a hard limit already in force, and no core files. Raises ``OSError`` or
    ``ValueError`` when a limit cannot be set."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Python ignores these at start-up and an exec keeps that: give the command the
    # defaults, so it dies of a broken pipe (``yes | head``) or a file past the limit.
    for name in ("SIGPIPE", "SIGXFSZ", "SIGXFZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    for name, value in limits.items():
        if value >= 0:
            _set(name, value)


def cap_processes(processes: int) -> None:
    """Cap the processes of this process's PID namespace at about ``processes`` (its
    ``pid_max``, see ``swarm.sandbox.limits``); needs the right to, in the namespace.
    Raises ``OSError`` where the kernel has no per-namespace ``pid_max`` (before 6.14)."""
    with open("/proc/sys/kernel/pid_max", "w", encoding="ascii") as handle:
        handle.write(str(processes + PID_MAX_FLOOR))


def parse(args: list[str]) -> tuple[dict[str, int], list[str]]:
    """The limits given as leading ``--NAME=VALUE`` words, and the program with its
    arguments. Raises ``ValueError`` for an unknown name or a bad value."""
    limits: dict[str, int] = {}
    index = 0
    while index < len(args) and args[index].startswith("--") and "=" in args[index]:
        name, _, value = args[index][2:].partition("=")
        if name not in NAMES:
            raise ValueError(f"unknown limit {name!r}")
        limits[name] = int(value)
        index += 1
    if index == len(args):
        raise ValueError("no program given")
    return limits, args[index:]


def main(args: list[str]) -> int:
    """Set the limits and exec the program; returns only when that fails."""
    try:
        limits, argv = parse(args)
        apply(limits)
    except (OSError, ValueError) as error:
        print(f"swarm-limits: {error}", file=sys.stderr)
        return 126
    try:
        os.execvp(argv[0], argv)
    except FileNotFoundError:
        print(f"swarm-limits: {argv[0]}: command not found", file=sys.stderr)
        return 127
    except OSError as error:
        print(f"swarm-limits: {argv[0]}: {error.strerror}", file=sys.stderr)
    return 126


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
