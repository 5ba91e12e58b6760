"""CommandPrefixGuard: a role may run only the commands that start with given words.

::

    guard = CommandPrefixGuard(["git log", "git diff", "npm test"])

This is what a Claude Code role's ``Bash(git log:*)`` becomes. Every program the command
would start (through pipes, ``;``, ``&&``, ``bash -c``, ``env``, command substitution;
see ``swarm.guards.bash.parse``) must have an argv that starts with one of the prefixes'
words, known before the command runs: ``git log; rm -rf ~`` is denied for ``rm``, and
``git $(echo log)`` because its second word is only known at run time. The guard only
narrows what the role's policy allows; it never allows what the policy denies.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from swarm.errors import GuardError
from swarm.guards.base import PermissionGuard
from swarm.guards.bash.parse import Invocation
from swarm.guards.shell import judged_invocations

if TYPE_CHECKING:
    from swarm.tools import Tool

__all__ = ["CommandDenyGuard", "CommandPrefixGuard"]


def _starts_with(invocation: Invocation, words: tuple[str, ...]) -> bool:
    if len(invocation.argv) < len(words):
        return False
    unknown = {word.index for word in invocation.unknown}
    if any(index in unknown for index in range(len(words))):
        return False  # a word of the prefix is only known at run time
    return tuple(invocation.argv[: len(words)]) == words


def _may_start_with(invocation: Invocation, words: tuple[str, ...]) -> bool:
    """Whether ``invocation`` starts with ``words`` or might at run time (a word of the
    prefix only known then: refused, as the guard cannot tell)."""
    if len(invocation.argv) < len(words):
        return False
    unknown = {word.index for word in invocation.unknown}
    said = (invocation.program, *invocation.argv[1:])  # /bin/rm is rm
    return all(index in unknown or said[index] == word for index, word in enumerate(words))


class CommandPrefixGuard(PermissionGuard):
    """Denies a shell command unless every program it would run starts with one of
    ``prefixes`` (each a string of words, ``"git log"``; ``"*"`` allows any command; an
    empty one allows nothing).

    The command is the ``argument`` of the call (default ``command``); a call without it
    passes untouched; a command that cannot be parsed is denied.
    """

    def __init__(self, prefixes: Iterable[str], *, argument: str = "command") -> None:
        # a prefix of no words would match every command: it allows none instead
        self.prefixes = tuple(words for p in prefixes if (words := tuple(p.split())))
        self.any = ("*",) in self.prefixes
        self.argument = argument

    def __repr__(self) -> str:
        shown = ", ".join(repr(" ".join(words)) for words in self.prefixes)
        return f"CommandPrefixGuard([{shown}])"

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        command = kwargs.get(self.argument)
        if command is None or self.any:
            return kwargs
        invocations = judged_invocations(command, self.name)
        allowed = ", ".join(repr(" ".join(words)) for words in self.prefixes)
        for invocation in invocations:
            if not any(_starts_with(invocation, words) for words in self.prefixes):
                raise GuardError(
                    f"'{invocation}' is not allowed for this role: its commands must start"
                    f" with one of {allowed}",
                    guard=self.name,
                    rule="command prefixes",
                )
        return kwargs


class CommandDenyGuard(PermissionGuard):
    """Denies a shell command when any program it would run starts with one of
    ``prefixes`` (each a string of words, ``"git push"``), or might at run time
    (``git $(echo push)``). What Claude Code's ``permissions.deny`` ``Bash(git push:*)``
    and ``disallowedTools`` ``Bash(rm:*)`` become. It only narrows the role's policy.
    """

    def __init__(self, prefixes: Iterable[str], *, argument: str = "command") -> None:
        self.prefixes = tuple(words for p in prefixes if (words := tuple(p.split())))
        self.argument = argument

    def __repr__(self) -> str:
        shown = ", ".join(repr(" ".join(words)) for words in self.prefixes)
        return f"CommandDenyGuard([{shown}])"

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        command = kwargs.get(self.argument)
        if command is None:
            return kwargs
        for invocation in judged_invocations(command, self.name):
            for words in self.prefixes:
                if _may_start_with(invocation, words):
                    raise GuardError(
                        f"'{invocation}' is refused for this role: commands starting with"
                        f" {' '.join(words)!r} are denied",
                        guard=self.name,
                        rule="denied command prefixes",
                    )
        return kwargs
