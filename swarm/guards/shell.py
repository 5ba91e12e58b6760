"""ShellGuard: judge the programs a shell command would really run.

::

    guard = ShellGuard(deny=["curl", "wget", CommandPattern(program=("rm",), any_arg=("-*r*",))])
    shell = Tool(name="shell", handler=run, guards=(guard,))

The command is parsed (``swarm.guards.bash.parse``) into every program it would start,
through ``bash -c``, ``env``, ``sudo``, ``xargs``, pipes, ``;``, ``&&``, subshells and
command substitution, so quoting tricks and wrappers cannot hide a denied program. A
command the parser cannot judge is denied.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase, translate
from typing import TYPE_CHECKING, Any

import pydantic

from swarm.errors import GuardError
from swarm.guards.base import PermissionGuard
from swarm.guards.bash.parse import (
    Invocation,
    ShellSyntaxError,
    UnknownWord,
    expand_argv,
    parse_command,
)

if TYPE_CHECKING:
    from swarm.tools import Tool

__all__ = [
    "CommandPattern",
    "CommandPatternSpec",
    "PatternSet",
    "ShellGuard",
    "invocations_of",
    "judged_invocations",
]

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
    ``push`` and ``--force``). A long option abbreviated as getopt_long allows counts as
    the option a glob names (``--recurs`` is ``--recursive``), as does ``--opt=value``.
    ``redirect``: some file redirection (in or out) matches; ``writes``: some file the
    invocation writes (redirections, ``tee``, ``cp``, ``sed -i``, ...; normalised paths)
    matches. ``runs_code``: the invocation runs code that is not on the command line, of
    one of these kinds (``*``: any; see ``Invocation.runs_code``). ``unknown_program``:
    the program's name is only known at run time. An empty pattern matches every
    invocation.

    What is only known at run time fails closed (``deny=True``, for deny rules): an
    unknown program name matches any ``program``, an unknown argument matches the
    argument globs it could turn out to match, an unknown target matches ``redirect``
    and ``writes``. For allow and ask rules such conditions do not hold.
    """

    program: tuple[str, ...] = ()
    any_arg: tuple[str, ...] = ()
    all_args: tuple[str, ...] = ()
    redirect: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    runs_code: tuple[str, ...] = ()
    unknown_program: bool = False
    # the regexes, built on the first match (a policy file has hundreds of patterns, and
    # `swarm validate` or a run that never meets a pattern's program needs none of them)
    _matcher: _Matcher | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("program", "any_arg", "all_args", "redirect", "writes", "runs_code"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, (value,))

    def _compiled(self) -> _Matcher:
        matcher = self._matcher
        if matcher is None:
            matcher = _Matcher(self)
            object.__setattr__(self, "_matcher", matcher)
        return matcher

    @classmethod
    def of(cls, spec: str | CommandPattern | Mapping[str, Any]) -> CommandPattern:
        """A pattern from a program glob (``"curl"``), a mapping of fields, or a pattern."""
        if isinstance(spec, CommandPattern):
            return spec
        if isinstance(spec, str):
            return cls(program=(spec,))
        return CommandPatternSpec.model_validate(spec).to_pattern()

    def matches(
        self, invocation: Invocation, *, program_known: bool = False, deny: bool = False
    ) -> bool:
        """True when ``invocation`` is one this pattern is about (``program_known``: the
        caller already matched the program name; ``deny``: what is only known at run
        time matches, as a deny rule needs)."""
        if self.unknown_program and not invocation.program_unknown:
            return False
        m = self._matcher or self._compiled()
        program = m.program
        if program is not None and not program_known:
            if invocation.program_unknown:
                if not deny:
                    return False
            elif not m.names_program(invocation):
                return False
        if m.runs_code is not None:
            kind = invocation.runs_code
            if not kind or not m.runs_code.match(kind):
                return False
        if m.wants_args and not m.args_match(self, invocation, deny):
            return False
        if m.redirect is None and m.writes is None:
            return True
        if m.redirect is not None:
            files = [r for r in invocation.redirects if r.is_file]
            if not any(m.redirect.match(r.target) if r.known else deny for r in files):
                return False
        if m.writes is not None:
            if invocation.unknown_writes:
                return deny
            return any(m.writes.match(t) for t in invocation.writes)
        return True

    def __str__(self) -> str:
        parts = [
            f"{name}={'|'.join(value)}"
            for name in ("program", "any_arg", "all_args", "redirect", "writes", "runs_code")
            if (value := getattr(self, name))
        ]
        if self.unknown_program:
            parts.append("unknown_program")
        return " ".join(parts) or "any command"


def _literal(glob: str) -> str:
    """The text every match of ``glob`` starts with."""
    found = _WILD.search(glob)
    return glob if found is None else glob[: found.start()]


def _could_match(word: UnknownWord, glob: str) -> bool:
    """Whether an argument only known at run time could match ``glob``."""
    if word.choices is not None:
        return any(
            fnmatchcase(c, glob)
            or fnmatchcase(c.split("=", 1)[0], glob)
            or (c.startswith("--") and len(c) > 2 and _literal(glob).startswith(c))
            for c in word.choices
        )
    literal, prefix = _literal(glob), word.prefix
    return literal.startswith(prefix) or prefix.startswith(literal)


