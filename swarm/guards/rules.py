"""Policy rules: an action on tool-name globs, with conditions on the validated arguments.

A condition names an argument (``path``, or ``options.depth`` inside a nested mapping) and
holds when every test it gives holds: ``glob`` (the whole string, ``*`` crosses ``/``),
``regex`` (searched anywhere), ``path`` (segment-aware glob: ``*`` stays within one
segment, ``**`` spans any number; the path is normalised first), ``equals``, ``one_of``,
numeric bounds ``ge``/``gt``/``le``/``lt``, and ``shell`` (``CommandPattern``s on the
programs a shell command would run).

Conditions fail closed. A missing argument or a value of the wrong type never matches.
For a list value (or the programs of a shell command) a ``deny`` rule matches when *any*
item does, while ``ask`` and ``allow`` rules need *every* item to match. A shell command
that cannot be parsed raises ``Unjudgeable``, which a policy turns into a denial under the
rule id ``unparseable-command``. What a shell command only knows at run time (an unknown
program, argument or write target) matches a ``deny`` rule's shell patterns and never an
``ask`` or ``allow`` rule's (see ``CommandPattern``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import translate
from pathlib import Path, PurePath
from typing import Any, Literal

import pydantic

from swarm.errors import ConfigError
from swarm.guards.bash.parse import Invocation, ShellSyntaxError
from swarm.guards.shell import CommandPattern, CommandPatternSpec, PatternSet, invocations_of

__all__ = [
    "UNPARSEABLE",
    "Action",
    "Condition",
    "ConditionSpec",
    "Decision",
    "Rule",
    "RuleOrigin",
    "Unjudgeable",
]

UNPARSEABLE = "unparseable-command"
"""The rule id under which a command that cannot be parsed is denied and logged."""

Action = Literal["deny", "ask", "allow"]
Globs = str | list[str]
Scalar = str | int | float | bool | None


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


_MISSING: Any = _Missing()

_NO_PATTERNS = PatternSet(())


class Unjudgeable(Exception):
    """A condition of ``rule`` cannot say whether it holds (a shell command that does not
    parse)."""

    def __init__(self, message: str, rule: Rule) -> None:
        super().__init__(message)
        self.rule = rule


class ConditionSpec(pydantic.BaseModel):
    """One argument's condition as written in a policy file."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    glob: Globs | None = None
    regex: Globs | None = None
    path: Globs | None = None
    equals: Scalar = None
    one_of: list[Scalar] | None = None
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    shell: str | CommandPatternSpec | list[str | CommandPatternSpec] | None = None

    @pydantic.field_validator("regex")
    @classmethod
    def _compiles(cls, value: Globs | None) -> Globs | None:
        for pattern in [value] if isinstance(value, str) else value or []:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
        return value

    @pydantic.model_validator(mode="after")
    def _not_empty(self) -> ConditionSpec:
        if not self.model_fields_set:
            raise ValueError("a condition needs at least one test (glob, regex, path, ...)")
        return self


