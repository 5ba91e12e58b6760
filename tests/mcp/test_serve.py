"""``swarm mcp serve``: the mcp SDK's own client lists the team's roles and calls one, over
stdio and over streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.anyio

REPO = Path(__file__).parents[2]

SCRIPT = {
    "lead": [
        {"call": "helper", "args": {"task": "Look it up."}},
        {"text": "The answer is 42."},
    ],
    "helper": [{"text": "It is 42."}],
}


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    team = tmp_path / "team"
    team.mkdir()
    (team / "lead.yaml").write_text(
        "name: lead\ndescription: Answers questions.\nsystem: You answer.\ndelegates: [helper]\n"
    )
    (team / "helper.yaml").write_text(
        "name: helper\ndescription: Looks things up.\nsystem: You look things up.\n"
    )
    path = tmp_path / "scenario.yaml"
    path.write_text(
        json.dumps(
            {"name": "served", "team": "team", "task": "unused", "model": {"script": SCRIPT}}
        )
    )
    return path


def _serve_args(scenario: Path, *extra: str) -> list[str]:
    base = scenario.parent
    return [
        "-m",
        "swarm",
        "mcp",
        "serve",
        str(scenario),
        "--workspace",
        str(base / "workspace"),
        "--runs-dir",
        str(base / "runs"),
        *extra,
    ]


async def _ask(session: ClientSession) -> tuple[list[str], Any, list[str]]:
    await session.initialize()
    listed = await session.list_tools()
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    result = await session.call_tool(
        "lead", {"task": "What is the answer?"}, progress_callback=on_progress
    )
    return [t.name for t in listed.tools], result, progress


def _run_records(scenario: Path) -> list[Path]:
    runs = scenario.parent / "runs"
    return sorted(p for p in runs.iterdir() if (p / "summary.json").exists())


async def test_the_sdk_client_calls_the_entry_role_over_stdio(scenario: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=_serve_args(scenario))
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        names, result, progress = await _ask(session)
    assert names == ["lead"]
    assert not result.is_error
    assert [c.text for c in result.content] == ["The answer is 42."]
    assert "entry: calls helper" in progress
    assert "lead/helper#1: finished (end_turn)" in progress
    (record,) = _run_records(scenario)
    summary = json.loads((record / "summary.json").read_text())
    assert summary["final_text"] == "The answer is 42."


async def test_the_server_gives_swarms_version(scenario: Path) -> None:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    params = StdioServerParameters(command=sys.executable, args=_serve_args(scenario))
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        started = await session.initialize()
    assert started.server_info.version == version


@pytest.fixture
def http_server(scenario: Path, start_http: Any) -> str:
    return start_http(
        lambda port: [
            sys.executable,
            *_serve_args(scenario, "--all", "--http", f"127.0.0.1:{port}"),
        ]
    )


async def test_the_sdk_client_calls_the_entry_role_over_http(
    scenario: Path, http_server: str
) -> None:
    async with (
        streamable_http_client(http_server) as (read, write),
        ClientSession(read, write) as session,
    ):
        names, result, progress = await _ask(session)
    assert names == ["helper", "lead"]  # --all: every role
    assert [c.text for c in result.content] == ["The answer is 42."]
    assert "lead/helper#1: finished (end_turn)" in progress
    assert len(_run_records(scenario)) == 1


@pytest.fixture
def hanging_scenario(tmp_path: Path) -> Path:
    team = tmp_path / "team"
    team.mkdir()
    little = str(Path(__file__).with_name("little_server.py"))
    servers = {"mcpServers": {"little": {"command": sys.executable, "args": [little]}}}
    (team / ".mcp.json").write_text(json.dumps(servers))
    (team / "lead.yaml").write_text("name: lead\nsystem: You wait.\ntools: [mcp:little/hang]\n")
    (tmp_path / "policy.yaml").write_text("extend: builtin:default\nsandbox: {mode: auto}\n")
    path = tmp_path / "scenario.yaml"
    script = {"lead": [{"call": "mcp__little__hang", "args": {}}, {"text": "done"}]}
    path.write_text(
        json.dumps(
            {
                "name": "waits",
                "team": "team",
                "task": "unused",
                "policy": "policy.yaml",
                "model": {"script": script},
            }
        )
    )
    return path


async def test_a_client_cancelling_the_call_stops_the_run_and_its_record_says_so(
    hanging_scenario: Path,
) -> None:
    params = StdioServerParameters(command=sys.executable, args=_serve_args(hanging_scenario))
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        calling = anyio.Event()

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            if message == "entry: calls mcp__little__hang":
                calling.set()

        async with anyio.create_task_group() as group:

            async def call() -> None:
                await session.call_tool("lead", {"task": "Wait."}, progress_callback=on_progress)

            group.start_soon(call)
            with anyio.fail_after(120):  # the run must reach the call (not hang the suite)
                await calling.wait()
            group.cancel_scope.cancel()
        for _ in range(600):  # a bounded poll: the server writes the record as it stops
            if _run_records(hanging_scenario):
                break
            await anyio.sleep(0.05)
    (record,) = _run_records(hanging_scenario)
    summary = json.loads((record / "summary.json").read_text())
    assert summary["interrupted"] is True
