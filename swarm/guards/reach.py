"""Rules that can never match: tool and role globs of a policy checked against a team.

A rule about ``wirte_file`` or for ``roles: [reviewr]`` loads, and never applies: the call
it was written to stop goes through. ``unreachable`` finds such globs once the team is
known, each as a ``ConfigError`` naming the policy file, the line, the field
(``rules.3.deny.1``) and the closest name (``did you mean 'write_file'?``).

What counts as reachable, and why:

- A **tool glob** must match a name swarm can offer the team: a tool some role has (its
  built-in, Python and scenario tools, its delegation tools, named after the roles it
  delegates to), *or* any built-in tool, any role's name, and any tool of a declared MCP
  server, even when no role has them. A policy is often shared by teams (a rule about
  ``shell`` is right in a team without a shell), so only a glob that matches nothing swarm
  could ever give this team is an error: a typo. Each glob of a list is checked on its
  own, since a typo hides in a list beside names that match (``[read_file, wirte_file]``).
  The ``tools`` globs of a policy's ``guards:`` entries are checked the same way (a rate
  limit on ``shel`` limits nothing).
- MCP tools are named ``mcp__SERVER__TOOL`` and known only once the server starts, so a
  glob that *could* match such a name of a declared server (``mcp__git__*``,
  ``mcp__git__anything``, ``mcp__*``) counts as matching.
- A **role glob** must match a role of the team.
- An **argument** a rule's ``args`` look at must be one that some tool the rule names
  takes (``comand`` for ``shell`` never holds). Checked only when the arguments of every
  tool the rule can name are known: not for a glob that could name an MCP tool (``*``
  does) or a delegation tool.
- The policies swarm ships (``builtin:default`` and the others) are written for every team
  and are not checked; what a user's policy adds to them by ``extend`` is.
- When the team's tools cannot all be known (a tool reference that does not import, or a
  policy checked alone: ``swarm validate policy.yaml``) the world is open: only a glob
  close to a known name (``did you mean``) or shaped almost like an MCP name is an error,
  and arguments are not checked. A policy alone has no roles to check its ``roles`` by.

``idle`` lists, as warnings, the rules that are reachable but apply to no tool any role
of this team has (a rule about ``shell`` in a team without one).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase, translate
from functools import cache
from pathlib import Path

from swarm.errors import ConfigError
from swarm.guards.policy import POLICY_DIR, Policy
from swarm.guards.rules import Rule

__all__ = ["Reach", "ToolNames", "globs_overlap", "idle", "unreachable"]

_MCP = "mcp__?*__?*"  # the shape of every MCP tool's name
_ANY_SERVER = "mcp__\ue000__?*"  # the tools of a server no glob names (a private-use name)


@dataclass(frozen=True, slots=True)
class ToolNames:
    """Tool names, and globs standing for names known only at run time (an MCP server's
    tools: ``mcp__git__?*``)."""

    names: frozenset[str] = frozenset()
    patterns: frozenset[str] = frozenset()

    def matched_by(self, glob: str) -> bool:
        """Whether ``glob`` matches one of the names, or could match a name a pattern
        stands for."""
        return any(fnmatchcase(n, glob) for n in self.names) or any(
            globs_overlap(glob, p) for p in self.patterns
        )

    def shown(self) -> list[str]:
        """The names and patterns as a person reads them (``mcp__git__*``), sorted."""
        return sorted({*self.names, *(p.replace("?*", "*") for p in self.patterns)})

    def __or__(self, other: ToolNames) -> ToolNames:
        return ToolNames(self.names | other.names, self.patterns | other.patterns)


@dataclass(frozen=True, slots=True)
class Reach:
    """What a team's policies can be about.

    ``team``: the tools some role of the team has; ``offered``: the other tools swarm
    could give this team (every built-in tool, every role as a delegation tool, every
    declared MCP server's tools); ``roles``: the team's roles (``None``: not known).
    ``closed``: whether a tool outside these cannot exist (``False`` when some of the
    team's tools could not be resolved, or for a policy checked alone). ``arguments``:
    the argument names of each tool by name (``None`` or absent: not known).
    """

    team: ToolNames = field(default_factory=ToolNames)
    offered: ToolNames = field(default_factory=ToolNames)
    roles: frozenset[str] | None = None
    closed: bool = True
    arguments: Mapping[str, frozenset[str] | None] = field(default_factory=dict)


@cache
def _real(path: str) -> Path | None:
    """``path`` resolved (``None`` when it cannot be)."""
    try:
        return Path(path).resolve()
    except OSError:
        return None


def _shipped(path: Path | str) -> bool:
    """Whether ``path`` is one of the policies swarm ships."""
    real, shipped = _real(str(path)), _real(str(POLICY_DIR))
    return real is not None and shipped is not None and real.is_relative_to(shipped)


def _checked(policies: Iterable[Policy]) -> list[Rule]:
    """The rules a user wrote (not built in code, not in a shipped policy), each once
    however many of ``policies`` hold it (two policies extending one file)."""
    rules: dict[tuple[Path | str, int], Rule] = {}
    for policy in policies:
        for rule in policy.rules:
            if rule.origin is not None and not _shipped(rule.origin.path):
                where = _real(str(rule.origin.path)) or str(rule.origin.path)
                rules.setdefault((where, rule.origin.index), rule)
    return list(rules.values())


def _could(glob: str, names: ToolNames) -> bool:
    """Whether ``glob`` can match one of ``names``, or an MCP tool of any server
    (``mcp__*``: it names no server, so it is right whatever servers there are)."""
    return names.matched_by(glob) or globs_overlap(glob, _ANY_SERVER)


def _shown(text: str) -> str:
    """``text`` as written, or escaped when it holds what a reader cannot see or tell from
    ASCII (``wr\\u0456te_file``: a Cyrillic letter that looks like ``i``)."""
    return text if text.isascii() and text.isprintable() else ascii(text)[1:-1]


def _close(word: str, choices: Iterable[str]) -> str | None:
    found = difflib.get_close_matches(word, sorted(set(choices)), n=1)
    return found[0] if found else None


def _key(rule: Rule, j: int, key: str) -> tuple[str | int, ...]:
    """The key of the ``j``th glob of ``key``: ``("deny", 1)``, or ``("deny",)`` alone."""
    written = rule.tools if key == rule.action else rule.roles
    return (key,) if len(written) == 1 and j == 0 else (key, j)


def _stray(glob: str, reach: Reach, what: str) -> str | None:
    """Why ``glob`` names no tool swarm can offer (the end of a message about ``what``:
    the rule, the guard), or ``None``."""
    every = reach.team | reach.offered
    if _could(glob, every):
        return None
    close = _close(glob, every.shown())
    mcp_like = glob.startswith("mcp") and not globs_overlap(glob, _MCP)
    if not reach.closed and close is None and not mcp_like:
        return None  # maybe a Python tool or a delegation tool we cannot know of
    nowhere = "no role of the team can have" if reach.closed else "swarm does not know"
    hint = f"; did you mean '{close}'?" if close else ""
    if mcp_like:
        hint += " (MCP tools are named mcp__SERVER__TOOL)"
    return f"the tool '{_shown(glob)}', which {nowhere}, so the {what} never applies{hint}"


def _stray_arguments(rule: Rule, reach: Reach) -> list[ConfigError]:
    """A problem for each argument a condition of ``rule`` looks at that none of the
    tools the rule names takes (checked only when every such tool's arguments are known:
    a closed world, no MCP or delegation tool among them)."""
    if not rule.conditions or not reach.closed:
        return []
    every = reach.team | reach.offered
    if any(globs_overlap(g, p) for g in rule.tools for p in (*every.patterns, _ANY_SERVER)):
        return []
    named = [n for n in every.names if any(fnmatchcase(n, g) for g in rule.tools)]
    known = [reach.arguments.get(n) for n in named]
    if not named or any(k is None for k in known):
        return []
    taken = frozenset().union(*(k for k in known if k is not None))
    assert rule.origin is not None
    problems = []
    for condition in rule.conditions:
        argument = condition.argument.split(".", 1)[0]
        if argument in taken:
            continue
        close = _close(argument, taken)
        hint = f"; did you mean '{close}'?" if close else ""
        tools = ", ".join(f"'{n}'" for n in sorted(named))
        problems.append(
            rule.origin.error(
                f"rule '{rule.id}' looks at the argument '{_shown(argument)}', which {tools} never"
                f" {'takes' if len(named) == 1 else 'take'}, so the rule never applies{hint}"
                f" (arguments: {', '.join(sorted(taken))})",
                "args",
                condition.argument,
            )
        )
    return problems


def unreachable(policies: Iterable[Policy], reach: Reach) -> list[ConfigError]:
    """A ``ConfigError`` for each tool glob of the rules of ``policies`` (the team's; each
    rule is checked once) and of their guards' ``tools`` that matches no tool swarm can
    offer, and each ``roles`` glob that matches no role (see the module docstring for
    what counts), with the closest name; ``[]`` when every glob can match.
    """
    policies = list(policies)
    problems: list[ConfigError] = []
    for rule in _checked(policies):
        assert rule.origin is not None
        for j, glob in enumerate(rule.tools):
            why = _stray(glob, reach, "rule")
            if why is not None:
                message = f"rule '{rule.id}' names {why}"
                problems.append(rule.origin.error(message, *_key(rule, j, rule.action)))
        problems += _stray_arguments(rule, reach)
        if reach.roles is None:
            continue
        for j, glob in enumerate(rule.roles):
            if any(fnmatchcase(role, glob) for role in reach.roles):
                continue
            close = _close(glob, reach.roles)
            hint = f"; did you mean '{close}'?" if close else ""
            known = ", ".join(sorted(reach.roles))
            problems.append(
                rule.origin.error(
                    f"rule '{rule.id}' is for the role '{_shown(glob)}', which is not a role of the"
                    f" team, so the rule never applies{hint} (roles: {known})",
                    *_key(rule, j, "roles"),
                )
            )
    seen: set[tuple[Path | str, int | None]] = set()
    for policy in policies:
        for guard in policy.guards:
            if guard.source is None or _shipped(guard.source):
                continue
            where = (_real(guard.source) or guard.source, guard.line)
            if where in seen:
                continue
            seen.add(where)
            for glob in guard.tools:
                why = _stray(glob, reach, "guard")
                if why is not None:
                    problems.append(
                        ConfigError(
                            f"guard '{guard.use}' covers {why}",
                            path=guard.source,
                            line=guard.line,
                            field="guards.tools",
                        )
                    )
    return problems


def idle(policies: Iterable[Policy], reach: Reach) -> list[str]:
    """Warnings for the user's rules in ``policies`` that no tool of this team can reach
    (they name only tools the team could have and has not), each naming file and line."""
    if not reach.closed:
        return []
    warnings: list[str] = []
    for rule in _checked(policies):
        assert rule.origin is not None
        if any(reach.team.matched_by(g) for g in rule.tools):
            continue
        if not all(_could(g, reach.team | reach.offered) for g in rule.tools):
            continue  # an error, reported by ``unreachable``
        tools = ", ".join(f"'{g}'" for g in rule.tools)
        problem = rule.origin.error(
            f"rule '{rule.id}' is about {tools}, which no role of this team has: it never"
            " applies here",
            rule.action,
        )
        warnings.append(str(problem))
    return warnings


# Glob overlap: does some string match both globs? Globs are split into tokens: "*", or
# a one-character test. Two tests overlap when a character passes both; the characters
# worth trying are those a bracket names and each one's successor, and "\0" (the sets a
# bracket's ranges and negation make change only at such characters).

_Token = tuple[str, re.Pattern[str] | None, str]  # kind ("*", "?", "c", "[]"), test, chars


def _tokens(glob: str) -> tuple[_Token, ...]:
    """``glob`` as ``fnmatch`` reads it."""
    out: list[_Token] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        i += 1
        if c == "*":
            if not out or out[-1][0] != "*":
                out.append(("*", None, ""))
        elif c == "?":
            out.append(("?", None, ""))
        elif c == "[":
            j = i
            if j < n and glob[j] == "!":
                j += 1
            if j < n and glob[j] == "]":
                j += 1
            while j < n and glob[j] != "]":
                j += 1
            if j >= n:
                out.append(("c", None, "["))
                continue
            body = glob[i - 1 : j + 1]
            out.append(("[]", re.compile(translate(body), re.DOTALL), body[1:-1]))
            i = j + 1
        else:
            out.append(("c", None, c))
    return tuple(out)


def _passes(token: _Token, char: str) -> bool:
    kind, test, chars = token
    if kind == "?":
        return True
    if kind == "c":
        return char == chars
    assert test is not None
    return bool(test.match(char))


def _meet(a: _Token, b: _Token) -> bool:
    """Whether one character passes both one-character tokens."""
    if a[0] == "c":
        return _passes(b, a[2])
    if b[0] == "c":
        return _passes(a, b[2])
    chars = a[2] + b[2]
    candidates = {"\0", *chars, *(chr(ord(c) + 1) for c in chars if ord(c) < 0x10FFFF)}
    return any(_passes(a, c) and _passes(b, c) for c in candidates)


@cache
def globs_overlap(first: str, second: str) -> bool:
    """Whether some string matches both ``fnmatch`` globs (``write_*`` and ``*_file``:
    yes; ``mcp__git__*`` and ``mcp__gti__*``: no). Time and memory grow with the product
    of the globs' lengths, never the depth of the stack."""
    a, b = _tokens(first), _tokens(second)
    # meet[i][j]: the rest of a from i and the rest of b from j have a common string
    meet = [[False] * (len(b) + 1) for _ in range(len(a) + 1)]
    meet[len(a)][len(b)] = True
    for i in range(len(a), -1, -1):
        for j in range(len(b), -1, -1):
            if i == len(a) and j == len(b):
                continue
            if i < len(a) and a[i][0] == "*":
                meet[i][j] = meet[i + 1][j] or (j < len(b) and meet[i][j + 1])
            elif j < len(b) and b[j][0] == "*":
                meet[i][j] = meet[i][j + 1] or (i < len(a) and meet[i + 1][j])
            elif i < len(a) and j < len(b):
                meet[i][j] = meet[i + 1][j + 1] and _meet(a[i], b[j])
    return meet[0][0]
