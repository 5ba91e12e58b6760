"""Shared fixtures: every async test runs on asyncio through anyio's pytest plugin, and no
test writes run records into the real home (``XDG_STATE_HOME`` points into a temporary
directory).

The suite runs in parallel (``pytest -n auto --dist loadgroup``), so tests share nothing:
each has its own directories and ports. What is costly to start is shared within one
worker: the local model's server (one per session) and Ray (one per module) run their
tests in one group each, so one server and one Ray run at a time, as in a serial run.
Those tests, with the other end-to-end ones, are ``slow``: ``-m "not slow"`` is the fast
layer.
"""

import os
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

# the group of tests that must share a worker, by the marker that says what they start
_GROUPS = {"local_model": "local_model", "ray": "ray"}


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests on the local model or on Ray are slow and run in their group's worker."""
    grouped = config.pluginmanager.hasplugin("xdist")  # `-p no:xdist` knows no groups
    for item in items:
        for marker, group in _GROUPS.items():
            if item.get_closest_marker(marker) is not None:
                item.add_marker(pytest.mark.slow)
                if grouped:
                    item.add_marker(pytest.mark.xdist_group(group))


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
