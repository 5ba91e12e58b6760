"""shell: output, exit codes, timeouts, output cap, progress, and killing what it started."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from swarm import Agent, MemoryContextStore, Progress, ToolOutputDelta, ToolResult
from swarm.testing import StubTransport, make_text_response, make_tool_use_response
from swarm.toolbox import make_toolbox


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a killed child nobody has reaped yet is a zombie: not running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.anyio
async def test_output_and_exit_code(tmp_path: Path) -> None:
    shell = make_toolbox(tmp_path)["shell"]
    out = await shell.execute(shell.validate({"command": "echo hello; echo oops >&2; exit 3"}))
    assert out.content == "hello\noops\n[exit code 3]"
    assert out.details == {"exit_code": 3, "timed_out": False}


@pytest.mark.anyio
async def test_runs_in_the_workspace(tmp_path: Path) -> None:
    shell = make_toolbox(tmp_path)["shell"]
    out = await shell.execute(shell.validate({"command": "pwd"}))
    assert str(out.content).startswith(str(tmp_path.resolve()))  # noqa: ASYNC240


@pytest.mark.anyio
async def test_pipes_and_operators_work(tmp_path: Path) -> None:
    shell = make_toolbox(tmp_path)["shell"]
    out = await shell.execute(shell.validate({"command": "printf 'b\\na\\n' | sort && echo ok"}))
    assert out.content == "a\nb\nok\n[exit code 0]"


@pytest.mark.anyio
async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    shell = make_toolbox(tmp_path, shell_timeout=1)["shell"]
    command = "sleep 300 & echo $! > child.pid; wait"
    out = await shell.execute(shell.validate({"command": command}))
    assert "timed out after 1s; the command was killed" in str(out.content)
    assert out.details is not None and out.details["timed_out"] is True
    child = int((tmp_path / "child.pid").read_text())
    assert not alive(child)


@pytest.mark.anyio
async def test_background_leftovers_are_killed_after_the_command_ends(tmp_path: Path) -> None:
    shell = make_toolbox(tmp_path)["shell"]
    await shell.execute(shell.validate({"command": "sleep 300 & echo $! > child.pid"}))
    child = int((tmp_path / "child.pid").read_text())
    assert not alive(child)


@pytest.mark.anyio
async def test_cancelling_the_call_kills_the_process(tmp_path: Path) -> None:
    shell = make_toolbox(tmp_path)["shell"]
    arguments = shell.validate({"command": "echo $$; sleep 300"})
    printed: list[str] = []
    started = anyio.Event()

    def output(key: str, text: str) -> None:
        printed.append(text)
        started.set()

    async with anyio.create_task_group() as group:
        group.start_soon(lambda: shell.execute(arguments, progress=Progress("c", "shell", output)))
        await started.wait()
        group.cancel_scope.cancel()
    assert not alive(int(printed[0]))


@pytest.mark.anyio
async def test_long_output_is_cut_in_the_middle(tmp_path: Path) -> None:
    shell = make_toolbox(tmp_path, output_limit=100)["shell"]
    out = await shell.execute(shell.validate({"command": "seq 1 1000"}))
    text = str(out.content)
    assert text.startswith("1\n2\n") and "1000" in text and "characters cut" in text
    assert len(text) < 300


@pytest.mark.anyio
async def test_output_streams_as_progress_in_a_run(tmp_path: Path) -> None:
    tools = make_toolbox(tmp_path)
    model = StubTransport(
        [
            make_tool_use_response("shell", "c1", {"command": "echo one; echo two"}),
            make_text_response(),
        ]
    )
    agent = Agent("s", model, [tools["shell"]])
    async with agent.run_stream("go", MemoryContextStore()) as stream:
        events = [e async for e in stream]
    streamed = "".join(e.delta for e in events if isinstance(e, ToolOutputDelta))
    assert streamed == "one\ntwo\n"
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.content == "one\ntwo\n[exit code 0]"
