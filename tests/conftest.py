"""Shared fixtures: every async test runs on asyncio through anyio's pytest plugin, and no
test writes run records into the real home (``XDG_STATE_HOME`` points into a temporary
directory)."""

import os
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _running(marker: str) -> list[int]:
    """PIDs of this machine's running processes whose command line holds ``marker``
    (zombies left out: they have no command line)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


@pytest.fixture
def running() -> Callable[[str], list[int]]:
    """Find running processes by a unique marker in their command line, as the host sees
    them (PIDs inside a sandbox's PID namespace mean nothing outside it)."""
    if not os.path.isdir("/proc"):
        pytest.skip("needs /proc to see processes")
    return _running


@pytest.fixture
def marker() -> str:
    """A unique number to put in a command line, e.g. ``sleep {marker}``."""
    return f"300.{uuid.uuid4().int % 10**12:012d}"


@pytest.fixture(autouse=True)
def state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private ``XDG_STATE_HOME``: run records go to ``<it>/swarm/runs``."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return state
