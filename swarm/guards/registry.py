"""Guard factories by name, so policy files can use guards.

A policy's ``guards:`` list names a factory and its options::

    guards:
      - use: rate_limit
        tools: [shell]
        with: {calls: 30, window: 60}

Built in: ``path`` (``PathGuard`` on the workspace, or ``root:`` relative to it),
``shell`` (``ShellGuard``: ``allow``, ``deny``, ``argument``), ``rate_limit``
(``calls``, ``window``, ``per``), ``budget``, ``approval`` (``reason``) and ``audit``.
``register_guard`` adds more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

import pydantic

from swarm.config import did_you_mean
from swarm.guards.approval import ApprovalGuard
from swarm.guards.audit import AuditGuard
from swarm.guards.base import PermissionGuard
from swarm.guards.limits import BudgetGuard, RateLimitGuard
from swarm.guards.paths import PathGuard
from swarm.guards.shell import CommandPatternSpec, ShellGuard

__all__ = [
    "GuardContext",
    "GuardFactory",
    "guard_factory",
    "guard_names",
    "make_guard",
    "register_guard",
]

OptionsT = TypeVar("OptionsT", bound=pydantic.BaseModel)


@dataclass(frozen=True, slots=True)
class GuardContext:
    """What a factory may need beyond its options: the workspace root and the role."""

    workspace: Path | None = None
    role: str | None = None


@dataclass(frozen=True, slots=True)
class GuardFactory(Generic[OptionsT]):
    """Builds a guard from validated ``options`` (a pydantic model; unknown keys are
    errors) and a ``GuardContext``. ``build`` raises ``ValueError`` when the context
    lacks what it needs."""

    options: type[OptionsT]
    build: Callable[[OptionsT, GuardContext], PermissionGuard]


class _Options(pydantic.BaseModel):
    # built when a policy first gives a guard such options, not when policies load
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, defer_build=True)


class _PathOptions(_Options):
    root: str | None = None


class _ShellOptions(_Options):
    allow: list[str | CommandPatternSpec] | None = None
    deny: list[str | CommandPatternSpec] = []
    argument: str = "command"


class _RateLimitOptions(_Options):
    calls: int = pydantic.Field(ge=1)
    window: float = pydantic.Field(gt=0)
    per: Literal["tool", "role", "guard"] = "tool"


class _ApprovalOptions(_Options):
    reason: str = "this call needs approval"


def _path(options: _PathOptions, context: GuardContext) -> PermissionGuard:
    root = Path(options.root) if options.root is not None else None
    if root is None or not root.is_absolute():
        if context.workspace is None:
            raise ValueError(
                "the path guard confines files to the workspace: pass workspace= to"
                " apply_policy, or give an absolute root"
            )
        root = context.workspace / root if root is not None else context.workspace
    return PathGuard(root)


def _shell(options: _ShellOptions, context: GuardContext) -> PermissionGuard:
    def patterns(items: list[str | CommandPatternSpec]) -> list[Any]:
        return [i if isinstance(i, str) else i.to_pattern() for i in items]

    allow = None if options.allow is None else patterns(options.allow)
    return ShellGuard(allow=allow, deny=patterns(options.deny), argument=options.argument)


def _rate_limit(options: _RateLimitOptions, context: GuardContext) -> PermissionGuard:
    return RateLimitGuard(options.calls, options.window, per=options.per, role=context.role)


_FACTORIES: dict[str, GuardFactory[Any]] = {
    "path": GuardFactory(_PathOptions, _path),
    "shell": GuardFactory(_ShellOptions, _shell),
    "rate_limit": GuardFactory(_RateLimitOptions, _rate_limit),
    "budget": GuardFactory(_Options, lambda options, context: BudgetGuard()),
    "approval": GuardFactory(_ApprovalOptions, lambda o, c: ApprovalGuard(reason=o.reason)),
    "audit": GuardFactory(_Options, lambda options, context: AuditGuard()),
}


def register_guard(
    name: str,
    build: Callable[[OptionsT, GuardContext], PermissionGuard],
    *,
    options: type[OptionsT],
    replace: bool = False,
) -> None:
    """Make a guard usable in policy files as ``use: name``.

    Raises ``ValueError`` if the name is taken (unless ``replace``).
    """
    if name in _FACTORIES and not replace:
        raise ValueError(f"a guard named '{name}' is already registered")
    _FACTORIES[name] = GuardFactory(options, build)


def guard_names() -> list[str]:
    """The names policy files may ``use``, sorted."""
    return sorted(_FACTORIES)


def guard_factory(name: str) -> GuardFactory[Any]:
    """The factory registered as ``name``; raises ``KeyError`` naming the known ones."""
    try:
        return _FACTORIES[name]
    except KeyError:
        hint = did_you_mean(name, _FACTORIES)
        raise KeyError(
            f"unknown guard '{name}'{hint} (known: {', '.join(guard_names())})"
        ) from None


def make_guard(
    name: str,
    options: Mapping[str, Any] | pydantic.BaseModel | None = None,
    *,
    context: GuardContext | None = None,
) -> PermissionGuard:
    """Build the guard registered as ``name`` from its options.

    Raises ``KeyError`` for an unknown name, ``pydantic.ValidationError`` for bad options
    and ``ValueError`` when the context lacks what the guard needs.
    """
    factory = guard_factory(name)
    if not isinstance(options, pydantic.BaseModel):
        options = factory.options.model_validate(dict(options or {}))
    return factory.build(options, context or GuardContext())