class _Matcher:
    """A ``CommandPattern``'s globs compiled: plain names as set members, only real globs
    as regexes."""

    __slots__ = (
        "all_globs",
        "all_names",
        "any_globs",
        "any_names",
        "by_path",
        "longs",
        "program",
        "redirect",
        "runs_code",
        "wants_args",
        "writes",
    )

    def __init__(self, pattern: CommandPattern) -> None:
        self.any_names = frozenset(g for g in pattern.any_arg if not _WILD.search(g))
        self.all_names = frozenset(g for g in pattern.all_args if not _WILD.search(g))
        longs = {_literal(g) for g in (*pattern.any_arg, *pattern.all_args) if g.startswith("--")}
        self.program = _compile(pattern.program)
        self.by_path = any("/" in g for g in pattern.program)
        self.any_globs = _compile(g for g in pattern.any_arg if g not in self.any_names)
        self.all_globs = tuple(
            re.compile(translate(g)) for g in pattern.all_args if g not in self.all_names
        )
        self.redirect = _compile(pattern.redirect)
        self.writes = _compile(pattern.writes)
        self.runs_code = _compile(pattern.runs_code)
        self.longs = tuple(sorted(g for g in longs if len(g) > 2))
        self.wants_args = bool(pattern.any_arg or pattern.all_args)

    def names_program(self, invocation: Invocation) -> bool:
        program = self.program
        assert program is not None
        if program.match(invocation.program):
            return True
        return self.by_path and bool(invocation.argv) and bool(program.match(invocation.argv[0]))

    def args_match(self, pattern: CommandPattern, invocation: Invocation, deny: bool) -> bool:
        args = invocation.arg_set
        if self.longs and any(a.startswith("--") for a in args):
            args = args | {
                long
                for a in args
                if a.startswith("--") and len(name := a.split("=", 1)[0]) > 2
                for long in self.longs
                if long.startswith(name)
            }
        unknown = invocation.unknown_args
        if (unknown or invocation.more_args) and not deny:
            return False
        anything = invocation.more_args

        def could_be(glob: str) -> bool:
            return anything or any(_could_match(u, glob) for u in unknown)

        if pattern.any_arg and args.isdisjoint(self.any_names):
            globs = self.any_globs
            if (globs is None or not _any_match(globs, args)) and not any(
                could_be(g) for g in pattern.any_arg
            ):
                return False
        for name in self.all_names:
            if name not in args and not could_be(name):
                return False
        for glob, wanted in zip(
            (g for g in pattern.all_args if g not in self.all_names), self.all_globs, strict=True
        ):
            if not _any_match(wanted, args) and not could_be(glob):
                return False
        return True


class PatternSet:
    """Patterns matched as one: an invocation matches when it matches any of them.

    Patterns whose programs are plain names are looked up by the invocation's program,
    so a call meets only the patterns about its programs (and those with wildcards).
    """

    __slots__ = ("_by_program", "_found", "_found_deny", "_generic", "_named", "patterns")

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
        # one cache per ``deny``, keyed by the invocation itself (no key tuple to build);
        # the parser hands out one object per distinct invocation, so a hit is found by
        # identity and never compares fields
        self._found: dict[Invocation, CommandPattern | None] = {}
        self._found_deny: dict[Invocation, CommandPattern | None] = {}

    def first(self, invocation: Invocation, *, deny: bool = False) -> CommandPattern | None:
        """A pattern ``invocation`` matches, if any (one naming its program first);
        ``deny``: what is only known at run time matches (see ``CommandPattern``)."""
        cache = self._found_deny if deny else self._found
        found = cache.get(invocation, self)
        if found is self:  # not seen yet (None is a result)
            found = self._first(invocation, deny)
            if len(cache) >= 4096:
                cache.clear()
            cache[invocation] = found
        return found  # type: ignore[return-value]

    def judge(self, invocations: Iterable[Invocation], *, every: bool) -> bool:
        """``every``: whether each invocation matches some pattern (as ``first``, for an
        allow or ask rule); else whether any does (``deny=True``, for a deny rule).

        The same answers as ``first`` on each, in one loop (a rule judges every program
        of a command line; this is the policy's inner loop)."""
        deny = not every
        cache = self._found_deny if deny else self._found
        for invocation in invocations:
            found = cache.get(invocation, self)
            if found is self:  # not seen yet (None is a result)
                found = self._first(invocation, deny)
                if len(cache) >= 4096:
                    cache.clear()
                cache[invocation] = found
            if (found is not None) is deny:
                return deny  # a miss fails "every", a hit settles "any"
        return every

    def _first(self, invocation: Invocation, deny: bool) -> CommandPattern | None:
        if invocation.program_unknown:
            return next((p for p in self.patterns if p.matches(invocation, deny=deny)), None)
        named = self._named.get(invocation.program)
        if named is not None:
            return named
        for pattern in self._by_program.get(invocation.program, ()):
            if pattern.matches(invocation, program_known=True, deny=deny):
                return pattern
        for pattern in self._generic:
            if pattern.matches(invocation, deny=deny):
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
    runs_code: bool | Globs = []
    unknown_program: bool = False

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
            runs_code=("*",) if self.runs_code is True else globs(self.runs_code or []),
            unknown_program=self.unknown_program,
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


def judged_invocations(command: object, guard: str) -> tuple[Invocation, ...]:
    """The invocations of ``command`` for a guard to judge; raises ``GuardError`` (rule
    ``unparseable``) when the command line cannot be judged, so it is not run."""
    try:
        return invocations_of(command)
    except ShellSyntaxError as exc:
        raise GuardError(
            f"the command cannot be judged, so it is not run: {exc}",
            guard=guard,
            rule="unparseable",
        ) from None


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
        for invocation in judged_invocations(command, self.name):
            denied = self.deny.first(invocation, deny=True)
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
