"""MCP tool arguments that name paths: found by schema and by value, confined to the
workspace before anything reaches the server (a real server over stdio, started in the
run's sandbox, that logs every argument it is sent and reads what it is given)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from swarm.errors import GuardError
from swarm.events import StreamEvent, ToolResult
from swarm.mcp.client import McpConnections
from swarm.mcp.config import McpStdioServer
from swarm.mcp.paths import McpPathGuard, path_fields
from swarm.mcp.tools import mcp_toolbox
from swarm.scenario import load_scenario, run_scenario
from swarm.team import Team
from swarm.tools import Tool
from swarm.types import StopReason

pytestmark = pytest.mark.anyio

PATH_SERVER = Path(__file__).with_name("path_server.py")
SECRET = "TOPSECRET-7f3a"
INSIDE = "the ledger balances"

POLICY = """\
name: mcp-paths
extend: builtin:default
sandbox: {mode: auto, network: none}
"""


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace with a file and a symlink to a directory outside it holding a secret."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text(INSIDE)
    (workspace / "sub").mkdir()
    (workspace / "elsewhere").symlink_to(outside)
    return workspace, outside


def _scenario(tmp_path: Path, script: list[dict[str, Any]]) -> Path:
    team = tmp_path / "team"
    team.mkdir()
    servers = {"paths": {"command": sys.executable, "args": [str(PATH_SERVER)]}}
    (team / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (team / "clerk.yaml").write_text("name: clerk\nsystem: You read.\ntools:\n  - mcp:paths\n")
    (tmp_path / "policy.yaml").write_text(POLICY)
    path = tmp_path / "scenario.yaml"
    scenario = {
        "name": "mcp-paths",
        "team": "team",
        "policy": "policy.yaml",
        "task": "Read.",
        "model": {"script": {"clerk": script}},
    }
    path.write_text(json.dumps(scenario))
    return path


def _received(workspace: Path) -> list[dict[str, Any]]:
    log = workspace / "received.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def _text(content: Any) -> str:
    return "".join(block.text for block in content)


def _file_uri(path: Path | str) -> str:
    return "file://" + quote(str(path))


def _attacks(workspace: Path, outside: Path) -> list[tuple[str, dict[str, Any]]]:
    secret = outside / "secret.txt"
    home = Path(os.path.expanduser("~"))
    return [
        # a `uri` argument, named like no path PathGuard knows
        ("read_resource", {"uri": "/etc/passwd"}),
        ("read_resource", {"uri": "file:///root/x"}),
        ("read_resource", {"uri": _file_uri(secret)}),
        ("read_resource", {"uri": "FILE://localhost" + quote(str(secret))}),
        ("read_resource", {"uri": "file://" + str(workspace) + "/%2e%2e/outside/secret.txt"}),
        ("read_resource", {"uri": "file://elsewhere.example/etc/passwd"}),
        ("read_resource", {"uri": "elsewhere/secret.txt"}),  # a symlink out of the workspace
        ("read_resource", {"uri": "sub/../elsewhere/../outside/secret.txt"}),
        # a nested `options.root` (a $ref in the schema)
        ("scan", {"options": {"root": "../../outside"}}),
        ("scan", {"options": {"root": str(outside)}}),
        ("scan", {"options": {"root": "~"}}),
        # a `format: uri` string
        ("fetch", {"location": "~/.ssh/id_rsa"}),
        ("fetch", {"location": str(home / ".ssh" / "id_rsa")}),
        ("fetch", {"location": "../outside/secret.txt"}),
        # by value alone: an argument named `query`, and a key of a free-form object
        ("lookup", {"query": str(secret)}),
        ("lookup", {"query": _file_uri(secret)}),
        ("lookup", {"query": "../outside/secret.txt"}),
        ("lookup", {"query": " " + str(secret) + "\n"}),
        ("lookup", {"query": "notes.txt", "extra": {"copy": str(secret)}}),
        ("lookup", {"query": "notes.txt", "extra": {str(secret): "x"}}),
        ("lookup", {"query": "http:/../../outside/secret.txt"}),
        ("lookup", {"query": "file:" + str(secret)}),
        ("lookup", {"query": "/" + str(secret)}),
        ("lookup", {"query": str(secret) + "\x00.txt"}),
        ("fetch", {"location": "%2e%2e/outside/secret.txt"}),
        ("fetch", {"location": _file_uri(workspace / "sub") + "%3F/../../../outside/secret.txt"}),
    ]


async def test_path_arguments_outside_the_workspace_never_reach_the_server(
    tmp_path: Path,
) -> None:
    workspace, outside = _tree(tmp_path)
    attacks = _attacks(workspace, outside)
    allowed = [
        ("read_resource", {"uri": "notes.txt"}),
        ("read_resource", {"uri": _file_uri(workspace / "notes.txt")}),
        ("scan", {"options": {"root": str(workspace)}}),
        ("fetch", {"location": "./sub/../notes.txt"}),
        ("lookup", {"query": "notes.txt", "extra": {"tz": "Europe/Paris"}}),
        # text that only looks like a path, under a name that is not one: sent as it is
        ("lookup", {"query": "/* not a path */", "extra": {"route": "/api/users"}}),
    ]
    script: list[dict[str, Any]] = [
        {"call": f"mcp__paths__{tool}", "args": args} for tool, args in [*attacks, *allowed]
    ]
    path = _scenario(tmp_path, [*script, {"text": "done"}])
    events: list[StreamEvent] = []
    outcome = await run_scenario(
        load_scenario(path),
        workspace=workspace,
        runs_dir=tmp_path / "runs",
        on_event=events.append,
    )
    assert outcome.stop_reason == StopReason.end_turn
    results = [e for e in events if isinstance(e, ToolResult)]
    assert len(results) == len(script)
    refused, done = results[: len(attacks)], results[len(attacks) :]
    for (tool, args), result in zip(attacks, refused, strict=True):
        assert result.is_error, (tool, args, result.content)
        assert "Permission denied" in result.content, (tool, args, result.content)
        assert "(rule: workspace)" in result.content, (tool, args, result.content)
        assert SECRET not in result.content
    # The server was sent only the calls that were allowed, and they worked.
    assert [r["tool"] for r in _received(workspace)] == [tool for tool, _ in allowed]
    assert SECRET not in (workspace / "received.jsonl").read_text()
    listing = "elsewhere notes.txt received.jsonl sub"
    assert [r.content for r in done[:-1]] == [INSIDE, INSIDE, listing, INSIDE, INSIDE]
    assert not done[-1].is_error and "cannot read /* not a path */" in done[-1].content
    lines = (outcome.record_dir / "audit.jsonl").read_text().splitlines()
    audit = [json.loads(line) for line in lines]
    denied = [r for r in audit if r.get("decision") == "deny"]
    assert len(denied) == len(attacks)
    assert {(r["guard"], r["rule"]) for r in denied} == {("McpPathGuard", "workspace")}
    assert outcome.denied == len(attacks)


@contextlib.asynccontextmanager
async def _connected(
    tmp_path: Path,
    workspace: Path,
    *,
    hidden: tuple[Path, ...] = (),
    readonly: tuple[str | Path, ...] = (),
) -> AsyncIterator[dict[str, Tool[Any]]]:
    """The path server's tools, by their own names, built by ``mcp_toolbox``."""
    _scenario(tmp_path, [{"text": "x"}])
    team = Team.load(tmp_path / "team")
    server = McpStdioServer("paths", sys.executable, (str(PATH_SERVER),))
    async with McpConnections({"paths": server}, workspace=workspace, hidden=hidden) as servers:
        toolbox = await mcp_toolbox(team.specs.values(), servers, readonly=readonly)
        yield {tool.context.tool: tool for tool in toolbox["mcp:paths"]}


