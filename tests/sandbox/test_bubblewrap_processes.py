"""bubblewrap: nothing a command starts outlives the call, however it detaches: when the
command ends, times out, or the call is cancelled. Checked by looking for a unique marker
in the command lines of every process on the machine after the call returns."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from swarm import Progress, SandboxSettings, Tool
from swarm.sandbox import Bubblewrap
from swarm.toolbox import make_toolbox

from .conftest import run, text

Running = Callable[[str], list[int]]

DETACHED = {
    "background": "sleep {m} &",
    "setsid": "setsid sleep {m} &",
    "setsid fork": "setsid -f sleep {m}",
    "double fork": "(sleep {m} &) &",
    "nohup": "nohup sleep {m} > /dev/null 2>&1 &",
    "disown": "sleep {m} & disown",
    "python daemon": (
        'python3 -c "import os, subprocess\nif os.fork() == 0:\n    os.setsid()\n'
        "    subprocess.Popen(['sleep', '{m}'], start_new_session=True)\""
    ),
}


@pytest.mark.anyio
@pytest.mark.parametrize("how", DETACHED)
async def test_nothing_outlives_a_command_that_ends(
    shell: Tool[Any], running: Running, marker: str, how: str
) -> None:
    out = await run(shell, DETACHED[how].format(m=marker) + "\necho started")
    assert "started" in text(out)
    assert running(marker) == []


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["setsid", "double fork", "python daemon"])
async def test_nothing_outlives_a_timeout(
    bwrap: Bubblewrap, ws: Path, running: Running, marker: str, how: str
) -> None:
    shell = make_toolbox(ws, shell_timeout=1, sandbox=SandboxSettings(mode="required"))["shell"]
    out = await run(shell, DETACHED[how].format(m=marker) + f"\nsleep {marker}")
    assert "timed out after 1s" in text(out)
    assert running(marker) == []


@pytest.mark.anyio
async def test_nothing_outlives_a_cancelled_call(
    shell: Tool[Any], running: Running, marker: str
) -> None:
    command = f"setsid sleep {marker} & (sleep {marker} &) & echo started; sleep {marker}"
    arguments = shell.validate({"command": command})
    started = anyio.Event()

    def output(key: str, text: str) -> None:
        started.set()

    async with anyio.create_task_group() as group:
        group.start_soon(lambda: shell.execute(arguments, progress=Progress("c", "shell", output)))
        await started.wait()
        assert running(marker) != []
        group.cancel_scope.cancel()
    assert running(marker) == []


@pytest.mark.anyio
async def test_a_command_ignoring_sigterm_in_its_own_session_is_gone_after_a_timeout(
    bwrap: Bubblewrap, ws: Path, running: Running, marker: str
) -> None:
    shell = make_toolbox(ws, shell_timeout=1, sandbox=SandboxSettings(mode="required"))["shell"]
    await run(shell, f"setsid bash -c \"trap '' TERM HUP; sleep {marker}\" & wait")
    assert running(marker) == []
