"""Roles using MCP servers nobody here wrote (mcp-server-time, mcp-server-git, from PyPI),
started over stdio in the run's sandbox, and a small server of ours that crashes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from swarm import ConfigError
from swarm.events import StreamEvent, ToolOutputDelta, ToolResult
from swarm.scenario import load_scenario, run_scenario
from swarm.team import Team
from swarm.types import StopReason

pytestmark = pytest.mark.anyio

LITTLE_SERVER = Path(__file__).with_name("little_server.py")

SERVERS = {
    "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]},
    "git": {"command": sys.executable, "args": ["-m", "mcp_server_git"]},
    "little": {"command": sys.executable, "args": [str(LITTLE_SERVER)]},
}

# The default policy, with a sandbox where one works (bubblewrap here and in CI) and a
# deny rule on the one git tool that writes history.
POLICY = """\
name: mcp-test
extend: builtin:default
sandbox: {mode: auto, network: none}
rules:
  - id: no-commits
    deny: mcp__git__git_commit
    reason: commits are made by people
"""


def _scenario(
    tmp_path: Path,
    tools: list[str],
    script: list[dict[str, Any]],
    servers: dict[str, Any] | None = None,
) -> Path:
    team = tmp_path / "team"
    team.mkdir(exist_ok=True)
    declared = {**SERVERS, **(servers or {})}
    (team / ".mcp.json").write_text(json.dumps({"mcpServers": declared}, indent=2))
    (team / "clerk.yaml").write_text(
        "name: clerk\nsystem: You keep the books.\ntools:\n"
        + "".join(f"  - {tool}\n" for tool in tools)
    )
    (tmp_path / "policy.yaml").write_text(POLICY)
    path = tmp_path / "scenario.yaml"
    path.write_text(
        json.dumps(
            {
                "name": "mcp",
                "team": "team",
                "policy": "policy.yaml",
                "task": "Do the books.",
                "model": {"script": {"clerk": script}},
            }
        )
    )
    return path


async def _run(path: Path, tmp_path: Path, workspace: Path | None = None) -> tuple[Any, list[Any]]:
    events: list[StreamEvent] = []
    outcome = await run_scenario(
        load_scenario(path),
        workspace=workspace or tmp_path / "workspace",
        runs_dir=tmp_path / "runs",
        on_event=events.append,
    )
    return outcome, events


def _results(events: list[Any]) -> list[ToolResult]:
    return [e for e in events if isinstance(e, ToolResult)]


def _audit(outcome: Any) -> list[dict[str, Any]]:
    lines = (outcome.record_dir / "audit.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


async def test_a_scripted_role_naming_mcp_time_calls_get_current_time(tmp_path: Path) -> None:
    path = _scenario(
        tmp_path,
        ["mcp:time"],
        [
            {"call": "mcp__time__get_current_time", "args": {"timezone": "Asia/Tokyo"}},
            {"text": "done"},
        ],
    )
    outcome, events = await _run(path, tmp_path)
    assert outcome.stop_reason == StopReason.end_turn
    (result,) = _results(events)
    assert not result.is_error, result.content
    assert json.loads(result.content)["timezone"] == "Asia/Tokyo"
    (decision,) = [r for r in _audit(outcome) if r["event"] == "decision"]
    assert (decision["tool"], decision["decision"]) == ("mcp__time__get_current_time", "allow")


async def test_arguments_are_checked_against_the_servers_schema_before_the_call(
    tmp_path: Path,
) -> None:
    path = _scenario(
        tmp_path,
        ["mcp:time"],
        [{"call": "mcp__time__get_current_time", "args": {"timezone": 42}}, {"text": "done"}],
    )
    _, events = await _run(path, tmp_path)
    (result,) = _results(events)
    assert result.is_error
    assert "field 'timezone': 42 is not of type 'string'" in result.content


def _git_repo(path: Path) -> Path:
    path.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=path, check=True)
    (path / "ledger.txt").write_text("one line\n")
    subprocess.run([*git, "add", "ledger.txt"], cwd=path, check=True)
    return path


def _has_commits(repo: Path) -> bool:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True)
    return head.returncode == 0


async def test_a_policy_deny_on_git_commit_is_enforced_and_audited(tmp_path: Path) -> None:
    workspace = _git_repo(tmp_path / "workspace")
    path = _scenario(
        tmp_path,
        ["mcp:git"],
        [
            {"call": "mcp__git__git_status", "args": {"repo_path": str(workspace)}},
            {
                "call": "mcp__git__git_commit",
                "args": {"repo_path": str(workspace), "message": "sneaky"},
            },
            {"text": "done"},
        ],
    )
    outcome, events = await _run(path, tmp_path, workspace)
    status, commit = _results(events)
    # git works in the sandbox, on the workspace ...
    assert not status.is_error, status.content
    assert "ledger.txt" in status.content
    # ... and the commit never ran: the repository still has no commit at all.
    assert commit.is_error
    assert "Permission denied" in commit.content and "no-commits" in commit.content
    assert not _has_commits(workspace)
    denied = [r for r in _audit(outcome) if r.get("decision") == "deny"]
    assert [(r["tool"], r["rule"]) for r in denied] == [("mcp__git__git_commit", "no-commits")]
    assert outcome.denied == 1


async def test_a_crashed_server_gives_an_error_result_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    path = _scenario(
        tmp_path,
        ["mcp:little"],
        [
            {"call": "mcp__little__crash", "args": {}},
            {"call": "mcp__little__echo", "args": {"text": "still here"}},
            {"text": "done"},
        ],
    )
    outcome, events = await _run(path, tmp_path)
    crash, echo = _results(events)
    assert crash.is_error
    assert "MCP server 'little'" in crash.content
    assert "about to crash on purpose" in crash.content  # the tail of its stderr
    assert not echo.is_error and echo.content == "echo: still here"  # started again
    assert outcome.stop_reason == StopReason.end_turn


async def test_a_stdio_server_gets_a_built_environment_not_swarms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_TEST_API_KEY", "sk-must-not-leak")
    path = _scenario(
        tmp_path,
        ["mcp:little/environment"],
        [{"call": "mcp__little__environment", "args": {}}, {"text": "done"}],
    )
    _, events = await _run(path, tmp_path)
    (result,) = _results(events)
    names = result.content.split()
    assert "PATH" in names
    assert "SWARM_TEST_API_KEY" not in names


async def test_progress_becomes_output_deltas_and_images_are_kept(tmp_path: Path) -> None:
    path = _scenario(
        tmp_path,
        ["mcp:little/count", "mcp:little/picture"],
        [
            {"call": "mcp__little__count", "args": {"upto": 3}},
            {"call": "mcp__little__picture", "args": {}},
            {"text": "done"},
        ],
    )
    _, events = await _run(path, tmp_path)
    deltas = [e.delta for e in events if isinstance(e, ToolOutputDelta)]
    assert deltas == ["step 1 (1/3)\n", "step 2 (2/3)\n", "step 3 (3/3)\n"]
    counted, picture = _results(events)
    assert counted.content == "counted to 3"
    blocks = picture.block.content if picture.block is not None else None
    assert isinstance(blocks, list)
    assert [type(b).__name__ for b in blocks] == ["ImageBlock"]
    assert blocks[0].media_type == "image/png"


async def test_filtering_gives_a_role_exactly_the_tools_it_listed(tmp_path: Path) -> None:
    from swarm.mcp.client import McpConnections
    from swarm.mcp.tools import mcp_toolbox

    path = _scenario(tmp_path, ["mcp:git/git_status", "mcp:time"], [{"text": "nothing to do"}])
    team = Team.load(load_scenario(path).team)
    async with McpConnections(team.mcp_servers, workspace=tmp_path) as servers:
        toolbox = await mcp_toolbox(team.specs.values(), servers)
        agent = team.specs["clerk"].to_agent(toolbox)
    assert sorted(t.name for t in agent.tools) == [
        "mcp__git__git_status",
        "mcp__time__convert_time",
        "mcp__time__get_current_time",
    ]


async def test_a_tool_not_listed_is_unknown_to_the_role(tmp_path: Path) -> None:
    path = _scenario(
        tmp_path,
        ["mcp:git/git_status"],
        [
            {"call": "mcp__git__git_commit", "args": {"repo_path": ".", "message": "x"}},
            {"text": "done"},
        ],
    )
    _, events = await _run(path, tmp_path)
    (result,) = _results(events)
    assert result.is_error and "Unknown tool 'mcp__git__git_commit'" in result.content


async def test_an_entry_naming_a_tool_the_server_lacks_is_an_error_at_its_line(
    tmp_path: Path,
) -> None:
    path = _scenario(tmp_path, ["read_file", "mcp:time/get_the_time"], [{"text": "x"}])
    with pytest.raises(ConfigError) as caught:
        await _run(path, tmp_path)
    assert caught.value.path == str(tmp_path / "team" / "clerk.yaml")
    assert caught.value.line == 5
    assert "has no tool 'get_the_time'" in caught.value.message
    assert "get_current_time" in caught.value.message


def test_an_entry_naming_an_undeclared_server_is_an_error_at_its_line(tmp_path: Path) -> None:
    team = tmp_path / "team"
    team.mkdir()
    (team / "clerk.yaml").write_text(
        textwrap.dedent(
            """\
            name: clerk
            system: You keep the books.
            tools:
              - mcp:ledger
            """
        )
    )
    with pytest.raises(ConfigError) as caught:
        Team.load(team).agents()
    assert (caught.value.line, caught.value.field) == (4, "tools")
    assert "MCP server 'ledger', which the team does not declare" in caught.value.message


def test_an_optional_entry_naming_an_undeclared_server_is_dropped(tmp_path: Path) -> None:
    import dataclasses

    team = tmp_path / "team"
    team.mkdir()
    (team / "clerk.yaml").write_text(
        "name: clerk\nsystem: You keep the books.\ntools: [read_file, mcp:ledger/add]\n"
    )
    spec = Team.load(team).specs["clerk"]
    spec = dataclasses.replace(spec, optional_tools=frozenset({"mcp:ledger/add"}))
    from swarm import tool

    @tool
    def read_file(path: str) -> str:
        """Read."""
        return ""

    assert [t.name for t in spec.to_agent({"read_file": read_file}).tools] == ["read_file"]


async def test_a_server_that_times_out_gives_an_error_and_is_started_again(
    tmp_path: Path,
) -> None:
    slow = {"slow": {**SERVERS["little"], "timeout": 3}}
    path = _scenario(
        tmp_path,
        ["mcp:slow"],
        [
            {"call": "mcp__slow__hang", "args": {}},
            {"call": "mcp__slow__echo", "args": {"text": "after"}},
            {"text": "done"},
        ],
        slow,
    )
    outcome, events = await _run(path, tmp_path)
    hang, echo = _results(events)
    assert hang.is_error and "MCP server 'slow'" in hang.content
    assert echo.content == "echo: after"
    assert outcome.stop_reason == StopReason.end_turn


@pytest.fixture
def http_little_server(start_http: Any) -> str:
    return start_http(lambda port: [sys.executable, str(LITTLE_SERVER), "--http", str(port)])


async def test_a_streamable_http_server_is_called_with_its_headers(
    tmp_path: Path, http_little_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_TEST_TOKEN", "t0k")
    web = {
        "web": {
            "type": "http",
            "url": http_little_server,
            "headers": {"Authorization": "Bearer ${SWARM_TEST_TOKEN}"},
        }
    }
    path = _scenario(
        tmp_path,
        ["mcp:web/visitor", "mcp:web/echo"],
        [
            {"call": "mcp__web__visitor", "args": {}},
            {"call": "mcp__web__echo", "args": {"text": "over http"}},
            {"text": "done"},
        ],
        web,
    )
    _, events = await _run(path, tmp_path)
    visitor, echo = _results(events)
    assert visitor.content == "Bearer t0k"
    assert echo.content == "echo: over http"


async def test_an_sse_server_is_reached_as_type_sse_says(
    tmp_path: Path, start_http: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = start_http(lambda port: [sys.executable, str(LITTLE_SERVER), "--sse", str(port)])
    monkeypatch.setenv("SWARM_TEST_TOKEN", "s5e")
    old = {
        "old web": {
            "type": "sse",
            "url": url.removesuffix("/mcp") + "/sse",
            "headers": {"Authorization": "Bearer ${SWARM_TEST_TOKEN}"},
            "alwaysAllow": ["echo"],
        }
    }
    path = _scenario(
        tmp_path,
        ["mcp:old_web/visitor", "mcp:old_web/echo"],
        [
            {"call": "mcp__old_web__visitor", "args": {}},
            {"call": "mcp__old_web__echo", "args": {"text": "over sse"}},
            {"text": "done"},
        ],
        old,
    )
    outcome, events = await _run(path, tmp_path)
    visitor, echo = _results(events)
    assert visitor.content == "Bearer s5e"
    assert echo.content == "echo: over sse"
    audited = {e.get("tool") for e in _audit(outcome)}
    assert {"mcp__old_web__visitor", "mcp__old_web__echo"} <= audited


async def test_an_optional_entry_naming_a_tool_the_server_lacks_is_dropped(
    tmp_path: Path,
) -> None:
    import dataclasses

    from swarm.mcp.client import McpConnections
    from swarm.mcp.tools import mcp_toolbox

    path = _scenario(tmp_path, ["mcp:time/get_current_time", "mcp:time/gone"], [{"text": "x"}])
    team = Team.load(load_scenario(path).team)
    spec = dataclasses.replace(team.specs["clerk"], optional_tools=frozenset({"mcp:time/gone"}))
    async with McpConnections(team.mcp_servers, workspace=tmp_path) as servers:
        toolbox = await mcp_toolbox([spec], servers)
    assert [t.name for t in spec.to_agent(toolbox).tools] == ["mcp__time__get_current_time"]


async def test_the_tool_list_is_read_again_after_the_server_says_it_changed(
    tmp_path: Path,
) -> None:
    from swarm.mcp.client import McpConnections
    from swarm.mcp.config import McpStdioServer

    little = McpStdioServer("little", sys.executable, (str(LITTLE_SERVER),))
    async with McpConnections({"little": little}, workspace=tmp_path) as servers:
        before = [t.name for t in await servers.list_tools("little")]
        await servers.call("little", "grow", {})
        after = [t.name for t in await servers.list_tools("little")]
    assert "grown" not in before
    assert after == [*before, "grown"]


def _sandboxed() -> bool:
    from swarm.sandbox import SandboxSettings, find_sandbox

    return find_sandbox(SandboxSettings()).tier != "none"


@pytest.mark.skipif(
    not _sandboxed() and not os.environ.get("CI"),
    reason="no sandbox tier works on this machine (CI always has one)",
)
async def test_a_stdio_server_writes_only_in_the_workspace(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    path = _scenario(
        tmp_path,
        ["mcp:little/write"],
        [
            {"call": "mcp__little__write", "args": {"path": str(outside), "text": "escaped"}},
            {"call": "mcp__little__write", "args": {"path": "inside.txt", "text": "kept"}},
            {"text": "done"},
        ],
    )
    await _run(path, tmp_path)
    assert not outside.exists()
    assert (tmp_path / "workspace" / "inside.txt").read_text() == "kept"


@pytest.mark.skipif(
    not _sandboxed() and not os.environ.get("CI"),
    reason="no sandbox tier works on this machine (CI always has one)",
)
async def test_a_stdio_server_and_all_it_starts_share_the_process_budget(
    tmp_path: Path,
) -> None:
    from swarm.sandbox.cgroup import find_cgroups

    if isinstance(find_cgroups(), str):
        assert not os.environ.get("CI"), "CI makes cgroups"
        pytest.skip("no cgroup can be made here: servers get per-process limits only")
    path = _scenario(
        tmp_path,
        ["mcp:little/spawn"],
        [{"call": "mcp__little__spawn", "args": {"count": 100}}, {"text": "done"}],
    )
    budget = POLICY.replace("network: none}", "network: none, limits: {processes: 20}}")
    (tmp_path / "policy.yaml").write_text(budget)
    _outcome, events = await _run(path, tmp_path)
    [result] = _results(events)
    got = int(str(result.content).split()[-1])
    # The server itself and its launcher count too: fewer than 20 children.
    assert 5 < got < 20
