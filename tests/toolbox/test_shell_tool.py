"""shell: output, exit codes, timeouts, the output cap, progress, and killing what it started."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from swarm import Progress, Tool, ToolError, ToolOutput, ToolOutputDelta
from swarm.sandbox import SandboxSettings, find_sandbox
from swarm.toolbox import make_toolbox
from swarm.toolbox.shell import OutputCap

from .conftest import RunCalls

Running = Callable[[str], list[int]]


async def run(shell: Tool[Any], command: str, **arguments: Any) -> ToolOutput:
    return await shell.execute(shell.validate({"command": command, **arguments}))


@pytest.fixture
def shell(tools: dict[str, Tool[Any]]) -> Tool[Any]:
    return tools["shell"]


@pytest.mark.anyio
async def test_output_of_stdout_and_stderr_then_the_exit_code(shell: Tool[Any]) -> None:
    out = await run(shell, "echo hello; echo oops >&2; exit 3")
    assert out.content == "hello\noops\n[exit code 3]"
    assert out.details is not None
    limits, peak = out.details.pop("limits"), out.details.pop("memory_peak")
    assert out.details == {
        "exit_code": 3,
        "timed_out": False,
        "output_chars": 11,
        "output_cut": False,
        "sandbox": find_sandbox(SandboxSettings()).describe("none"),
    }
    # What holds the memory and process budget, and the most the command used.
    assert re.fullmatch(r"limits: cpu 600 s, memory \d+ [GM]iB .*", limits)
    assert peak is None or peak > 0


@pytest.mark.anyio
async def test_a_command_without_output(shell: Tool[Any]) -> None:
    assert (await run(shell, "true")).content == "[exit code 0, no output]"


@pytest.mark.anyio
async def test_runs_in_the_workspace(shell: Tool[Any], ws: Path) -> None:
    out = await run(shell, "pwd; echo hi > made.txt")
    assert out.content == f"{ws}\n[exit code 0]"
    assert (ws / "made.txt").read_text() == "hi\n"


@pytest.mark.anyio
async def test_pipes_and_operators_work(shell: Tool[Any]) -> None:
    out = await run(shell, "printf 'b\\na\\n' | sort && echo ok || echo never")
    assert out.content == "a\nb\nok\n[exit code 0]"


@pytest.mark.anyio
async def test_stdin_is_closed(shell: Tool[Any]) -> None:
    assert (await run(shell, "cat; echo after")).content == "after\n[exit code 0]"


@pytest.mark.anyio
async def test_the_environment_can_be_given(ws: Path) -> None:
    """``shell_env`` is the command's whole environment."""
    shell = make_toolbox(ws, shell_env={"PATH": os.defpath, "GREETING": "hi"})["shell"]
    out = await run(shell, "echo $GREETING ${OPENAI_API_KEY:-no-key}")
    assert out.content == "hi no-key\n[exit code 0]"


