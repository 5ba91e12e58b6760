"""Resolving a role's ``tools:`` entries into tools, each problem pointing at its entry.

An entry is, in this order: a key of the toolbox the run gives (built-in tools, and the
``mcp:`` entries of the servers the run connected), a Python reference ``module:attr``, or
the name of a ``swarm.tools`` entry point. ``mcp:SERVER`` and ``mcp:SERVER/TOOL`` entries
the toolbox lacks name a server the team does not declare: an error, or a warning when the
entry is optional (a Claude Code file naming ``mcp__SERVER__TOOL``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from swarm._log import logger
from swarm.errors import ConfigError
from swarm.team.references import entry_point_tools, is_reference, load_tool_reference
from swarm.tools import Tool


class RoleEntries(Protocol):
    """What resolving needs of a role (``AgentSpec`` is one): its entries and where they
    are written."""

    @property
    def name(self) -> str: ...
    @property
    def tools(self) -> tuple[str, ...]: ...
    @property
    def optional_tools(self) -> frozenset[str]: ...
    @property
    def source(self) -> Path | None: ...
    def error(self, message: str, *key: str | int) -> ConfigError: ...


__all__ = ["resolve_entries"]

log = logger(__name__)


def _entry_points() -> dict[str, list[Tool[Any]]] | str:
    """The entry point tools (or why they cannot be loaded); read only for an entry that
    nothing else resolves, so an installed package is seen without a restart."""
    try:
        return entry_point_tools()
    except ValueError as exc:
        return str(exc)


def _mcp_server(entry: str) -> str | None:
    if not entry.startswith("mcp:"):
        return None
    return entry[4:].partition("/")[0]


def resolve_entries(
    spec: RoleEntries,
    toolbox: Mapping[str, Tool[Any] | Sequence[Tool[Any]]],
    *,
    mcp_servers: Collection[str] = (),
) -> tuple[list[Tool[Any]], list[ConfigError]]:
    """The tools ``spec``'s entries name, and a ``ConfigError`` for each entry that
    cannot be resolved (file, line, ``tools`` field).

    An ``mcp:`` entry absent from ``toolbox`` whose server is in ``mcp_servers`` (declared,
    not connected: checking files without running them) gives no tool and no problem.
    """
    tools: list[Tool[Any]] = []
    problems: list[ConfigError] = []
    search = [spec.source.parent] if spec.source is not None else []
    for index, entry in enumerate(spec.tools):
        found = toolbox.get(entry)
        if found is not None:
            tools.extend([found] if isinstance(found, Tool) else found)
            continue
        server = _mcp_server(entry)
        if server is not None:
            if server in mcp_servers:
                continue
            if entry in spec.optional_tools:
                log.warning(
                    f"role '{spec.name}': dropped '{entry}': the team declares no MCP server"
                    f" '{server}'",
                    path=str(spec.source) if spec.source else None,
                )
                continue
            problems.append(
                spec.error(
                    f"'{entry}' names the MCP server '{server}', which the team does not"
                    " declare (add it to mcp.json or .mcp.json in the team directory)",
                    "tools",
                    index,
                )
            )
            continue
        if is_reference(entry):
            try:
                tools.extend(load_tool_reference(entry, search=search))
            except ValueError as exc:
                problems.append(spec.error(f"tool '{entry}': {exc}", "tools", index))
            continue
        points = _entry_points()
        if isinstance(points, dict) and entry in points:
            tools.extend(points[entry])
            continue
        if entry in spec.optional_tools:
            continue
        known = ", ".join(sorted(toolbox)) or "the toolbox is empty"
        hint = f"; {points}" if isinstance(points, str) else ""
        problems.append(
            spec.error(f"unknown tool '{entry}' (known: {known}){hint}", "tools", index)
        )
    return tools, _no_twins(spec, tools, problems)


def _no_twins(
    spec: RoleEntries, tools: list[Tool[Any]], problems: list[ConfigError]
) -> list[ConfigError]:
    """Two entries giving tools of one name is an error (the model would see one)."""
    seen: set[str] = set()
    for item in tools:
        if item.name in seen:
            problems.append(spec.error(f"two entries give a tool named '{item.name}'", "tools"))
        seen.add(item.name)
    return problems
