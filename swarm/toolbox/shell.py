"""shell: a command run by bash in the workspace, with a timeout, an output cap, and a
clean kill of everything it started."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from typing import Annotated

import anyio
import anyio.abc

from swarm.toolbox._paths import Workspace
from swarm.tools import Field, Progress, Tool, ToolOutput

__all__ = ["shell_tool"]

KILL_GRACE = 2.0


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _stop(process: anyio.abc.Process) -> None:
    """End the command's whole process group: SIGTERM, then SIGKILL after a grace period."""
    _signal_group(process.pid, signal.SIGTERM)
    if process.returncode is None:
        with anyio.move_on_after(KILL_GRACE):
            await process.wait()
    _signal_group(process.pid, signal.SIGKILL)
    if process.returncode is None:
        await process.wait()


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head, tail = text[: limit // 2], text[-limit // 2 :]
    return f"{head}\n[… {len(text) - limit:,} characters cut …]\n{tail}"


def shell_tool(workspace: Workspace, *, timeout: float, output_limit: int) -> Tool[None]:
    """The ``shell`` tool of ``workspace``."""

    async def shell(
        progress: Progress,
        command: Annotated[str, Field(description="The command line, run by bash.")],
        timeout_seconds: Annotated[
            float, Field(description="Stop the command after this many seconds.", ge=1)
        ] = timeout,
    ) -> ToolOutput:
        process = await anyio.open_process(
            ["bash", "-c", command],
            cwd=workspace.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, killed as a whole
        )
        chunks: list[str] = []
        limit = min(timeout_seconds, timeout)
        drained = anyio.Event()

        async def read_output() -> None:
            assert process.stdout is not None
            try:
                async for data in process.stdout:
                    text = data.decode("utf-8", "replace")
                    chunks.append(text)
                    progress(text, "stdout")
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass
            finally:
                drained.set()

        try:
            async with anyio.create_task_group() as group:
                group.start_soon(read_output)
                with anyio.move_on_after(limit) as deadline:
                    await process.wait()
                # Whatever the command left running (background jobs) goes with it; its
                # output pipe then closes. A process that left the group may keep the
                # pipe open, so reading stops after a grace period.
                await _stop(process)
                with anyio.move_on_after(KILL_GRACE):
                    await drained.wait()
                group.cancel_scope.cancel()
            timed_out = deadline.cancelled_caught
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process)
                await process.aclose()
        output = _cap("".join(chunks), output_limit)
        code = process.returncode
        if timed_out:
            status = f"timed out after {limit:g}s; the command was killed"
        else:
            status = f"exit code {code}"
        text = f"{output.rstrip()}\n[{status}]" if output.strip() else f"[{status}, no output]"
        return ToolOutput(text, details={"exit_code": code, "timed_out": timed_out})

    return Tool(
        "shell",
        shell,
        "Run a shell command (bash) in the workspace. stdout and stderr come back together"
        " with the exit code; long output is cut in the middle.",
    )
