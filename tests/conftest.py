"""Shared fixtures: every async test runs on asyncio through anyio's pytest plugin, and no
test writes run records into the real home (``XDG_STATE_HOME`` points into a temporary
directory)."""

from pathlib import Path

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private ``XDG_STATE_HOME``: run records go to ``<it>/swarm/runs``."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return state
