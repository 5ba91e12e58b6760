"""What would this shell command line run? A fail-closed parser for guards.

``parse_command("cd src && r''m -rf $(echo /)")`` returns one ``Invocation`` per program the
line would start: ``cd src``, ``echo /`` and ``rm -rf $(echo /)`` (the argument of ``rm``
marked unknown). The line is parsed by tree-sitter-bash, so operators, compound commands
(``if``, ``case``, loops, functions, ``[[ ]]``, ``(( ))``), quoting, heredocs and every kind
of substitution are read as bash reads them; wrappers that run another program (``env``,
``sudo``, ``timeout``, ``xargs``, ``find -exec``, ``bash -c``, ``eval``, ``trap``,
``python -m``, ...) are unwrapped, so a wrapper and the program it runs are both
invocations.

It resolves what can be known before the command runs: variables assigned earlier on the
line (``x=-rf; rm $x``), brace expansion, ``$(which X)``, ``cd`` before a relative write
target. What cannot be known is marked (``Invocation.unknown``, ``unknown_writes``,
``runs_code``) for rules to fail closed on. It raises ``ShellSyntaxError`` when the line
is not valid shell or uses syntax it cannot judge.

Parsing is cached by the command's text: a model repeats commands. The parser
(``swarm.guards.bash._walker``, tree-sitter) loads with the first command parsed: loading a
policy, or checking one with ``swarm validate``, does not need it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from swarm.guards.bash._invocation import Invocation, Redirect, ShellSyntaxError, UnknownWord

__all__ = [
    "Invocation",
    "Redirect",
    "ShellSyntaxError",
    "UnknownWord",
    "expand_argv",
    "parse_command",
]


def parse_command(command: str) -> tuple[Invocation, ...]:
    """Every program ``command`` would run, in the order they start (a substitution before
    the command using it, a wrapper before what it runs). Raises ``ShellSyntaxError``."""
    found = _parsed(command)
    if isinstance(found, ShellSyntaxError):
        raise ShellSyntaxError(*found.args)
    return found


@lru_cache(maxsize=1024)
def _parsed(command: str) -> tuple[Invocation, ...] | ShellSyntaxError:
    from swarm.guards.bash._walker import parse

    try:
        return _interned(parse(command))
    except ShellSyntaxError as exc:
        return exc
    except RecursionError:
        return ShellSyntaxError("commands are nested too deeply")


_SEEN: dict[Invocation, Invocation] = {}
_MAX_SEEN = 4096


def _interned(invocations: list[Invocation]) -> tuple[Invocation, ...]:
    """The invocations, each replaced by an equal one seen before: rules keep their
    verdicts in dicts keyed by invocation, and a lookup that finds the very object is
    settled without comparing fields (``sort`` in a hundred pipelines is one object)."""
    seen = _SEEN
    if len(seen) >= _MAX_SEEN:
        seen.clear()
    return tuple([seen.setdefault(i, i) for i in invocations])


def expand_argv(argv: Sequence[str]) -> tuple[Invocation, ...]:
    """The programs an argv (already split, no shell involved) would run, wrappers
    unwrapped. Raises ``ShellSyntaxError``."""
    if not argv:
        return ()
    from swarm.guards.bash._walker import invoke_argv

    return tuple(invoke_argv(list(argv)))
