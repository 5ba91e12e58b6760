"""``.mcp.json`` files as found (``tests/mcp/corpus``, modelled on what MCP clients write:
Claude Code, Cline, Roo, Cursor, Windsurf) load with none of their secrets set."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from swarm import McpHttpServer, load_mcp_servers

CORPUS = Path(__file__).parent / "corpus"
ALL = sorted(p.name for p in CORPUS.glob("*.json"))
SECRETS = ("GITHUB_TOKEN", "BRAVE_API_KEY", "CONTEXT7_API_KEY", "TZ")


@pytest.mark.parametrize("name", ALL)
def test_each_file_loads_with_no_secret_set(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in SECRETS:
        monkeypatch.delenv(variable, raising=False)
    shutil.copy(CORPUS / name, tmp_path / ".mcp.json")
    servers = load_mcp_servers(tmp_path)
    for server in servers.values():
        assert len(server.warnings) == len(set(server.warnings))


def test_client_only_keys_and_names_with_spaces_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    shutil.copy(CORPUS / "roo.json", tmp_path / ".mcp.json")
    server = load_mcp_servers(tmp_path)["brave_search"]
    assert [e.field for e in server.unset] == ["mcpServers.brave search.env.BRAVE_API_KEY"]
    said = "\n".join(server.warnings)
    assert "alwaysAllow, disabled" in said and "named 'brave_search'" in said


def test_sse_servers_are_http_servers_over_sse(tmp_path: Path) -> None:
    shutil.copy(CORPUS / "legacy-sse.json", tmp_path / ".mcp.json")
    servers = load_mcp_servers(tmp_path)
    assert all(isinstance(s, McpHttpServer) and s.transport == "sse" for s in servers.values())
