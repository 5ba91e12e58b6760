"""Fixtures for the sandbox tests: a workspace, places outside it, and a shell tool that
must run in bubblewrap.

A bwrap test is skipped only where bubblewrap is missing and the variable CI is unset: in
CI a missing bubblewrap fails the tests.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swarm import SandboxSettings, SandboxUnavailable, Tool, ToolOutput
from swarm.sandbox import Bubblewrap, Confinement, SandboxFinder, find_sandbox, probe_bubblewrap
from swarm.sandbox.base import Sandbox
from swarm.toolbox import make_toolbox
from swarm.toolbox.shell import LAUNCH_ATTEMPTS


def tier_finder(tier: str) -> SandboxFinder:
    """A finder that uses only ``tier``; skips the test where it does not work (never in
    CI, where bubblewrap is installed and the kernel has Landlock)."""
    find = functools.partial(find_sandbox, tiers=(tier,))
    try:
        find(SandboxSettings(mode="required"))
    except SandboxUnavailable as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"the {tier} sandbox does not work here: {exc}")
    return find


def run_launched(
    sandbox: Sandbox | Bubblewrap, argv: tuple[str, ...], confinement: Confinement
) -> subprocess.CompletedProcess[str]:
    """``argv`` launched in ``sandbox`` and run to its end (no input, its output as text,
    at most 60 s), launched again as the shell tool does when the sandbox failed in its
    set-up before the command began: another test planting a file in ``/etc`` and
    removing it between bubblewrap's listing and its mount fails one set-up, and ran
    nothing."""
    for _ in range(LAUNCH_ATTEMPTS):
        with sandbox.launch(argv, confinement) as launch:
            done = subprocess.run(
                launch.argv,
                env=dict(launch.env),
                cwd=launch.cwd,
                pass_fds=launch.pass_fds,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            if launch.began is None or launch.began():
                return done
    return done


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


def _outside_private(path: Path) -> bool:
    """Whether ``path`` lies outside what every tier empties or hides (/tmp, the home)."""
    hidden = [Path(p) for p in ("/tmp", "/var/tmp", "/dev/shm", "/run", "/root", "/home")]
    hidden.append(Path.home().resolve())
    return not any(path == h or h in path.parents for h in hidden)


@pytest.fixture
def elsewhere() -> Iterator[Path]:
    """A directory outside /tmp and the home, with a file in it: only the read-only bind
    of / keeps commands from writing there. Below the working directory (the repository
    in a test run) unless that is in /tmp or the home, else in /srv or /mnt (which no
    shipped policy names)."""
    candidates = [Path.cwd().resolve(), Path("/srv"), Path("/mnt")]
    for base in candidates:
        if _outside_private(base) and os.access(base, os.W_OK):
            break
    else:
        if os.environ.get("CI"):
            raise AssertionError("no writable directory outside /tmp and the home")
        pytest.skip("no writable directory outside /tmp and the home to test against")
    path = Path(tempfile.mkdtemp(prefix=".sandbox-test-", dir=base)).resolve()
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
