"""A real agent on SQLiteContextStore: what an interrupted run leaves on disk."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from swarm import (
    Agent,
    Message,
    SessionEndEvent,
    StopReason,
    StreamEvent,
    TextBlock,
    ToolResultBlock,
    tool,
)
from swarm.context import SQLiteContextStore
from swarm.testing import StubTransport, make_text_response, make_tool_use_response

from .support import assert_file_sound, assert_valid_history

pytestmark = pytest.mark.anyio


async def test_an_interrupted_run_stores_the_call_with_a_cancelled_result(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    started = anyio.Event()

    @tool
    async def wait() -> str:
        """Wait until interrupted."""
        started.set()
        await anyio.sleep_forever()
        return "unreachable"

    model = StubTransport([make_tool_use_response("wait", "w1", {})])
    agent = Agent("You wait.", model, [wait])
    store = SQLiteContextStore(db, "run")
    events: list[StreamEvent] = []
    async with agent.run_stream("Wait for me.", store) as stream:

        async def interrupt() -> None:
            await started.wait()
            stream.interrupt()

        async with anyio.create_task_group() as group:
            group.start_soon(interrupt)
            events = [event async for event in stream]
    await store.close()

    end = events[-1]
    assert isinstance(end, SessionEndEvent) and end.stop_reason == StopReason.cancelled
    assert_file_sound(db)
    async with SQLiteContextStore(db, "run") as again:
        history = await again.get_history()
    assert_valid_history(history)
    assert history[0] == Message("user", [TextBlock("Wait for me.")])
    [result] = history[2].tool_results
    assert result == ToolResultBlock(
        "w1", "Cancelled: the run was stopped before this call finished.", is_error=True
    )


async def test_a_finished_run_can_continue_in_a_new_process_with_a_new_task(
    tmp_path: Path,
) -> None:
    db = tmp_path / "run.db"
    async with SQLiteContextStore(db, "chat") as store:
        first = Agent("You answer.", StubTransport([make_text_response("Paris.")]))
        assert await first.run("Capital of France?", store) == "Paris."

    model = StubTransport([make_text_response("Berlin.")])
    async with SQLiteContextStore(db, "chat") as resumed:
        second = Agent("You answer.", model)
        assert await second.run("And of Germany?", resumed) == "Berlin."
    [(seen, _, _)] = model.calls
    assert seen == [
        Message.user("Capital of France?"),
        Message.assistant("Paris."),
        Message.user("And of Germany?"),
    ]
