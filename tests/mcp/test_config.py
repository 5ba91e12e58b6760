"""Declaring MCP servers: mcp.json / .mcp.json in the team directory, ${VAR} expansion, and
errors naming the file, the line and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarm import ConfigError, McpHttpServer, McpStdioServer, Team, load_mcp_servers

CLAUDE_CODE_FILE = """\
{
  "mcpServers": {
    "git": {
      "command": "uvx",
      "args": ["mcp-server-git", "--repository", "${REPO:-.}"],
      "env": {"GIT_TOKEN": "${SWARM_TEST_TOKEN}"}
    },
    "docs": {
      "type": "http",
      "url": "https://docs.example/mcp",
      "headers": {"Authorization": "Bearer ${SWARM_TEST_TOKEN}"}
    }
  }
}
"""


def test_the_claude_code_format_declares_stdio_and_http_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_TEST_TOKEN", "t0k")
    monkeypatch.delenv("REPO", raising=False)
    (tmp_path / ".mcp.json").write_text(CLAUDE_CODE_FILE)
    servers = load_mcp_servers(tmp_path)
    assert servers["git"] == McpStdioServer(
        "git", "uvx", ("mcp-server-git", "--repository", "."), {"GIT_TOKEN": "t0k"}
    )
    docs = servers["docs"]
    assert isinstance(docs, McpHttpServer)
    assert (docs.url, dict(docs.headers)) == (
        "https://docs.example/mcp",
        {"Authorization": "Bearer t0k"},
    )


def test_a_team_without_a_file_declares_no_server(tmp_path: Path) -> None:
    assert load_mcp_servers(tmp_path) == {}


def test_an_unset_variable_is_kept_on_its_server_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SWARM_TEST_TOKEN", raising=False)
    (tmp_path / "mcp.json").write_text(CLAUDE_CODE_FILE)
    servers = load_mcp_servers(tmp_path)  # no role uses them yet: not an error
    lines = [(p.line, p.field) for s in servers.values() for p in s.unset]
    assert lines == [
        (6, "mcpServers.git.env.GIT_TOKEN"),
        (11, "mcpServers.docs.headers.Authorization"),
    ]
    assert "the environment variable 'SWARM_TEST_TOKEN' is not set" in str(servers["git"].unset[0])


def test_client_only_keys_are_ignored_with_one_warning(tmp_path: Path) -> None:
    entry = {"command": "x", "alwaysAllow": ["a"], "disabled": False, "description": "d"}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"fs": entry}}, indent=2))
    server = load_mcp_servers(tmp_path)["fs"]
    assert server == McpStdioServer("fs", "x")
    assert len(server.warnings) == 1
    assert (
        "ignored (what MCP clients do, not the server): alwaysAllow, description, disabled"
        in (server.warnings[0])
    )


def test_an_sse_server_is_declared_with_type_sse(tmp_path: Path) -> None:
    entry = {"type": "sse", "url": "http://127.0.0.1:9/sse"}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"old": entry}}))
    server = load_mcp_servers(tmp_path)["old"]
    assert isinstance(server, McpHttpServer) and server.transport == "sse"


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ({"args": ["x"]}, "give 'command' (a stdio server) or 'type: http' with 'url'"),
        ({"type": "websocket", "url": "ws://x"}, "type 'websocket' is not supported"),
        ({"command": "x", "comand": "y"}, "unknown key"),
        ({"command": "x", "args": "--flag"}, "expected a list of strings"),
        ({"type": "http"}, "an http server needs a 'url'"),
        ({"command": "x", "timeout": 0}, "expected a number of seconds above 0"),
    ],
)
def test_a_bad_server_is_an_error_naming_the_file_and_the_server(
    tmp_path: Path, server: dict[str, object], message: str
) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"tools": server}}, indent=2))
    with pytest.raises(ConfigError) as caught:
        load_mcp_servers(tmp_path)
    assert message in caught.value.message
    assert caught.value.path == str(path)
    assert caught.value.field is not None and caught.value.field.startswith("mcpServers.tools")
    assert caught.value.line is not None


@pytest.mark.parametrize(("written", "named"), [("a__b", "a_b"), ("My Server", "My_Server")])
def test_a_server_name_that_would_break_tool_names_is_made_safe(
    tmp_path: Path, written: str, named: str
) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {written: {"command": "x"}}}))
    servers = load_mcp_servers(tmp_path)
    assert list(servers) == [named]
    assert f"named '{named}' in tool names" in servers[named].warnings[0]


def test_two_names_made_the_same_are_refused(tmp_path: Path) -> None:
    both = {"a b": {"command": "x"}, "a_b": {"command": "y"}}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": both}))
    with pytest.raises(ConfigError, match="two servers are named 'a_b'"):
        load_mcp_servers(tmp_path)


def test_both_files_at_once_are_refused(tmp_path: Path) -> None:
    for name in ("mcp.json", ".mcp.json"):
        (tmp_path / name).write_text('{"mcpServers": {}}')
    with pytest.raises(ConfigError, match="keep one"):
        load_mcp_servers(tmp_path)


def test_invalid_json_is_an_error_at_its_line(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text('{\n  "mcpServers": {\n    "git": {,}\n  }\n}\n')
    with pytest.raises(ConfigError, match="invalid JSON") as caught:
        load_mcp_servers(tmp_path)
    assert caught.value.line == 3


def test_a_team_loads_its_servers_and_validates_entries_against_them(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"git": {"command": "x"}}}))
    (tmp_path / "clerk.yaml").write_text(
        "name: clerk\nsystem: You keep the books.\ntools: [mcp:git, mcp:git/git_log]\n"
    )
    team = Team.load(tmp_path)
    assert list(team.mcp_servers) == ["git"]
    team.agents()  # declared servers' entries are resolved when a run connects


def test_importing_swarm_and_its_mcp_declarations_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    code = (
        "import sys, swarm, swarm.mcp, swarm.cli, swarm.scenario.runner\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
