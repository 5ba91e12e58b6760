"""Fixtures for the sandbox tests: a workspace, places outside it, and a shell tool that
must run in bubblewrap.

A bwrap test is skipped only where bubblewrap is missing and the variable CI is unset: in
CI a missing bubblewrap fails the tests.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swarm import SandboxSettings, SandboxUnavailable, Tool, ToolOutput
from swarm.sandbox import Bubblewrap, probe_bubblewrap
from swarm.toolbox import make_toolbox


@pytest.fixture
def bwrap() -> Bubblewrap:
    """The bubblewrap tier of this machine."""
    try:
        return probe_bubblewrap()
    except SandboxUnavailable as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"bubblewrap does not work here ({exc}); CI installs it")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The workspace: under /tmp (as tmp_path is), so it must be bound after the private
    /tmp is mounted."""
    path = Path(os.path.realpath(tmp_path)) / "ws"
    path.mkdir()
    return path


@pytest.fixture
def beside(tmp_path: Path) -> Path:
    """A directory next to the workspace, with a file in it."""
    path = Path(os.path.realpath(tmp_path)) / "outside"
    path.mkdir()
    (path / "keep.txt").write_text("original\n")
    return path


@pytest.fixture
def elsewhere() -> Iterator[Path]:
    """A directory outside /tmp and the home (below the working directory, the
    repository in a test run), with a file in it: only the read-only bind of / keeps
    commands from writing there."""
    path = Path(tempfile.mkdtemp(prefix=".sandbox-test-", dir=Path.cwd())).resolve()
    (path / "keep.txt").write_text("original\n")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def shell(bwrap: Bubblewrap, ws: Path) -> Tool[Any]:
    """The shell tool, sandbox required, no network."""
    return make_toolbox(ws, sandbox=SandboxSettings(mode="required"))["shell"]


async def run(shell: Tool[Any], command: str, **arguments: Any) -> ToolOutput:
    """Call ``shell`` as the loop does."""
    return await shell.execute(shell.validate({"command": command, **arguments}))


def text(out: ToolOutput) -> str:
    """What the model reads of a result."""
    assert isinstance(out.content, str)
    return out.content
