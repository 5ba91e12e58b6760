"""MCP servers as a team declares them: ``mcp.json`` or ``.mcp.json`` in the team directory.

The format is the ``mcpServers`` one Claude Code reads::

    {"mcpServers": {
        "git": {"command": "mcp-server-git", "args": ["--repository", "."]},
        "docs": {"type": "http", "url": "https://example.com/mcp",
                 "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}}

``command``/``args``/``env``/``cwd`` start a stdio server; ``type: http`` (or
``streamable-http``) with ``url``/``headers`` reaches a streamable HTTP one, ``type: sse``
an HTTP+SSE one. ``${VAR}`` and ``${VAR:-default}`` are expanded from swarm's environment in
every string; a variable that is not set and has no default is kept on the server
(``unset``): an error naming the file and the line only when a role uses that server. Two
keys are swarm's own: ``timeout`` (seconds one call may take, default 120) and ``network``
(``none``, the default, or ``host``: the network a stdio server's sandbox allows).

Files are read as they are found: keys only other MCP clients use (``alwaysAllow``,
``disabled``, ``description``, ...) are ignored with one warning per file, and a server
name that cannot be part of a tool name (``my server``) is given one that can
(``my_server``), said in a warning. Warnings are kept on each server (``warnings``).

Nothing here imports the ``mcp`` SDK.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

from swarm.config import Document, parse_document
from swarm.errors import ConfigError

__all__ = [
    "MCP_FILES",
    "McpHttpServer",
    "McpServer",
    "McpStdioServer",
    "load_mcp_servers",
    "parse_mcp_servers",
]

MCP_FILES = ("mcp.json", ".mcp.json")
"""The files in a team directory that declare its MCP servers."""

DEFAULT_TIMEOUT = 120.0
_NAME = re.compile(r"^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$")
_UNSAFE = re.compile(r"[^A-Za-z0-9-]+")
# Keys other MCP clients (Claude Desktop, Cline, Cursor, Roo, Windsurf...) write: what they
# mean is the client's business (auto-approval, display, enabling), not a server's.
CLIENT_KEYS = frozenset(
    {
        "alwaysAllow",
        "autoApprove",
        "disabled",
        "enabled",
        "description",
        "headersHelper",
        "oauth",
        "transportType",
        "trust",
        "includeTools",
        "excludeTools",
        "envFile",
        "disabledTools",
        "icon",
        "name",
        "version",
    }
)
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_STDIO_KEYS = frozenset({"type", "command", "args", "env", "cwd", "timeout", "network"})
_HTTP_KEYS = frozenset({"type", "url", "headers", "timeout"})
_HTTP_TYPES = {"http": "http", "streamable-http": "http", "streamable_http": "http", "sse": "sse"}


@dataclass(frozen=True, slots=True)
class McpStdioServer:
    """A server swarm starts as a process and talks to over its stdin and stdout.

    ``env`` holds only what the file gives (the rest of the environment is built from
    scratch); ``cwd`` defaults to the run's workspace.
    """

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    cwd: Path | None = None
    timeout: float = DEFAULT_TIMEOUT
    network: Literal["none", "host"] = "none"
    unset: tuple[ConfigError, ...] = field(default=(), compare=False)
    """Each ``${VAR}`` of the entry that is not set: an error once a role uses it."""
    warnings: tuple[str, ...] = field(default=(), compare=False)
    """What reading the entry ignored or renamed, each naming the file and line."""


@dataclass(frozen=True, slots=True)
class McpHttpServer:
    """A server reached over HTTP at ``url``, with ``headers`` on every request:
    streamable HTTP, or HTTP with server-sent events when ``transport`` is ``sse``."""

    name: str
    url: str
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    timeout: float = DEFAULT_TIMEOUT
    transport: Literal["http", "sse"] = "http"
    unset: tuple[ConfigError, ...] = field(default=(), compare=False)
    """Each ``${VAR}`` of the entry that is not set: an error once a role uses it."""
    warnings: tuple[str, ...] = field(default=(), compare=False)
    """What reading the entry ignored or renamed, each naming the file and line."""


McpServer: TypeAlias = McpStdioServer | McpHttpServer
"""A declared MCP server of either kind."""


class _Problems:
    def __init__(self, document: Document, prefix: tuple[str | int, ...]) -> None:
        self.document = document
        self.prefix = prefix
        self.found: list[ConfigError] = []
        self.unset: list[ConfigError] = []
        self.warnings: list[str] = []

    def at(self, message: str, *key: str | int) -> ConfigError:
        path = (*self.prefix, *key)
        return ConfigError(
            message,
            path=self.document.path,
            line=self.document.line_of(path),
            field=".".join(str(part) for part in path),
        )

    def add(self, message: str, *key: str | int) -> None:
        self.found.append(self.at(message, *key))

    def warn(self, message: str, *key: str | int) -> None:
        self.warnings.append(str(self.at(message, *key)))

    def taken(self) -> tuple[tuple[ConfigError, ...], tuple[str, ...]]:
        """The unset variables and warnings gathered since the last call (one server's)."""
        unset, warnings = tuple(self.unset), tuple(self.warnings)
        self.unset.clear()
        self.warnings.clear()
        return unset, warnings


def _expand(value: str, problems: _Problems, key: tuple[str | int, ...]) -> str:
    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        problems.unset.append(problems.at(f"the environment variable '{name}' is not set", *key))
        return ""

    return _VARIABLE.sub(one, value)


def _strings(value: Any, problems: _Problems, key: tuple[str | int, ...]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.add("expected a list of strings", *key)
        return ()
    return tuple(_expand(v, problems, (*key, i)) for i, v in enumerate(value))


def _mapping(value: Any, problems: _Problems, key: tuple[str | int, ...]) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        problems.add("expected a mapping of names to strings", *key)
        return {}
    return {str(k): _expand(v, problems, (*key, str(k))) for k, v in value.items()}


def _timeout(entry: dict[str, Any], problems: _Problems, name: str) -> float:
    value = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        problems.add("expected a number of seconds above 0", name, "timeout")
        return DEFAULT_TIMEOUT
    return float(value)


def _server_name(name: str, problems: _Problems) -> str | None:
    """``name`` as it can be part of a tool name (``my server`` -> ``my_server``)."""
    if _NAME.fullmatch(name):
        return name
    safe = _UNSAFE.sub("_", name).strip("_")
    if not safe:
        problems.add("a server name needs a letter or digit (it becomes part of tool names)", name)
        return None
    problems.warn(f"the server is named '{safe}' in tool names (mcp__{safe}__TOOL)", name)
    return safe


def _server(name: str, entry: Any, problems: _Problems, base: Path) -> McpServer | None:
    if not isinstance(entry, dict):
        problems.add("expected a mapping (command/args/env, or type/url/headers)", name)
        return None
    kind = entry.get("type", "stdio" if "command" in entry else "http" if "url" in entry else None)
    if kind in _HTTP_TYPES:
        allowed = _HTTP_KEYS
    elif kind == "stdio":
        allowed = _STDIO_KEYS
    else:
        problems.add(
            "give 'command' (a stdio server) or 'type: http' with 'url'"
            + (f"; type '{kind}' is not supported" if kind is not None else ""),
            name,
        )
        return None
    client = sorted(str(k) for k in entry if k not in allowed and k in CLIENT_KEYS)
    if client:
        problems.warn(f"ignored (what MCP clients do, not the server): {', '.join(client)}", name)
    for key in entry:
        if key not in allowed and key not in CLIENT_KEYS:
            problems.add(f"unknown key (known: {', '.join(sorted(allowed))})", name, str(key))
    timeout = _timeout(entry, problems, name)
    safe = _server_name(name, problems)
    if safe is None:
        return None
    if allowed is _HTTP_KEYS:
        url = entry.get("url")
        if not isinstance(url, str) or not url:
            problems.add("an http server needs a 'url'", name)
            return None
        headers = _mapping(entry.get("headers", {}), problems, (name, "headers"))
        expanded = _expand(url, problems, (name, "url"))
        unset, warnings = problems.taken()
        return McpHttpServer(
            safe,
            expanded,
            MappingProxyType(headers),
            timeout,
            "sse" if _HTTP_TYPES[kind] == "sse" else "http",
            unset,
            warnings,
        )
    command = entry.get("command")
    if not isinstance(command, str) or not command:
        problems.add("a stdio server needs a 'command'", name)
        return None
    network = entry.get("network", "none")
    if network not in ("none", "host"):
        problems.add("expected 'none' or 'host'", name, "network")
        network = "none"
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        problems.add("expected a directory path", name, "cwd")
        cwd = None
    server = McpStdioServer(
        safe,
        _expand(command, problems, (name, "command")),
        _strings(entry.get("args", []), problems, (name, "args")),
        MappingProxyType(_mapping(entry.get("env", {}), problems, (name, "env"))),
        base / _expand(cwd, problems, (name, "cwd")) if cwd else None,
        timeout,
        network,
    )
    unset, warnings = problems.taken()
    return dataclasses.replace(server, unset=unset, warnings=warnings)


def parse_mcp_servers(
    servers: Any, document: Document, *, key: tuple[str | int, ...] = ("mcpServers",)
) -> dict[str, McpServer]:
    """The servers of an ``mcpServers`` mapping found at ``key`` in ``document``.

    Relative ``cwd`` paths are taken from the document's directory. An unset ``${VAR}``
    is kept on its server (``unset``), not raised. Raises ``ConfigError`` with every other
    problem (file, line, field).
    """
    problems = _Problems(document, key)
    if not isinstance(servers, dict):
        problems.add("expected a mapping of server names to servers")
        raise ConfigError.collect(problems.found)
    found: dict[str, McpServer] = {}
    for name, entry in servers.items():
        server = _server(str(name), entry, problems, document.path.parent)
        problems.taken()  # a server not kept leaves nothing to say
        if server is None:
            continue
        if server.name in found:
            problems.add(f"two servers are named '{server.name}' in tool names", str(name))
            continue
        found[server.name] = server
    if problems.found:
        raise ConfigError.collect(problems.found)
    return found


def _document(path: Path) -> Document:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read file: {exc}", path=path) from None
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno) from None
    try:  # JSON is YAML: the YAML reader knows the line of every nested key
        return parse_document(text, path, "yaml")
    except ConfigError:
        return parse_document(text, path, "json")


def load_mcp_servers(directory: str | Path) -> dict[str, McpServer]:
    """The MCP servers a team directory declares (``{}`` when it has no file).

    Raises ``ConfigError`` when both ``mcp.json`` and ``.mcp.json`` exist, or for a bad file.
    """
    directory = Path(directory)
    present = [directory / name for name in MCP_FILES if (directory / name).is_file()]
    if not present:
        return {}
    if len(present) > 1:
        raise ConfigError(
            "both mcp.json and .mcp.json declare MCP servers; keep one", path=present[1]
        )
    document = _document(present[0])
    data = document.data
    if not isinstance(data, dict) or "mcpServers" not in data:
        raise ConfigError("expected an object with an 'mcpServers' mapping", path=present[0])
    return parse_mcp_servers(data["mcpServers"], document)