@pytest.mark.anyio
async def test_commands_do_not_see_secrets_from_the_environment(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789abcdefghij")
    monkeypatch.setenv("GITHUB_TOKEN", "plain")
    monkeypatch.setenv("PGPASSWORD", "hunter2")
    monkeypatch.setenv("DATABASE_URL", "postgres://app:hunter2@db.internal/app")
    monkeypatch.setenv("STASH", "ghp_abcdefghijklmnopqrstuvwxyz0123")
    monkeypatch.setenv("GREETING", "hi")
    shell = make_toolbox(ws)["shell"]
    out = await run(shell, "env")
    assert "PATH=" in out.content and "HOME=" in out.content
    # built from scratch: not even harmless variables come along unless named
    assert "GREETING" not in out.content
    for leaked in ("OPENAI_API_KEY", "GITHUB_TOKEN", "PGPASSWORD", "hunter2", "ghp_"):
        assert leaked not in out.content
    everything = make_toolbox(ws, shell_env=os.environ)["shell"]
    assert "sk-test-0123456789abcdefghij" in (await run(everything, "env")).content


@pytest.mark.anyio
async def test_a_command_killed_by_a_signal_says_which(shell: Tool[Any]) -> None:
    out = await run(shell, "kill -KILL $$")
    if find_sandbox(SandboxSettings()).tier == "none":
        assert out.content == "[killed by SIGKILL, no output]"
    else:  # the launcher follows bash's convention: 128 + the signal's number
        assert out.content == "[exit code 137: killed by SIGKILL, no output]"


@pytest.mark.anyio
async def test_an_empty_command_is_an_error(shell: Tool[Any]) -> None:
    with pytest.raises(ToolError, match="command is empty"):
        await run(shell, "  ")


@pytest.mark.anyio
async def test_timeout_kills_the_whole_process_group(
    ws: Path, running: Running, marker: str
) -> None:
    shell = make_toolbox(ws, shell_timeout=1)["shell"]
    out = await run(shell, f"echo started; sleep {marker} & wait")
    assert out.content == (
        "started\n[timed out after 1s; the command and everything it started were killed]"
    )
    assert out.details is not None and out.details["timed_out"] is True
    assert running(marker) == []


@pytest.mark.anyio
async def test_timeout_seconds_shortens_the_limit(
    shell: Tool[Any], running: Running, marker: str
) -> None:
    out = await run(shell, f"sleep {marker} & wait", timeout_seconds=1)
    assert str(out.content).startswith("[timed out after 1s")
    assert running(marker) == []


@pytest.mark.anyio
async def test_timeout_seconds_cannot_pass_the_toolbox_limit(ws: Path) -> None:
    shell = make_toolbox(ws, shell_timeout=1)["shell"]
    out = await run(shell, "sleep 300", timeout_seconds=600)
    assert str(out.content).startswith("[timed out after 1s")


@pytest.mark.anyio
async def test_a_child_ignoring_sigterm_is_killed(ws: Path, running: Running, marker: str) -> None:
    shell = make_toolbox(ws, shell_timeout=1)["shell"]
    await run(shell, f"trap '' TERM; sleep {marker} & wait")
    assert running(marker) == []


@pytest.mark.anyio
async def test_background_leftovers_are_killed_when_the_command_ends(
    shell: Tool[Any], running: Running, marker: str
) -> None:
    out = await run(shell, f"sleep {marker} & echo done")
    assert out.content == "done\n[exit code 0]"
    assert running(marker) == []


@pytest.mark.anyio
async def test_cancelling_the_call_kills_the_process_group(
    shell: Tool[Any], running: Running, marker: str
) -> None:
    arguments = shell.validate({"command": f"sleep {marker} & echo $!; wait"})
    printed: list[str] = []
    started = anyio.Event()

    def output(key: str, text: str) -> None:
        printed.append(text)
        started.set()

    async with anyio.create_task_group() as group:
        group.start_soon(lambda: shell.execute(arguments, progress=Progress("c", "shell", output)))
        await started.wait()
        assert running(marker) != []
        group.cancel_scope.cancel()
    assert running(marker) == []


@pytest.mark.anyio
async def test_long_output_keeps_its_head_and_tail(ws: Path) -> None:
    shell = make_toolbox(ws, output_limit=100)["shell"]
    out = await run(shell, "seq 1 1000")
    lines = str(out.content).splitlines()
    assert lines[:3] == ["1", "2", "3"]
    assert lines[-2:] == ["1000", "[exit code 0]"]
    cut = next(line for line in lines if line.startswith("[…"))
    assert cut.endswith("characters of output cut …]")
    assert len(str(out.content)) < 200
    assert out.details is not None and out.details["output_cut"] is True
    assert out.details["output_chars"] == len("".join(f"{n}\n" for n in range(1, 1001)))


@pytest.mark.anyio
async def test_huge_output_is_counted_not_kept(ws: Path) -> None:
    shell = make_toolbox(ws, output_limit=1000)["shell"]
    out = await run(shell, "yes | head -c 5000000")
    assert out.details is not None and out.details["output_chars"] == 5_000_000
    assert len(str(out.content)) < 1100


def test_output_cap_keeps_head_and_tail_of_many_pieces() -> None:
    cap = OutputCap(10)
    for piece in ["abc", "defg", "hij", "klmno", "pq"]:
        cap.add(piece)
    assert cap.total == 17 and cap.cut
    assert cap.text() == "abcde\n[… 7 characters of output cut …]\nmnopq"


def test_output_cap_under_the_limit_keeps_everything() -> None:
    cap = OutputCap(10)
    for piece in ["abc", "defg", "hij"]:
        cap.add(piece)
    assert not cap.cut and cap.text() == "abcdefghij"


@pytest.mark.anyio
async def test_output_streams_as_progress_in_whole_lines(
    tools: dict[str, Tool[Any]], run_calls: RunCalls
) -> None:
    done = await run_calls(
        [tools["shell"]], ("shell", {"command": "echo one; echo two; printf three"})
    )
    deltas = [e for e in done.events if isinstance(e, ToolOutputDelta)]
    assert "".join(d.delta for d in deltas) == "one\ntwo\nthree"
    assert all(d.delta.endswith("\n") for d in deltas[:-1]) and deltas[-1].delta.endswith("three")
    assert {(d.name, d.key) for d in deltas} == {("shell", "output")}
    [result] = done.results
    assert not result.is_error and result.content == "one\ntwo\nthree\n[exit code 0]"
    assert result.details is not None and result.details["exit_code"] == 0