async def test_a_denial_tells_the_model_which_argument_and_why(tmp_path: Path) -> None:
    workspace, outside = _tree(tmp_path)
    async with _connected(tmp_path, workspace) as tools:
        with pytest.raises(GuardError) as caught:
            await tools["scan"](options={"root": str(outside)})
    assert (caught.value.guard, caught.value.rule) == ("McpPathGuard", "workspace")
    assert caught.value.reason.startswith("argument 'options.root': ")
    assert f"'{outside}' leads outside the workspace" in caught.value.reason
    assert _received(workspace) == []


async def test_a_tool_that_may_write_is_never_given_a_read_only_protected_path(
    tmp_path: Path,
) -> None:
    workspace, _ = _tree(tmp_path)
    (workspace / ".git").mkdir()
    config = workspace / ".git" / "config"
    config.write_text("[core]\n")
    (workspace / "keys").mkdir()
    readonly = (config, "keys/**")
    async with _connected(tmp_path, workspace, readonly=readonly) as tools:
        for target in (".git/config", str(config), "sub/../.git/config", "keys/new.pem"):
            with pytest.raises(GuardError) as caught:
                await tools["save"](target_file=target, text="[core]\nfsmonitor = evil\n")
            assert caught.value.rule == "protected-path", target
        # A tool its server marks read-only may still read it; one that writes, elsewhere.
        assert _text(await tools["read_resource"](uri=".git/config")) == "[core]\n"
        assert _text(await tools["save"](target_file="sub/out.txt", text="fine")) == "saved"
    assert config.read_text() == "[core]\n"
    assert not (workspace / "keys" / "new.pem").exists()
    assert [r["tool"] for r in _received(workspace)] == ["read_resource", "save"]
    assert (workspace / "sub" / "out.txt").read_text() == "fine"


