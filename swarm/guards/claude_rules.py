"""ClaudeRulesGuard: a Claude Code project's ``permissions`` rules, decided on every call.

::

    guard = ClaudeRulesGuard([
        ClaudeRule("deny", "shell", words=("git", "push")),
        ClaudeRule("ask", "shell", words=("npm", "publish")),
        ClaudeRule("allow", "shell", words=("npm", "test")),
        ClaudeRule("deny", "read_file", path=".env"),
    ])

What ``.claude/settings.json`` ``Bash(git push:*)``, ``Read(./.env)`` and ``Edit(src/**)``
become (``swarm.team.claude_settings``). As Claude Code decides: a matching ``deny`` wins,
then ``ask``, then ``allow``. A shell rule matches a command when a program it would run
starts with the rule's words (an ``exact`` rule: is them), known before it runs
(``swarm.guards.bash.parse``); a deny or ask rule also matches when it might (a word only
known at run time, ``/usr/bin/git`` for ``git``). A path rule is a gitignore-like glob
relative to the workspace (``secrets/**``, ``*.pem``; a folder matches what is in it).
When the project allows some commands (or paths) of a tool, a call of it that no allow
rule covers is asked, as Claude Code asks: ``ask`` goes to the run's approver
(``swarm.guards.approval``), and with nobody to ask it is denied. The guard only narrows
the role's policy; it never allows what that denies.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from swarm.errors import GuardError
from swarm.guards.approval import ask
from swarm.guards.base import PermissionGuard
from swarm.guards.bash.parse import Invocation
from swarm.guards.prefixes import _may_start_with, _starts_with
from swarm.guards.rules import path_glob
from swarm.guards.shell import judged_invocations

if TYPE_CHECKING:
    from swarm.tools import Tool

__all__ = ["PATH_ARGUMENTS", "ClaudePermissions", "ClaudeRule", "ClaudeRulesGuard"]

PATH_ARGUMENTS = ("path", "directory")
"""The arguments of the file tools a path rule looks at."""

RuleAction = Literal["deny", "ask", "allow"]


@dataclass(frozen=True, slots=True)
class ClaudeRule:
    """One permission rule in swarm's terms: its ``action``, the ``tool`` it is about,
    and what it matches: a shell command's first ``words`` (``exact``: the whole argv;
    ``glued``: the last word only begins the command's word, ``Bash(rm*)``), a ``path``
    glob (relative to the workspace), or neither (every call). ``source`` says where it
    was written (``.claude/settings.json:7``), for messages and the audit log."""

    action: RuleAction
    tool: str
    words: tuple[str, ...] | None = None
    exact: bool = False
    glued: bool = False
    path: str | None = None
    source: str = ""
    _pattern: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        pattern = None
        if self.path is not None:
            glob = self.path.strip("/")
            anchored = "/" in self.path.rstrip("/")
            pattern = path_glob(glob if anchored else "**/" + glob)
        object.__setattr__(self, "_pattern", pattern)

    @property
    def shown(self) -> str:
        """The rule as a person reads it (``shell 'git push …'``, ``read_file .env``)."""
        if self.words is not None:
            tail = "" if self.exact else "…" if self.glued else " …"
            return f"{self.tool} {' '.join(self.words)!r}{tail}"
        return f"{self.tool} {self.path}" if self.path is not None else self.tool

    def covers_path(self, path: str, *, allow: bool = False) -> bool:
        """Whether ``path`` or a folder above it matches. The path is normalised first
        (``a/../secrets`` is ``secrets``); one that is absolute, or climbs out with
        ``..``, may still name a file of the workspace (the tools accept that): a deny or
        ask rule then matches it at any depth, and an allow rule never covers it."""
        if self._pattern is None:
            return True
        text = os.path.normpath(os.path.expanduser(path.replace("\\", "/")))
        parts = [p for p in text.split("/") if p not in ("", ".")]
        loose = text.startswith("/") or parts[:1] == [".."]
        if loose and allow:
            return False
        starts = range(len(parts)) if loose else range(1)
        return any(
            self._pattern.match("/".join(parts[start:end]))
            for start in starts
            for end in range(start + 1, len(parts) + 1)
        )

    def covers_program(self, invocation: Invocation, *, deny: bool = False) -> bool:
        """Whether one program of a command matches; for a deny or ask rule (``deny``),
        also when it might (``/usr/bin/git``, a word only known at run time)."""
        if self.words is None:
            return True
        if self.glued:
            return _begins(invocation, self.words, wide=deny)
        if deny:
            return _may_start_with(invocation, self.words)
        if self.exact:
            return _starts_with(invocation, self.words) and len(invocation.argv) == len(self.words)
        return _starts_with(invocation, self.words)


@dataclass(frozen=True, slots=True)
class ClaudePermissions:
    """A project's rules for one role, and whether what they would ask is denied instead
    (``never_ask``: Claude Code's ``defaultMode: dontAsk``)."""

    rules: tuple[ClaudeRule, ...] = ()
    never_ask: bool = False

    def guard(self) -> ClaudeRulesGuard:
        """The guard that decides calls by these rules."""
        return ClaudeRulesGuard(self.rules, never_ask=self.never_ask)


def _begins(invocation: Invocation, words: tuple[str, ...], *, wide: bool) -> bool:
    """Whether ``invocation`` starts with ``words``, its last one only the beginning of
    the command's word (``rm`` begins ``rmdir``); ``wide``: or might (a word only known at
    run time, a program named by its path)."""
    if not words or len(invocation.argv) < len(words):
        return False
    unknown = {word.index for word in invocation.unknown}
    said = (invocation.program, *invocation.argv[1:]) if wide else tuple(invocation.argv)
    for index, word in enumerate(words):
        if index in unknown:
            if not wide:
                return False
            continue
        last = index == len(words) - 1
        if not (said[index].startswith(word) if last else said[index] == word):
            return False
    return True


def _paths(arguments: Mapping[str, Any]) -> list[str]:
    return [str(arguments[a]) for a in PATH_ARGUMENTS if isinstance(arguments.get(a), str)]


class ClaudeRulesGuard(PermissionGuard):
    """Decides each call of a tool some of ``rules`` are about: deny, then ask, then
    allow; a call no allow rule covers is asked when the tool has allow rules with
    patterns (see the module). ``never_ask`` denies what would be asked. Calls of other
    tools pass untouched."""

    def __init__(self, rules: Iterable[ClaudeRule], *, never_ask: bool = False) -> None:
        self.rules = tuple(rules)
        self.never_ask = never_ask

    async def _ask(
        self, tool: Tool[Any], kwargs: dict[str, Any], reason: str, rule: str
    ) -> dict[str, Any]:
        if self.never_ask:
            raise GuardError(
                f"{reason}; the project's defaultMode 'dontAsk' denies it",
                guard=self.name,
                rule=rule,
            )
        return await ask(tool, kwargs, guard=self, reason=reason, rule=rule)

    def __repr__(self) -> str:
        shown = ", ".join(f"{r.action} {r.shown}" for r in self.rules)
        return f"ClaudeRulesGuard([{shown}])"

    def _hits(self, rule: ClaudeRule, arguments: Mapping[str, Any], programs: Any) -> bool:
        if rule.path is not None:
            paths = _paths(arguments)
            return bool(paths) and any(rule.covers_path(p) for p in paths)
        if rule.words is not None:
            wide = rule.action in ("deny", "ask")  # what might match is refused or asked
            return any(rule.covers_program(i, deny=wide) for i in programs)
        return True

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        rules = [r for r in self.rules if r.tool == tool.name]
        if not rules:
            return kwargs
        command = kwargs.get("command")
        programs: tuple[Invocation, ...] = ()
        if command is not None and any(r.words is not None for r in rules):
            programs = judged_invocations(command, self.name)
        for rule in rules:
            if rule.action == "deny" and self._hits(rule, kwargs, programs):
                raise GuardError(
                    f"the project's settings deny {rule.shown} ({rule.source})",
                    guard=self.name,
                    rule=rule.source or "deny",
                )
        for rule in rules:
            if rule.action == "ask" and self._hits(rule, kwargs, programs):
                reason = f"the project's settings ask before {rule.shown} ({rule.source})"
                return await self._ask(tool, kwargs, reason, rule.source or "ask")
        allows = [r for r in rules if r.action == "allow"]
        patterned = [r for r in allows if r.words is not None or r.path is not None]
        if not patterned or any(r.words is None and r.path is None for r in allows):
            return kwargs
        if self._allowed(patterned, kwargs, programs):
            return kwargs
        listed = ", ".join(r.shown for r in patterned)
        reason = f"the project's settings allow only {listed} without asking"
        return await self._ask(tool, kwargs, reason, "not allowed")

    @staticmethod
    def _allowed(
        allows: list[ClaudeRule], arguments: Mapping[str, Any], programs: tuple[Invocation, ...]
    ) -> bool:
        """Whether the allow rules cover the whole call: every program of a command, every
        path it names."""
        commands = [r for r in allows if r.words is not None]
        if programs and not all(any(r.covers_program(i) for r in commands) for i in programs):
            return False
        paths = [r for r in allows if r.path is not None]
        named = _paths(arguments)
        if paths and not all(any(r.covers_path(p, allow=True) for r in paths) for p in named):
            return False
        return bool(programs) or bool(_paths(arguments)) or not commands
