"""A run on SQLiteContextStore killed with SIGKILL loses at most the iteration in flight,
leaves a valid history, and resumes from it."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from swarm import Agent, Message, StreamEvent, TextBlock, Tool, ToolResultBlock, ToolUseBlock
from swarm.context import SQLiteContextStore
from swarm.testing import FunctionTransport, make_text_response

from .support import assert_file_sound, assert_valid_history, start_process

pytestmark = pytest.mark.anyio


def step_pair(n: int) -> list[Message]:
    """What agent_process.py stores for its n-th step."""
    return [
        Message("assistant", [ToolUseBlock(f"step-{n}", "step", {"n": n})]),
        Message("user", [ToolResultBlock(f"step-{n}", f"step {n} done")]),
    ]


def read_until(process: subprocess.Popen[str], wanted: str) -> list[str]:
    """Lines the process prints, up to and including ``wanted`` (it signals, we read)."""
    assert process.stdout is not None
    lines = []
    while True:
        line = process.stdout.readline()
        if not line:
            _, err = process.communicate()
            pytest.fail(f"the agent process exited before printing {wanted!r}:\n{err}")
        lines.append(line.strip())
        if line.strip() == wanted:
            return lines


def kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.communicate()
    assert process.returncode == -signal.SIGKILL


async def test_a_killed_run_keeps_every_finished_iteration_and_resumes(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    process = start_process("agent_process.py", db, "run-1", "block", 3)
    await anyio.to_thread.run_sync(read_until, process, "BLOCKED")
    kill(process)  # while the fourth call (`block`) is running

    assert_file_sound(db)
    async with SQLiteContextStore(db, "run-1") as store:
        history = await store.get_history()
        assert history == [
            Message("user", [TextBlock("Take steps.")]),
            *step_pair(0),
            *step_pair(1),
            *step_pair(2),
        ]
        assert_valid_history(history)
        assert await store.get_context_tokens() == (30, 15)  # three finished model calls

        seen: list[list[Message]] = []

        def respond(
            messages: list[Message], tools: list[Tool[Any]], system: str
        ) -> list[StreamEvent]:
            seen.append(list(messages))
            return make_text_response("Resumed after step 2.")

        agent = Agent("You take steps.", FunctionTransport(respond))
        assert await agent.run(None, store) == "Resumed after step 2."
        assert seen == [history]
        assert await store.get_history() == [*history, Message.assistant("Resumed after step 2.")]


@pytest.mark.parametrize("steps_seen", [1, 17, 150])
async def test_a_run_killed_at_any_instant_leaves_whole_iterations(
    tmp_path: Path, steps_seen: int
) -> None:
    db = tmp_path / "run.db"
    process = start_process("agent_process.py", db, "spin", "spin")
    await anyio.to_thread.run_sync(read_until, process, f"STEP {steps_seen - 1}")
    kill(process)  # somewhere in the loop: in a model call, a tool, a commit

    assert_file_sound(db)
    async with SQLiteContextStore(db, "spin") as store:
        history = await store.get_history()
    assert_valid_history(history)
    finished = (len(history) - 1) // 2
    assert finished >= steps_seen - 1  # the step that printed last may still be in flight
    assert history == [
        Message.user("Take steps."),
        *[m for n in range(finished) for m in step_pair(n)],
    ]
