"""What a shell command line would run: ``Invocation`` and ``Redirect``, the parser's output.

A word whose value is only known when the command runs (an unresolved expansion, a command
substitution, an unquoted glob that could match an option-like name, arguments ``xargs``
reads from its input) is *unknown*; an invocation says which of its words are, so a rule can
fail closed on them.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

__all__ = ["MAX_DEPTH", "Invocation", "Redirect", "ShellSyntaxError", "UnknownWord"]

MAX_DEPTH = 16


class ShellSyntaxError(ValueError):
    """The command line cannot be judged (bad syntax or a construct the parser refuses)."""


@dataclass(frozen=True, slots=True)
class Redirect:
    """A redirection: ``op`` as written (``>``, ``2>>``, ``<<``) and its target (for a
    heredoc or here-string, the text fed to the program). A file target is normalised
    (``/tmp/../etc/F`` is ``/etc/F``); ``known`` is False when it is only known at run
    time."""

    op: str
    target: str
    known: bool = True

    @property
    def is_file(self) -> bool:
        """True when the target names a file (not a heredoc or here-string)."""
        return not self.op.lstrip("0123456789").startswith("<<")

    @property
    def writes(self) -> bool:
        """True when the program's output goes to the target file."""
        op = self.op.lstrip("0123456789")
        return op.startswith(">") or op.startswith("&>") or op == "<>"


@dataclass(frozen=True, slots=True)
class UnknownWord:
    """A word of an argv known only at run time: its position (0: the program), the
    literal text it surely starts with, and its possible values when they are known
    (``for f in a b``)."""

    index: int
    prefix: str = ""
    choices: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Invocation:
    """One program the command line would run: its argv (quotes removed, expansions that
    could not be resolved left as written) and the redirections of its simple command.

    ``unknown`` lists the words only known at run time; ``more_args``: further arguments
    arrive at run time (``xargs``); ``runs_code`` says why the invocation runs code that
    is not on the command line (``""`` when it does not); ``writes`` are the files it
    writes, normalised (redirections, ``tee``, ``cp``, ``sed -i``, ...), and
    ``unknown_writes`` is True when it writes a file only known at run time.
    """

    argv: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    unknown: tuple[UnknownWord, ...] = ()
    more_args: bool = False
    runs_code: str = ""
    writes: tuple[str, ...] = ()
    unknown_writes: bool = False
    program: str = field(init=False, repr=False, compare=False)
    """The program's name without its directory (``/bin/rm`` is ``rm``; ``""`` when the
    name is only known at run time)."""
    arg_set: frozenset[str] = field(init=False, repr=False, compare=False)
    """The known arguments as a set (for matching)."""
    unknown_args: tuple[UnknownWord, ...] = field(init=False, repr=False, compare=False)
    """The unknown words among the arguments."""
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        argv, unknown, setattr_ = self.argv, self.unknown, object.__setattr__
        if not unknown:
            setattr_(self, "program", argv[0].rsplit("/", 1)[-1] if argv else "")
            setattr_(self, "arg_set", frozenset(argv[1:]))
            setattr_(self, "unknown_args", ())
        else:
            unknown_program = any(u.index == 0 for u in unknown)
            program = argv[0].rsplit("/", 1)[-1] if argv and not unknown_program else ""
            setattr_(self, "program", program)
            skip = {u.index for u in unknown}
            args = frozenset(a for i, a in enumerate(argv) if i and i not in skip)
            setattr_(self, "arg_set", args)
            setattr_(self, "unknown_args", tuple(u for u in unknown if u.index))
        object.__setattr__(self, "_hash", 0)

    def __hash__(self) -> int:
        # computed once: rules look invocations up in caches on every decision
        if not self._hash:
            key = (self.argv, self.redirects, self.unknown, self.more_args, self.runs_code)
            object.__setattr__(self, "_hash", hash((*key, self.writes, self.unknown_writes)) or 1)
        return self._hash

    @property
    def args(self) -> tuple[str, ...]:
        """The arguments after the program."""
        return self.argv[1:]

    @property
    def program_unknown(self) -> bool:
        """True when the program's name is only known at run time (``$CMD``)."""
        return bool(self.argv) and not self.program

    @property
    def args_unknown(self) -> bool:
        """True when some argument is only known at run time."""
        return self.more_args or bool(self.unknown_args)

    def __str__(self) -> str:
        return shlex.join(self.argv)
