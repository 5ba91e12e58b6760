"""Programs that run other programs, and how to find what they run in their argv.

Each entry reads a wrapper's options the way the real program does (``sudo -u root``,
``timeout -s KILL 5``, ``nice -n 10``, ``xargs -I{} -P 4``) so the wrapped argv starts at
the right word. A wrapper whose options are not modelled here is refused, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["WRAPPERS", "Unwrap"]

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True, slots=True)
class Unwrap:
    """What a wrapper runs: ``argv[start:]`` (``split`` prepended: ``env -S``), a shell
    ``script`` made from the words ``sources`` (``sh -c``, ``eval``, ``su -c``), a script
    read from ``stdin``, more argvs in word ranges ``extra`` (``find -exec``), or nothing.
    ``refuse`` says why it cannot be judged."""

    start: int | None = None
    script: str | None = None
    sources: tuple[int, ...] = ()
    stdin: bool = False
    split: str | None = None
    extra: tuple[tuple[int, int], ...] = ()
    refuse: str | None = None


def _options(
    argv: Sequence[str], i: int, short_args: str = "", long_args: tuple[str, ...] = ()
) -> tuple[int, dict[str, str | None]]:
    """Skip the options starting at ``argv[i]``; return the first operand's index and the
    options seen. ``short_args``/``long_args`` name the options that take a value."""
    seen: dict[str, str | None] = {}
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return i + 1, seen
        if arg.startswith("--"):
            name, eq, value = arg[2:].partition("=")
            if not eq and name in long_args:
                i += 1
                value = argv[i] if i < len(argv) else ""
            seen["--" + name] = value if (eq or name in long_args) else None
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], start=1):
                if letter in short_args:
                    value = arg[j + 1 :]
                    if not value:
                        i += 1
                        value = argv[i] if i < len(argv) else ""
                    seen["-" + letter] = value
                    break
                seen["-" + letter] = None
        else:
            break
        i += 1
    return i, seen


def _runs(argv: Sequence[str], i: int) -> Unwrap:
    return Unwrap(start=i if i < len(argv) else None)


def _plain(argv: Sequence[str]) -> Unwrap:
    return _runs(argv, 1)


def _env(argv: Sequence[str]) -> Unwrap:
    i, seen = _options(argv, 1, "uCS", ("unset", "chdir", "split-string"))
    while i < len(argv) and _ASSIGNMENT.match(argv[i]):
        i += 1
    split = seen.get("-S") or seen.get("--split-string")
    if split:
        source = next(k for k, a in enumerate(argv) if split in a)
        return Unwrap(start=i, split=split, sources=(source,))
    return _runs(argv, i)


def _sudo(argv: Sequence[str]) -> Unwrap:
    i, seen = _options(
        argv,
        1,
        "ugCDhprtUT",
        ("user", "group", "close-from", "chdir", "host", "prompt", "role", "type", "other-user"),
    )
    if argv[0].endswith("sudoedit") or seen.keys() & {"-e", "--edit", "-l", "--list", "-v"}:
        return Unwrap()
    if i >= len(argv) and seen.keys() & {"-s", "--shell", "-i", "--login"}:
        return Unwrap(stdin=True)
    return _runs(argv, i)


def _doas(argv: Sequence[str]) -> Unwrap:
    i, seen = _options(argv, 1, "uC")
    if i >= len(argv) and "-s" in seen:
        return Unwrap(stdin=True)
    return _runs(argv, i)


def _su(argv: Sequence[str]) -> Unwrap:
    _, seen = _options(
        argv, 1, "cgGsw", ("command", "session-command", "group", "supp-group", "shell")
    )
    script = seen.get("-c") or seen.get("--command") or seen.get("--session-command")
    if script:
        source = next(k for k, a in enumerate(argv) if k and script in a)
        return Unwrap(script=script, sources=(source,))
    return Unwrap(stdin=True)


def _shell(argv: Sequence[str]) -> Unwrap:
    i, command, stdin = 1, False, False
    while i < len(argv):
        arg = argv[i]
        if arg in ("--", "-"):
            i += 1
            break
        if arg.startswith("--"):
            i += 2 if arg in ("--rcfile", "--init-file") else 1
        elif arg[:1] in "-+" and len(arg) > 1:
            command = command or "c" in arg[1:]
            stdin = stdin or "s" in arg[1:]
            i += 2 if ("o" in arg[1:] or "O" in arg[1:]) else 1
        else:
            break
    if command:
        if i >= len(argv):
            return Unwrap(refuse=f"'{argv[0]} -c' has no command string")
        return Unwrap(script=argv[i], sources=(i,))
    if stdin or i >= len(argv):
        return Unwrap(stdin=True)
    return Unwrap()  # runs a script file


def _eval(argv: Sequence[str]) -> Unwrap:
    return Unwrap(script=" ".join(argv[1:]), sources=tuple(range(1, len(argv))))


def _command(argv: Sequence[str]) -> Unwrap:
    i, seen = _options(argv, 1)
    return Unwrap() if seen.keys() & {"-v", "-V"} else _runs(argv, i)


def _exec(argv: Sequence[str]) -> Unwrap:
    return _runs(argv, _options(argv, 1, "a")[0])


def _time(argv: Sequence[str]) -> Unwrap:
    return _runs(argv, _options(argv, 1, "fo", ("format", "output"))[0])


def _nice(argv: Sequence[str]) -> Unwrap:
    return _runs(argv, _options(argv, 1, "n", ("adjustment",))[0])


def _timeout(argv: Sequence[str]) -> Unwrap:
    i, _ = _options(argv, 1, "sk", ("signal", "kill-after"))
    return _runs(argv, i + 1)  # argv[i] is the duration


def _stdbuf(argv: Sequence[str]) -> Unwrap:
    return _runs(argv, _options(argv, 1, "ioe", ("input", "output", "error"))[0])


def _ionice(argv: Sequence[str]) -> Unwrap:
    i, seen = _options(argv, 1, "cnpPu", ("class", "classdata", "pid", "pgid", "uid"))
    if seen.keys() & {"-p", "-P", "-u", "--pid", "--pgid", "--uid"}:
        return Unwrap()
    return _runs(argv, i)


def _setsid(argv: Sequence[str]) -> Unwrap:
    return _runs(argv, _options(argv, 1)[0])


def _taskset(argv: Sequence[str]) -> Unwrap:
    i, seen = _options(argv, 1)
    if seen.keys() & {"-p", "--pid"}:
        return Unwrap()
    return _runs(argv, i + 1)  # argv[i] is the CPU mask or list


def _chrt(argv: Sequence[str]) -> Unwrap:
    i, seen = _options(argv, 1, "TPD", ("sched-runtime", "sched-period", "sched-deadline"))
    if seen.keys() & {"-p", "--pid"}:
        return Unwrap()
    return _runs(argv, i + 1)  # argv[i] is the priority


def _chroot(argv: Sequence[str]) -> Unwrap:
    i, _ = _options(argv, 1, "", ("userspec", "groups"))
    if i + 1 >= len(argv):
        return Unwrap(stdin=True)  # runs an interactive shell in the new root
    return Unwrap(start=i + 1)


def _flock(argv: Sequence[str]) -> Unwrap:
    i, seen = _options(argv, 1, "wEc", ("timeout", "wait", "conflict-exit-code", "command"))
    script = seen.get("-c") or seen.get("--command")
    if script:
        source = next(k for k, a in enumerate(argv) if k and script in a)
        return Unwrap(script=script, sources=(source,))
    return _runs(argv, i + 1)  # argv[i] is the lock file


def _watch(argv: Sequence[str]) -> Unwrap:
    i, seen = _options(argv, 1, "n", ("interval",))
    if seen.keys() & {"-x", "--exec"}:
        return _runs(argv, i)
    return Unwrap(script=" ".join(argv[i:]), sources=tuple(range(i, len(argv))))


def _xargs(argv: Sequence[str]) -> Unwrap:
    i, _ = _options(
        argv,
        1,
        "aEILnPsd",
        ("arg-file", "delimiter", "max-args", "max-procs", "max-chars", "max-lines"),
    )
    return _runs(argv, i)


def _find(argv: Sequence[str]) -> Unwrap:
    ranges: list[tuple[int, int]] = []
    i = 1
    while i < len(argv):
        if argv[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = i + 1
            while end < len(argv) and argv[end] not in (";", "+"):
                end += 1
            if end > i + 1:
                ranges.append((i + 1, end))
            i = end
        i += 1
    return Unwrap(extra=tuple(ranges))


def _trap(argv: Sequence[str]) -> Unwrap:
    i = 2 if argv[1:2] == ["--"] or tuple(argv[1:2]) == ("--",) else 1
    if i >= len(argv) or argv[i].startswith("-") or len(argv) == i + 1:
        return Unwrap()  # lists or resets traps
    return Unwrap(script=argv[i], sources=(i,))


def _python(argv: Sequence[str]) -> Unwrap:
    """``python -m MODULE``: runs MODULE as a program of that name (``pip``)."""
    _, seen = _options(argv, 1, "cmWXQ")
    module = seen.get("-m")
    if module and "-c" not in seen:
        k = next(k for k, a in enumerate(argv) if k and (a == module or a == "-m" + module))
        return Unwrap(start=k) if argv[k] == module else Unwrap()
    return Unwrap()


def _refused(argv: Sequence[str]) -> Unwrap:
    name = argv[0].rsplit("/", 1)[-1]
    return Unwrap(refuse=f"'{name}' runs programs in a way this parser does not model")


_SHELLS = ("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash")
_OPAQUE = (
    "strace", "ltrace", "valgrind", "gdb", "perf", "nsenter", "unshare", "runuser",
    "systemd-run", "firejail", "bwrap", "script", "expect", "parallel", "tmux", "screen",
    "at", "batch", "setpriv", "capsh", "fakeroot", "proot", "sg", "newgrp", "csh", "tcsh",
    "fish", "rc", "es", "xonsh", "nu", "elvish",
)  # fmt: skip

WRAPPERS: dict[str, Callable[[Sequence[str]], Unwrap]] = {
    **dict.fromkeys(_SHELLS, _shell),
    **dict.fromkeys(_OPAQUE, _refused),
    **dict.fromkeys(("nohup", "builtin", "unbuffer", "busybox", "pkexec", "coproc"), _plain),
    "env": _env,
    "sudo": _sudo,
    "sudoedit": _sudo,
    "doas": _doas,
    "su": _su,
    "eval": _eval,
    "command": _command,
    "exec": _exec,
    "time": _time,
    "nice": _nice,
    "timeout": _timeout,
    "stdbuf": _stdbuf,
    "ionice": _ionice,
    "setsid": _setsid,
    "taskset": _taskset,
    "chrt": _chrt,
    "chroot": _chroot,
    "flock": _flock,
    "watch": _watch,
    "xargs": _xargs,
    "find": _find,
    "trap": _trap,
    **dict.fromkeys(
        ("python", "python2", "python3", *(f"python3.{v}" for v in range(6, 16))), _python
    ),
}
"""Wrapper programs by name (without directory)."""
