"""ShellGuard: judge the programs a shell command would really run.

::

    guard = ShellGuard(deny=["curl", "wget", CommandPattern(program=("rm",), any_arg=("-*r*",))])
    shell = Tool(name="shell", handler=run, guards=(guard,))

The command is parsed (``swarm.guards.shellparse``) into every program it would start,
through ``bash -c``, ``env``, ``sudo``, ``xargs``, pipes, ``;``, ``&&``, subshells and
command substitution, so quoting tricks and wrappers cannot hide a denied program. A
command the parser cannot judge is denied.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import translate
from typing import TYPE_CHECKING, Any

import pydantic

from swarm.errors import GuardError
from swarm.guards.base import PermissionGuard
from swarm.guards.shellparse import Invocation, ShellSyntaxError, expand_argv, parse_command

if TYPE_CHECKING:
    from swarm.tools import Tool

__all__ = ["CommandPattern", "CommandPatternSpec", "PatternSet", "ShellGuard", "invocations_of"]

Globs = str | list[str]


_WILD = re.compile(r"[*?\[]")


def _any_match(pattern: re.Pattern[str], values: Iterable[str]) -> bool:
    return any(map(pattern.match, values))


def _compile(globs: Iterable[str]) -> re.Pattern[str] | None:
    globs = list(globs)
    if not globs:
        return None
    return re.compile("|".join(f"(?:{translate(g)})" for g in globs))


@dataclass(frozen=True, slots=True)
class CommandPattern:
    """Which invocations a rule is about; every field given must hold.

    ``program``: globs on the program name (``rm``, ``mkfs*``; a glob with a ``/`` is
    matched against the path as written). ``any_arg``: some argument matches one of
    these globs. ``all_args``: each glob is matched by some argument (``git`` with
    ``push`` and ``--force``). ``redirect``: some file redirection (in or out) matches;
    ``writes``: some output redirection matches. An empty pattern matches every
    invocation.
    """

    program: tuple[str, ...] = ()
    any_arg: tuple[str, ...] = ()
    all_args: tuple[str, ...] = ()
    redirect: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    _program: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _by_path: bool = field(init=False, repr=False, compare=False)
    _any_names: frozenset[str] = field(init=False, repr=False, compare=False)
    _any_globs: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _all_names: frozenset[str] = field(init=False, repr=False, compare=False)
    _all_globs: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)
    _redirect: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _writes: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("program", "any_arg", "all_args", "redirect", "writes"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, (value,))
        # plain names are checked as set members, only real globs as regexes
        any_names = frozenset(g for g in self.any_arg if not _WILD.search(g))
        all_names = frozenset(g for g in self.all_args if not _WILD.search(g))
        compiled = {
            "_program": _compile(self.program),
            "_by_path": any("/" in g for g in self.program),
            "_any_names": any_names,
            "_any_globs": _compile(g for g in self.any_arg if g not in any_names),
            "_all_names": all_names,
            "_all_globs": tuple(
                re.compile(translate(g)) for g in self.all_args if g not in all_names
            ),
            "_redirect": _compile(self.redirect),
            "_writes": _compile(self.writes),
        }
        for name, value in compiled.items():
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, spec: str | CommandPattern | Mapping[str, Any]) -> CommandPattern:
        """A pattern from a program glob (``"curl"``), a mapping of fields, or a pattern."""
        if isinstance(spec, CommandPattern):
            return spec
        if isinstance(spec, str):
            return cls(program=(spec,))
        return CommandPatternSpec.model_validate(spec).to_pattern()

    def _names_program(self, invocation: Invocation) -> bool:
        program = self._program
        assert program is not None
        if program.match(invocation.program):
            return True
        return self._by_path and bool(invocation.argv) and bool(program.match(invocation.argv[0]))

    def matches(self, invocation: Invocation, *, program_known: bool = False) -> bool:
        """True when ``invocation`` is one this pattern is about (``program_known``: the
        caller already matched the program name)."""
        program = self._program
        if program is not None and not program_known and not self._names_program(invocation):
            return False
        args = invocation.arg_set
        wants_any = bool(self._any_names) or self._any_globs is not None
        if wants_any and args.isdisjoint(self._any_names):
            globs = self._any_globs
            if globs is None or not _any_match(globs, args):
                return False
        if not self._all_names <= args:
            return False
        for wanted in self._all_globs:
            if not _any_match(wanted, args):
                return False
        if self._redirect is None and self._writes is None:
            return True
        files = [r for r in invocation.redirects if r.is_file]
        if self._redirect is not None and not any(self._redirect.match(r.target) for r in files):
            return False
        return self._writes is None or any(self._writes.match(r.target) for r in files if r.writes)

    def __str__(self) -> str:
        parts = [
            f"{name}={'|'.join(value)}"
            for name in ("program", "any_arg", "all_args", "redirect", "writes")
            if (value := getattr(self, name))
        ]
        return " ".join(parts) or "any command"


class PatternSet:
    """Patterns matched as one: an invocation matches when it matches any of them.

    Patterns whose programs are plain names are looked up by the invocation's program,
    so a call meets only the patterns about its programs (and those with wildcards).
    """

    __slots__ = ("_by_program", "_generic", "_named", "patterns")

    def __init__(self, patterns: Iterable[CommandPattern]) -> None:
        self.patterns = tuple(patterns)
        by_program: dict[str, list[CommandPattern]] = {}
        named: dict[str, CommandPattern] = {}  # patterns that are a program name and nothing else
        generic: list[CommandPattern] = []
        wild_names: list[str] = []
        for pattern in self.patterns:
            only_names = pattern == CommandPattern(program=pattern.program)
            if pattern.program and not any(c in g for g in pattern.program for c in "*?[/"):
                for name in pattern.program:
                    if only_names:
                        named.setdefault(name, pattern)
                    else:
                        by_program.setdefault(name, []).append(pattern)
            elif pattern.program and only_names:
                wild_names += pattern.program  # folded into one pattern below
            else:
                generic.append(pattern)
        if wild_names:
            generic.insert(0, CommandPattern(program=tuple(wild_names)))
        self._named = named
        self._by_program = {name: tuple(found) for name, found in by_program.items()}
        self._generic = tuple(generic)

    def first(self, invocation: Invocation) -> CommandPattern | None:
        """A pattern ``invocation`` matches, if any (one naming its program first)."""
        named = self._named.get(invocation.program)
        if named is not None:
            return named
        for pattern in self._by_program.get(invocation.program, ()):
            if pattern.matches(invocation, program_known=True):
                return pattern
        for pattern in self._generic:
            if pattern.matches(invocation):
                return pattern
        return None

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PatternSet) and other.patterns == self.patterns

    def __hash__(self) -> int:
        return hash(self.patterns)

    def __repr__(self) -> str:
        return f"PatternSet({list(self.patterns)!r})"


class CommandPatternSpec(pydantic.BaseModel):
    """A ``CommandPattern`` as written in a policy file; a bare string is a program glob."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    program: Globs = []
    any_arg: Globs = []
    all_args: Globs = []
    redirect: Globs = []
    writes: Globs = []

    def to_pattern(self) -> CommandPattern:
        """The compiled pattern."""

        def globs(value: Globs) -> tuple[str, ...]:
            return (value,) if isinstance(value, str) else tuple(value)

        return CommandPattern(
            program=globs(self.program),
            any_arg=globs(self.any_arg),
            all_args=globs(self.all_args),
            redirect=globs(self.redirect),
            writes=globs(self.writes),
        )