def _list(value: Globs | None) -> list[str]:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def path_glob(glob: str) -> re.Pattern[str]:
    """A regex for a path glob: ``*``/``?`` within a segment, ``**`` across segments."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] in "*?":
            out.append("[^/]*" if glob[i] == "*" else "[^/]")
            i += 1
        elif glob[i] == "[" and (end := glob.find("]", i + 2)) > 0:
            body = glob[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def _either(patterns: list[re.Pattern[str]]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{p.pattern})" for p in patterns), re.DOTALL)


@dataclass(frozen=True, slots=True)
class Condition:
    """A compiled condition on one argument (see the module docstring)."""

    argument: str
    glob: re.Pattern[str] | None = None
    regex: tuple[re.Pattern[str], ...] = ()
    path: re.Pattern[str] | None = None
    equals: Any = _MISSING
    one_of: tuple[Any, ...] | None = None
    bounds: tuple[float | None, float | None, float | None, float | None] = (None,) * 4
    shell: PatternSet = _NO_PATTERNS
    _item_tests: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        item_tests = (
            self.glob is not None
            or bool(self.regex)
            or self.path is not None
            or self.equals is not _MISSING
            or self.one_of is not None
            or any(b is not None for b in self.bounds)
        )
        object.__setattr__(self, "_item_tests", item_tests)

    @classmethod
    def from_spec(cls, argument: str, spec: ConditionSpec) -> Condition:
        """Compile the condition a policy file gives for ``argument``."""
        shell = spec.shell
        shells = [] if shell is None else shell if isinstance(shell, list) else [shell]
        return cls(
            argument,
            glob=_either([re.compile(translate(g)) for g in _list(spec.glob)]),
            regex=tuple(re.compile(r) for r in _list(spec.regex)),
            path=_either([path_glob(g) for g in _list(spec.path)]),
            equals=spec.equals if "equals" in spec.model_fields_set else _MISSING,
            one_of=None if spec.one_of is None else tuple(spec.one_of),
            bounds=(spec.ge, spec.gt, spec.le, spec.lt),
            shell=PatternSet(
                CommandPattern.of(s if isinstance(s, str) else s.to_pattern()) for s in shells
            ),
        )

    def holds(
        self,
        arguments: Mapping[str, Any],
        *,
        every: bool,
        rule: Rule,
        parsed: dict[str, Any] | None = None,
    ) -> bool:
        """Whether the condition holds on ``arguments``; ``every``: all items must match.
        ``parsed`` keeps shell commands parsed once for all the rules of a decision."""
        name = self.argument
        value = arguments.get(name) if "." not in name else _lookup(arguments, name)
        if value is _MISSING or value is None:
            return False
        if self.shell and not self._shell_holds(value, every=every, rule=rule, parsed=parsed):
            return False
        if not self._item_tests:
            return True
        items = list(value) if isinstance(value, list | tuple) else [value]
        results = (self._item_holds(item) for item in items)
        return all(results) if every else any(results)

    def matching_program(self, arguments: Mapping[str, Any]) -> Invocation | None:
        """The first invocation a ``shell`` condition matches (to say what was denied)."""
        try:
            invocations = invocations_of(_lookup(arguments, self.argument))
        except ShellSyntaxError:
            return None
        return next((i for i in invocations if self.shell.first(i, deny=True) is not None), None)

    def _shell_holds(
        self, value: Any, *, every: bool, rule: Rule, parsed: dict[str, Any] | None
    ) -> bool:
        invocations = parsed.get(self.argument) if parsed is not None else None
        if invocations is None:
            try:
                invocations = invocations_of(value)
            except ShellSyntaxError as exc:
                invocations = exc
            if parsed is not None:
                parsed[self.argument] = invocations
        if isinstance(invocations, ShellSyntaxError):
            raise Unjudgeable(f"argument '{self.argument}': {invocations}", rule)
        return self.shell.judge(invocations, every=every)

    def _item_holds(self, item: Any) -> bool:
        if self.equals is not _MISSING and not _same(item, self.equals):
            return False
        if self.one_of is not None and not any(_same(item, v) for v in self.one_of):
            return False
        if any(b is not None for b in self.bounds):
            if isinstance(item, bool) or not isinstance(item, int | float):
                return False
            ge, gt, le, lt = self.bounds
            if (ge is not None and not item >= ge) or (gt is not None and not item > gt):
                return False
            if (le is not None and not item <= le) or (lt is not None and not item < lt):
                return False
        if self.glob is None and not self.regex and self.path is None:
            return True
        if not isinstance(item, str | PurePath):
            return False
        text = str(item)
        if self.glob is not None and not self.glob.match(text):
            return False
        if any(not r.search(text) for r in self.regex):
            return False
        return self.path is None or bool(self.path.match(posixpath.normpath(text)))


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b


def _lookup(arguments: Mapping[str, Any], name: str) -> Any:
    value: Any = arguments
    for part in name.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


@dataclass(frozen=True, slots=True)
class RuleOrigin:
    """Where a rule was written: the policy file, the rule's index in its ``rules:`` list,
    and the line of each of its keys (``("deny", 1)`` is the second glob of ``deny``), so
    a check made once the team is known can point into the file."""

    path: Path
    index: int
    lines: Mapping[tuple[str | int, ...], int] = field(default_factory=dict, repr=False)

    def error(self, message: str, *key: str | int) -> ConfigError:
        """A ``ConfigError`` at ``key`` of the rule (``field`` like ``rules.3.deny.1``)."""
        path: tuple[str | int, ...] = key
        while path and path not in self.lines:
            path = path[:-1]
        return ConfigError(
            message,
            path=self.path,
            line=self.lines.get(path),
            field=".".join(map(str, ("rules", self.index, *key))),
        )


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: ``action`` on tools matching ``tools`` (globs), for roles matching
    ``roles`` (empty: every role), when every condition holds. ``policy`` and
    ``policy_hash`` name the file the rule was written in, ``origin`` where in it (``None``
    for rules built in code)."""

    id: str
    action: Action
    tools: tuple[str, ...]
    roles: tuple[str, ...] = ()
    conditions: tuple[Condition, ...] = ()
    reason: str | None = None
    policy: str = ""
    policy_hash: str = ""
    origin: RuleOrigin | None = field(default=None, repr=False, compare=False)
    _tools: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _roles: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    needs: frozenset[str] = field(init=False, repr=False, compare=False)
    """The arguments the rule's conditions look at (a call without one never matches)."""

    def __post_init__(self) -> None:
        needs = frozenset(c.argument.split(".", 1)[0] for c in self.conditions)
        object.__setattr__(self, "needs", needs)
        object.__setattr__(self, "_tools", re.compile("|".join(translate(t) for t in self.tools)))
        roles = "|".join(translate(r) for r in self.roles)
        object.__setattr__(self, "_roles", re.compile(roles) if roles else None)

    def covers(self, tool: str) -> bool:
        """Whether the rule is about ``tool`` (its name matches the rule's globs)."""
        return bool(self._tools.match(tool))

    def matches(
        self, arguments: Mapping[str, Any], role: str | None, parsed: dict[str, Any] | None = None
    ) -> bool:
        """Whether the rule applies to a call (of a tool it covers) by ``role``."""
        if self._roles is not None and (role is None or not self._roles.match(role)):
            return False
        every = self.action != "deny"
        for condition in self.conditions:
            if not condition.holds(arguments, every=every, rule=self, parsed=parsed):
                return False
        return True

    def describe(self, tool: str, arguments: Mapping[str, Any]) -> str:
        """Why this rule decided as it did, in words for the model and the audit log."""
        text = (
            self.reason
            or {
                "deny": f"rule '{self.id}' of policy '{self.policy}' denies calls of '{tool}'",
                "ask": f"rule '{self.id}' of policy '{self.policy}' asks before calls of '{tool}'",
                "allow": f"rule '{self.id}' of policy '{self.policy}' allows calls of '{tool}'",
            }[self.action]
        )
        if self.action == "deny":
            for condition in self.conditions:
                if condition.shell and (hit := condition.matching_program(arguments)):
                    return f"{text} ({_what(hit)})"
        return text


def _what(hit: Invocation) -> str:
    """The denied invocation in words, saying what was only known at run time."""
    if hit.program_unknown:
        return f"the program name '{hit.argv[0]}' is only known at run time"
    notes = []
    if hit.runs_code:
        notes.append(f"runs code not on the command line: {hit.runs_code}")
    if hit.args_unknown:
        notes.append("some arguments are only known at run time")
    if hit.unknown_writes:
        notes.append("writes a file only known at run time")
    return f"'{hit.program}'" + (f": {'; '.join(notes)}" if notes else "")


@dataclass(frozen=True, slots=True)
class Decision:
    """What a policy decided on one call: the action, the deciding rule (``None`` when the
    policy's default decided), and why."""

    action: Action
    rule: Rule | None
    reason: str
