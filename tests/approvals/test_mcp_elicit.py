"""``swarm mcp serve``: a call three levels down that the policy asks about goes to the
SDK's client as an elicitation; its answer runs (or refuses) the call, with a receipt."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client

from .support import make_project

pytestmark = pytest.mark.anyio


async def _call_served(tmp_path: Path, answer: dict[str, Any]) -> tuple[Any, list[str]]:
    scenario = make_project(tmp_path)
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content=answer)

    args = ["-m", "swarm", "mcp", "serve", str(scenario), "--workspace", str(tmp_path / "ws")]
    args += ["--runs-dir", str(tmp_path / "runs")]
    params = StdioServerParameters(command=sys.executable, args=args)
    async with (
        stdio_client(params) as (read, write),
        ClientSession(
            read,
            write,
            elicitation_callback=elicit,
            client_info=types.Implementation(name="approving-client", version="1"),
        ) as session,
    ):
        await session.initialize()
        result = await session.call_tool("boss", {"task": "Count once."})
    return result, asked


def _receipts(tmp_path: Path) -> list[dict[str, Any]]:
    [record] = (tmp_path / "runs").iterdir()
    lines = (record / "audit.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if '"event":"approval"' in line]


async def test_a_client_that_elicits_approves_the_workers_call(tmp_path: Path) -> None:
    result, asked = await _call_served(tmp_path, {"approve": True})
    assert not result.is_error, result.content
    assert [c.text for c in result.content] == ["all done"]
    assert len(asked) == 1
    assert asked[0].startswith("[boss/lead#1/worker#1] wants to call shell")
    assert (tmp_path / "ws" / "count.txt").read_text() == "x\n"
    [receipt] = _receipts(tmp_path)
    assert (receipt["approved"], receipt["via"]) == (True, "mcp")
    assert receipt["who"] == "approving-client (MCP client)"


async def test_a_client_that_says_no_keeps_the_call_from_running(tmp_path: Path) -> None:
    result, _ = await _call_served(tmp_path, {"approve": False, "reason": "not today"})
    assert not result.is_error  # the team goes on; the worker is told why
    assert not (tmp_path / "ws" / "count.txt").exists()
    [receipt] = _receipts(tmp_path)
    assert (receipt["approved"], receipt["reason"]) == (False, "not today")
