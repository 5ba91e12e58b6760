"""An MCP server for the path tests: tools whose arguments name files in the ways real
servers' do (a ``uri``, a nested ``options.root``, a ``format: uri`` string, an argument
with no path-like name), each reading what it is given. Every call's arguments are appended
to ``received.jsonl`` in the server's working directory first, so a test can see what the
server was ever sent."""

import json
import os
from pathlib import Path
from typing import Annotated
from urllib.parse import unquote, urlsplit

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

server = MCPServer("paths")
LOG = Path(os.getcwd(), "received.jsonl")


def _received(tool: str, arguments: object) -> None:
    with LOG.open("a") as log:
        log.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")


def _read(path: str) -> str:
    if path.lower().startswith("file:"):
        path = unquote(urlsplit(path).path)
    try:
        return Path(os.path.expanduser(path)).read_text()
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def read_resource(uri: str) -> str:
    """Read the resource at ``uri`` (a file: URI or a path)."""
    _received("read_resource", {"uri": uri})
    return _read(uri)


class Options(BaseModel):
    """Where to scan."""

    root: str
    depth: int = 1


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def scan(options: Options) -> str:
    """List the names in ``options.root``."""
    _received("scan", {"options": options.model_dump()})
    try:
        return " ".join(sorted(os.listdir(options.root)))
    except OSError as exc:
        return f"cannot list {options.root}: {exc.strerror}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def fetch(location: Annotated[str, Field(json_schema_extra={"format": "uri"})]) -> str:
    """Fetch ``location`` (its schema says ``format: uri``)."""
    _received("fetch", {"location": location})
    return _read(location)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def lookup(query: str, extra: dict[str, str] | None = None) -> str:
    """Look ``query`` up (a name nothing marks as a path; it is opened all the same)."""
    _received("lookup", {"query": query, "extra": extra})
    return _read(query)


@server.tool()
def save(target_file: str, text: str) -> str:
    """Write ``text`` to ``target_file`` (a tool that writes: no read-only hint)."""
    _received("save", {"target_file": target_file, "text": text})
    try:
        Path(target_file).write_text(text)
    except OSError as exc:
        return f"cannot write {target_file}: {exc.strerror}"
    return "saved"


if __name__ == "__main__":
    server.run()