def invocations_of(command: object) -> tuple[Invocation, ...]:
    """The invocations of a command given as a string (parsed as shell) or as an argv list.

    Raises ``ShellSyntaxError`` when it cannot be judged (including any other type).
    """
    if isinstance(command, str):
        return parse_command(command)
    if isinstance(command, Sequence) and all(isinstance(a, str) for a in command):
        return expand_argv(list(command))
    raise ShellSyntaxError(f"a command must be a string or a list of strings, not {command!r}")


class ShellGuard(PermissionGuard):
    """Denies shell commands that would run a program matching ``deny``, or (when
    ``allow`` is given) any program that matches nothing in ``allow``.

    Patterns are ``CommandPattern``s, mappings of their fields, or program globs. The
    command is the ``argument`` of the call (default ``command``; a string is parsed as
    shell, a list of strings is an argv); a call without it passes untouched. A command
    that cannot be parsed is denied.
    """

    def __init__(
        self,
        *,
        allow: Sequence[str | CommandPattern | Mapping[str, Any]] | None = None,
        deny: Sequence[str | CommandPattern | Mapping[str, Any]] = (),
        argument: str = "command",
    ) -> None:
        self.allow = None if allow is None else PatternSet(map(CommandPattern.of, allow))
        self.deny = PatternSet(map(CommandPattern.of, deny))
        self.argument = argument

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        command = kwargs.get(self.argument)
        if command is None:
            return kwargs
        try:
            invocations = invocations_of(command)
        except ShellSyntaxError as exc:
            raise GuardError(
                f"the command cannot be judged, so it is not run: {exc}",
                guard=self.name,
                rule="unparseable",
            ) from None
        for invocation in invocations:
            denied = self.deny.first(invocation)
            if denied is not None:
                raise GuardError(
                    f"'{invocation}' is not allowed", guard=self.name, rule=f"deny {denied}"
                )
            if self.allow is not None and self.allow.first(invocation) is None:
                raise GuardError(
                    f"'{invocation}' is not among the allowed commands",
                    guard=self.name,
                    rule="allow list",
                )
        return kwargs
