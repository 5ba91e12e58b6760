"""Fixtures for the toolbox tests: a workspace, its tools, and a way to call them the way a
model does (through an ``Agent`` run with a scripted model)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from swarm import Agent, MemoryContextStore, StreamEvent, Tool, ToolResult
from swarm.testing import StubTransport, make_text_response, make_tool_uses_response
from swarm.toolbox import make_toolbox


@dataclass(frozen=True)
class ModelRun:
    """What a scripted model's turn of tool calls produced."""

    events: list[StreamEvent]

    @property
    def results(self) -> list[ToolResult]:
        """The tool results, in call order."""
        found = [e for e in self.events if isinstance(e, ToolResult)]
        return sorted(found, key=lambda r: int(r.tool_use_id.removeprefix("call_")))


RunCalls = Callable[..., Awaitable[ModelRun]]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The workspace: a directory inside ``tmp_path``, so there is an outside to escape to."""
    path = Path(os.path.realpath(tmp_path)) / "ws"
    path.mkdir()
    return path


@pytest.fixture
def tools(ws: Path) -> dict[str, Tool[Any]]:
    return make_toolbox(ws)


@pytest.fixture
def run_calls() -> RunCalls:
    """Run ``(tool name, arguments)`` calls as one model turn through an agent."""

    async def run(tools: list[Tool[Any]], *calls: tuple[str, dict[str, Any]]) -> ModelRun:
        turn = [(name, f"call_{i}", args) for i, (name, args) in enumerate(calls)]
        model = StubTransport([make_tool_uses_response(turn), make_text_response()])
        agent = Agent("You work in a workspace.", model, tools)
        async with agent.run_stream("go", MemoryContextStore()) as stream:
            return ModelRun([event async for event in stream])

    return run
