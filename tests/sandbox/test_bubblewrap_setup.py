"""bubblewrap: a sandbox whose set-up fails before the command begins (a file of /etc
hidden by mode, removed between the listing and the mount) is set up once more; the
command runs once, or not at all, and is never taken for having run."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from swarm import Progress, Tool, ToolError
from swarm.sandbox import bubblewrap
from swarm.toolbox.shell import LAUNCH_ATTEMPTS

from .conftest import run, text


def vanishing(monkeypatch: pytest.MonkeyPatch, failures: int) -> list[str]:
    """The next ``failures`` launches hide a file of /etc that is gone by the time
    bubblewrap mounts (as a lock file removed at that moment is): the set-up fails."""
    made: list[str] = []
    arguments = bubblewrap.bwrap_arguments

    def racing(*args: Any, **kwargs: Any) -> list[str]:
        options = arguments(*args, **kwargs)
        if len(made) < failures:
            made.append(f"/etc/swarm-test-gone-{uuid.uuid4().hex}.lock")
            options += ["--ro-bind", "/dev/null", made[-1]]
        return options

    monkeypatch.setattr(bubblewrap, "bwrap_arguments", racing)
    return made


@pytest.mark.anyio
async def test_a_set_up_that_failed_is_made_again_and_the_command_runs_once(
    shell: Tool[Any], ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = vanishing(monkeypatch, failures=1)
    out = text(await run(shell, "echo ran >> count.txt; cat count.txt"))
    assert len(made) == 1
    assert out == "ran\n[exit code 0]"
    assert (ws / "count.txt").read_text() == "ran\n"


@pytest.mark.anyio
async def test_a_set_up_that_keeps_failing_is_an_error_and_nothing_ran(
    shell: Tool[Any], ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = vanishing(monkeypatch, failures=5)
    with pytest.raises(ToolError) as caught:
        await run(shell, "echo ran >> count.txt")
    assert len(made) == LAUNCH_ATTEMPTS
    message = str(caught.value)
    assert "could not be set up, so the command did not run" in message
    assert made[-1] in message  # bubblewrap's own words say which mount
    assert not (ws / "count.txt").exists()


@pytest.mark.anyio
async def test_a_command_that_fails_as_bubblewrap_would_is_not_run_again(
    shell: Tool[Any], ws: Path
) -> None:
    """What tells a failed set-up is the gate taking its go, not the command's words."""
    fake = 'echo ran >> count.txt; echo "bwrap: Can\'t create file at /etc/x" >&2; exit 1'
    out = text(await run(shell, fake))
    assert out.endswith("[exit code 1]")
    assert (ws / "count.txt").read_text() == "ran\n"


@pytest.mark.anyio
async def test_the_words_of_a_set_up_that_failed_are_not_shown_as_the_command_s_output(
    shell: Tool[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a person watching the call sees (its progress) is the command's output only:
    bubblewrap's complaint about the mount of the set-up that failed is not in it."""
    made = vanishing(monkeypatch, failures=1)
    shown: list[str] = []
    reporter = Progress("c", "shell", lambda key, delta: shown.append(delta))
    out = await shell.execute(shell.validate({"command": "echo started"}), progress=reporter)
    assert len(made) == 1
    assert text(out) == "started\n[exit code 0]"
    assert "".join(shown) == "started\n"
