"""MCP servers' tools as swarm tools, and the ``mcp:`` entries of a team's roles.

A server's tool ``git_status`` becomes the swarm tool ``mcp__git__git_status`` (the names
Claude Code users write in permission rules) with the server's description and input schema.
Arguments are validated against that schema before any guard sees them; every call then
passes the role's guard chain and policy and lands in the audit log like any other. A
role's ``mcp:git`` entry gives it every tool of the server, ``mcp:git/git_status`` one.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
import jsonschema
import mcp_types as types

from swarm._log import logger
from swarm.errors import ConfigError, ToolError
from swarm.mcp.client import McpConnections, McpUnavailable
from swarm.mcp.paths import Location, McpPathGuard, path_fields
from swarm.messages import ImageBlock, TextBlock
from swarm.tools import Progress, Tool, ToolOutput


class McpRole(Protocol):
    """What ``mcp_toolbox`` reads of a role (``swarm.team.AgentSpec`` is one): its entries
    and how to point at one of them in its file."""

    @property
    def name(self) -> str: ...
    @property
    def tools(self) -> tuple[str, ...]: ...
    @property
    def optional_tools(self) -> frozenset[str]: ...
    def error(self, message: str, *key: str | int) -> ConfigError: ...


__all__ = ["McpRole", "McpToolInfo", "mcp_tool", "mcp_tool_name", "mcp_toolbox", "parse_mcp_entry"]

log = logger(__name__)

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


def mcp_tool_name(server: str, tool: str) -> str:
    """The name the model sees: ``mcp__SERVER__TOOL``."""
    return f"mcp__{server}__{tool}"


def parse_mcp_entry(entry: str) -> tuple[str, str | None] | None:
    """``("git", None)`` for ``mcp:git``, ``("git", "git_status")`` for
    ``mcp:git/git_status``; ``None`` for an entry that is not an ``mcp:`` one."""
    if not entry.startswith("mcp:"):
        return None
    server, _, tool = entry[4:].partition("/")
    return server, tool or None


@dataclass(frozen=True, slots=True)
class McpToolInfo:
    """The ``context`` of an MCP tool: where it comes from and what the server says of it
    (``read_only``/``destructive`` are the server's hints, ``None`` when it gives none);
    ``path_fields`` are the argument locations its schema says name paths (see
    ``swarm.mcp.paths.path_fields``)."""

    server: str
    tool: str
    read_only: bool | None = None
    destructive: bool | None = None
    path_fields: frozenset[Location] = frozenset()
    validator: Any = field(default=None, repr=False, compare=False)


def _problems(validator: Any, arguments: Mapping[str, Any]) -> list[str]:
    found = []
    for error in sorted(validator.iter_errors(dict(arguments)), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in error.absolute_path) or "arguments"
        found.append(f"field '{where}': {error.message}")
    return found


@dataclass(frozen=True, slots=True)
class _McpTool(Tool[McpToolInfo]):
    """A tool whose arguments are checked against the server's JSON schema."""

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Check ``arguments`` against the server's input schema; ``ToolError`` naming
        each bad field."""
        problems = _problems(self.context.validator, arguments)
        if problems:
            raise ToolError(f"Invalid arguments for tool '{self.name}': " + "; ".join(problems))
        return dict(arguments)


def _validator(name: str, schema: dict[str, Any]) -> Any:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        log.warning(
            f"MCP tool '{name}' has an invalid input schema; only its type is checked",
            reason=exc.message,
        )
        return jsonschema.Draft202012Validator({"type": "object"})
    return cls(schema)


def _blocks(result: types.CallToolResult) -> list[TextBlock | ImageBlock]:
    blocks: list[TextBlock | ImageBlock] = []
    for item in result.content:
        if isinstance(item, types.TextContent):
            blocks.append(TextBlock(item.text))
        elif isinstance(item, types.ImageContent) and item.mime_type in _IMAGE_TYPES:
            try:
                data = base64.b64decode(item.data, validate=True)
            except (binascii.Error, ValueError):
                blocks.append(TextBlock("[an image that is not valid base64]"))
                continue
            blocks.append(ImageBlock(item.mime_type, data))  # type: ignore[arg-type]
        elif isinstance(item, types.EmbeddedResource) and isinstance(
            item.resource, types.TextResourceContents
        ):
            blocks.append(TextBlock(item.resource.text))
        else:
            blocks.append(TextBlock(f"[{item.type} content, not shown]"))
    if not blocks and result.structured_content is not None:
        blocks.append(TextBlock(json.dumps(result.structured_content)))
    return blocks


def mcp_tool(
    connections: McpConnections,
    server: str,
    definition: types.Tool,
    *,
    readonly: Iterable[str | os.PathLike[str]] = (),
) -> Tool[Any]:
    """The swarm tool calling ``definition`` (a tool of ``server``) through ``connections``.

    A call's progress notifications become ``ToolOutputDelta`` events; images in its result
    are kept; an error result from the server, or a server that crashed or timed out,
    becomes an error result for the model. Its own guard (``McpPathGuard``) denies a path
    argument outside ``connections.workspace``, in ``connections.hidden``, or, unless the
    server marks the tool read-only, in ``readonly`` (absolute paths, or paths and globs
    relative to the workspace). Raises ``ValueError`` when the tool's swarm name cannot be
    a tool name (letters, digits, '_' and '-', at most 64).
    """
    name = mcp_tool_name(server, definition.name)
    if not _TOOL_NAME.fullmatch(name):
        raise ValueError(f"'{name}' cannot name a tool (letters, digits, '_', '-'; 64 at most)")
    hints = definition.annotations
    read_only = hints.read_only_hint if hints else None
    destructive = hints.destructive_hint if hints else None
    info = McpToolInfo(
        server,
        definition.name,
        read_only,
        destructive,
        path_fields(definition.input_schema),
        _validator(name, definition.input_schema),
    )
    paths = McpPathGuard(connections.workspace, hidden=connections.hidden, readonly=readonly)

    async def call(_swarm_progress_: Progress, **arguments: Any) -> ToolOutput:
        async def report(progress: float, total: float | None, message: str | None) -> None:
            amount = f"{progress:g}/{total:g}" if total else f"{progress:g}"
            _swarm_progress_(f"{message} ({amount})\n" if message else f"{amount}\n", "progress")

        result = await connections.call(server, definition.name, arguments, progress=report)
        blocks = _blocks(result)
        if result.is_error:
            text = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
            raise ToolError(f"MCP tool '{name}' failed: {text or 'no message'}")
        details: dict[str, Any] = {"server": server, "tool": definition.name}
        if result.structured_content is not None:
            details["structured"] = result.structured_content
        return ToolOutput(blocks, details=details)

    # The server's word on what a tool does is a hint from outside: it only says whether
    # a call may be repeated when a crashed run is resumed, never whether it is allowed.
    return _McpTool(
        name=name,
        handler=call,
        description=definition.description or f"The {definition.name} tool of {server}.",
        context=info,
        schema=definition.input_schema,
        idempotent=bool(read_only) or bool(hints and hints.idempotent_hint),
        guards=(paths,),
    )


async def mcp_toolbox(
    specs: Iterable[McpRole],
    connections: McpConnections,
    *,
    readonly: Iterable[str | os.PathLike[str]] = (),
) -> dict[str, list[Tool[Any]]]:
    """The tools of every ``mcp:`` entry of ``specs`` whose server ``connections`` holds,
    keyed by entry, for ``AgentSpec.to_agent`` (and ``build_team``'s toolbox).

    Path arguments are confined as ``mcp_tool`` says: to ``connections.workspace``, never
    ``connections.hidden``, and never ``readonly`` (the run's read-only protected paths)
    for a tool its server does not mark read-only.

    Starts each server named, side by side (tools are listed once per server). Raises
    ``ConfigError`` naming the role file and line for an entry naming a tool the server
    lacks (an optional entry is dropped with a warning), a server that does not start, or
    an ``${VAR}`` of a server some role uses that is not set (before any server starts).
    """
    specs, readonly = list(specs), tuple(readonly)
    wanted_servers = {
        parsed[0]
        for spec in specs
        for entry in spec.tools
        if (parsed := parse_mcp_entry(entry)) is not None and parsed[0] in connections.servers
    }
    unset = [e for name in sorted(wanted_servers) for e in connections.servers[name].unset]
    if unset:
        raise ConfigError.collect(unset)
    listed: dict[str, dict[str, Tool[Any]]] = {}
    failed: dict[str, str] = {}

    async def list_one(server: str) -> None:
        try:
            definitions = await connections.list_tools(server)
        except McpUnavailable as exc:
            failed[server] = str(exc)
            return
        tools: dict[str, Tool[Any]] = {}
        for definition in definitions:
            try:
                tools[definition.name] = mcp_tool(
                    connections, server, definition, readonly=readonly
                )
            except ValueError as exc:
                log.warning(f"MCP server '{server}': tool skipped: {exc}")
        listed[server] = tools

    async with anyio.create_task_group() as group:  # servers start side by side
        for server in sorted(wanted_servers):
            group.start_soon(list_one, server)
    entries: dict[str, list[Tool[Any]]] = {}
    problems: list[ConfigError] = []
    for spec in specs:
        for index, entry in enumerate(spec.tools):
            parsed = parse_mcp_entry(entry)
            if parsed is None or entry in entries or parsed[0] not in connections.servers:
                continue
            server, wanted = parsed
            if server in failed:
                problems.append(spec.error(failed[server], "tools", index))
                continue
            offered = listed[server]
            if wanted is None:
                entries[entry] = list(offered.values())
            elif wanted in offered:
                entries[entry] = [offered[wanted]]
            elif entry in spec.optional_tools:
                log.warning(f"role '{spec.name}': dropped '{entry}': the server has no such tool")
            elif offered:
                known = ", ".join(sorted(offered))
                problems.append(
                    spec.error(
                        f"the MCP server '{server}' has no tool '{wanted}' (it has: {known})",
                        "tools",
                        index,
                    )
                )
    if problems:
        raise ConfigError.collect(problems)
    return entries
