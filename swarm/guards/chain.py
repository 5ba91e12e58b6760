"""The guard chain: every guard of a tool, in order, failing closed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swarm.errors import GuardError, ToolError

if TYPE_CHECKING:
    from swarm.tools import Tool

__all__ = ["run_guards"]


async def run_guards(tool: Tool[Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Pass validated arguments through ``tool.guards``; return what the last one allowed.

    A guard that changes the arguments has its output validated again, so no guard can
    push a value past a field's bounds. Raises ``GuardError`` naming the deciding guard
    when any guard denies, raises anything, or returns something that is not arguments.
    """
    for guard in tool.guards:
        name = getattr(guard, "name", type(guard).__name__)
        try:
            allowed = await guard(tool, **arguments)
        except GuardError as exc:
            if exc.guard is None:
                exc.guard = name
            raise
        except Exception as exc:  # fail closed: a broken guard denies
            raise GuardError(f"guard failed: {type(exc).__name__}: {exc}", guard=name) from exc
        if not isinstance(allowed, dict):
            raise GuardError(
                f"guard returned {type(allowed).__name__}, not the arguments", guard=name
            )
        if allowed is not arguments and allowed != arguments:
            try:
                allowed = tool.validate(allowed)
            except ToolError as exc:
                raise GuardError(f"guard produced invalid arguments: {exc}", guard=name) from exc
        arguments = allowed
    return arguments
