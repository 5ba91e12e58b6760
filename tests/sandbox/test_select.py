"""Choosing the tier, and what the shell tool and an agent's run do with the choice:
required with nothing working denies with how to get a sandbox, auto runs unconfined."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import structlog

from swarm import (
    Agent,
    AuditLog,
    MemoryContextStore,
    SandboxSettings,
    SandboxUnavailable,
    ToolError,
    ToolResult,
    find_sandbox,
)
from swarm.guards import apply_policy, load_policy
from swarm.sandbox import Bubblewrap, Sandbox
from swarm.scope import RunScope
from swarm.testing import StubTransport, make_text_response, make_tool_uses_response
from swarm.toolbox import make_toolbox

from .conftest import run, text


def nothing_works(settings: SandboxSettings) -> Sandbox:
    return find_sandbox(settings, tiers=())


def test_bubblewrap_is_chosen_where_it_works(bwrap: Bubblewrap) -> None:
    found = find_sandbox(SandboxSettings(mode="required"))
    assert found.tier == "bubblewrap"
    assert found.describe("none") == f"bubblewrap {bwrap.version}, network none"
    assert bwrap.version[0].isdigit()


def test_a_missing_bwrap_says_so_and_how_to_get_a_sandbox() -> None:
    missing = "/nonexistent/bwrap"
    with pytest.raises(SandboxUnavailable) as caught:
        find_sandbox(SandboxSettings(mode="required"), tiers=["bubblewrap"], bwrap=missing)
    said = str(caught.value)
    assert f"bubblewrap: '{missing}' is not installed" in said
    assert "apt-get install bubblewrap" in said and "dnf install bubblewrap" in said
    assert "sandbox: off" in said


def test_tiers_missing_from_this_build_count_as_not_working() -> None:
    settings = SandboxSettings(mode="auto")
    found = find_sandbox(settings, tiers=["sandbox-exec"], bwrap="/nonexistent/bwrap")
    assert found.tier == "none" and "sandbox-exec" in found.describe("none")


def test_auto_with_nothing_working_runs_unconfined_and_says_why() -> None:
    found = find_sandbox(SandboxSettings(mode="auto"), tiers=())
    assert found.tier == "none"
    assert found.describe("none").startswith("none (unconfined: no sandbox works here")


def test_off_never_sandboxes(bwrap: Bubblewrap) -> None:
    assert find_sandbox(SandboxSettings(mode="off")).tier == "none"


def test_an_unknown_tier_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown sandbox tier 'docker'"):
        find_sandbox(SandboxSettings(), tiers=["docker"])


@pytest.mark.anyio
async def test_required_and_nothing_working_runs_nothing(ws: Path) -> None:
    shell = make_toolbox(ws, sandbox=SandboxSettings(mode="required"), find=nothing_works)
    with pytest.raises(ToolError, match="apt-get install bubblewrap"):
        await run(shell["shell"], "touch ran.txt")
    assert not (ws / "ran.txt").exists()


@pytest.mark.anyio
async def test_auto_with_nothing_working_runs_and_warns_once(ws: Path) -> None:
    shell = make_toolbox(ws, find=nothing_works)["shell"]
    with structlog.testing.capture_logs() as logs:
        first = await run(shell, "echo ran")
        await run(shell, "echo again")
    assert text(first) == "ran\n[exit code 0]"
    assert first.details is not None and first.details["sandbox"].startswith("none (unconfined")
    assert [entry["event"] for entry in logs] == ["shell commands run unconfined"]


def agent_with(tools: list[Any], *calls: tuple[str, dict[str, Any]]) -> Agent:
    turn = [(name, f"call_{i}", args) for i, (name, args) in enumerate(calls)]
    model = StubTransport([make_tool_uses_response(turn), make_text_response()])
    return Agent("You work in a workspace.", model, tools)


async def run_agent(agent: Agent, audit: AuditLog) -> list[ToolResult]:
    scope = RunScope(observers=(audit,))
    async with agent.run_stream("go", MemoryContextStore(), scope=scope) as stream:
        return [event async for event in stream if isinstance(event, ToolResult)]


@pytest.mark.anyio
async def test_the_default_policy_denies_shell_where_no_sandbox_works(
    ws: Path, tmp_path: Path
) -> None:
    tools = apply_policy(
        make_toolbox(ws, find=nothing_works).values(), load_policy("default"), workspace=ws
    )
    agent = agent_with(tools, ("shell", {"command": "touch ran.txt"}))
    with AuditLog(tmp_path / "audit.jsonl") as audit:
        [result] = await run_agent(agent, audit)
    assert result.is_error
    assert "(rule: sandbox-required)" in str(result.content)
    assert "apt-get install bubblewrap" in str(result.content)
    assert not (ws / "ran.txt").exists()
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert records[0]["decision"] == "deny" and records[0]["rule"] == "sandbox-required"


@pytest.mark.anyio
async def test_an_agent_run_is_confined_and_the_audit_log_names_the_sandbox(
    bwrap: Bubblewrap, ws: Path, tmp_path: Path, elsewhere: Path
) -> None:
    (ws / "given.txt").write_text("given\n")
    tools = apply_policy(make_toolbox(ws).values(), load_policy("default"), workspace=ws)
    agent = agent_with(
        tools,
        ("shell", {"command": f"echo made > here.txt; echo pwned > {elsewhere}/keep.txt"}),
        ("read_file", {"path": "given.txt"}),
    )
    with AuditLog(tmp_path / "audit.jsonl") as audit:
        results = {r.name: r for r in await run_agent(agent, audit)}
    # Outside the workspace is absent (reads confined), so the write finds no directory.
    assert "No such file or directory" in str(results["shell"].content)
    assert "given" in str(results["read_file"].content)
    assert (elsewhere / "keep.txt").read_text() == "original\n"
    assert (ws / "here.txt").read_text() == "made\n"
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    decisions = {r["tool"]: r for r in records if r["event"] == "decision"}
    assert decisions["shell"]["sandbox"] == f"bubblewrap {bwrap.version}, network none"
    assert decisions["read_file"]["sandbox"] is None