async def test_run_records_inside_the_workspace_are_never_named_to_a_server(
    tmp_path: Path,
) -> None:
    workspace, _ = _tree(tmp_path)
    records = workspace / "records"  # the run's records, given as hidden
    default = workspace / ".swarm" / "runs"  # where records go by default: always hidden
    for where in (records, default):
        (where / "r1").mkdir(parents=True)
        (where / "r1" / "audit.jsonl").write_text(SECRET)
    async with _connected(tmp_path, workspace, hidden=(records,)) as tools:
        for uri in (
            "records/r1/audit.jsonl",
            _file_uri(records / "r1" / "audit.jsonl"),
            ".swarm/runs/r1/audit.jsonl",
            "sub/../.swarm/runs",
        ):
            with pytest.raises(GuardError) as caught:
                await tools["read_resource"](uri=uri)
            assert "run records" in caught.value.reason, uri
        with pytest.raises(GuardError):
            await tools["scan"](options={"root": "records"})
    assert _received(workspace) == []


def test_the_schema_marks_path_arguments_by_format_and_name_at_any_depth() -> None:
    schema = {
        "type": "object",
        "properties": {
            "rootUri": {"type": "string"},
            "xpath": {"type": "string"},
            "source_timezone": {"type": "string"},
            "link": {"type": "string", "format": "uri-reference"},
            "jobs": {"type": "array", "items": {"$ref": "#/$defs/Job"}},
            "maybe": {"anyOf": [{"$ref": "#/$defs/Job"}, {"type": "null"}]},
        },
        "$defs": {
            "Job": {
                "type": "object",
                "properties": {"workDir": {"type": "string"}, "name": {"type": "string"}},
            }
        },
    }
    assert path_fields(schema) == {
        ("rootUri",),
        ("link",),
        ("jobs", "*", "workDir"),
        ("maybe", "workDir"),
    }


@pytest.mark.parametrize(
    "value",
    [
        "Europe/Paris",
        "America/Argentina/Buenos_Aires",
        "16:30",
        "HEAD~1",
        "origin/main",
        "fix: names like ../x are kept",
        "https://example.com/docs/a",
        "line one\n/etc/passwd is quoted in a message",
    ],
)
def test_values_real_servers_take_are_not_mistaken_for_paths(tmp_path: Path, value: str) -> None:
    guard = McpPathGuard(tmp_path)
    assert guard.problem(value, named=False, writes=False) is None
    assert guard.problem(value, named=True, writes=True) is None
