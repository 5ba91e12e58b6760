"""Driving the ``swarm`` command as a user would: a subprocess, real files."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from swarm_command import run_swarm

REPO = Path(__file__).parents[2]


class Swarm:
    """Runs ``swarm`` in a working directory and returns the finished process."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def __call__(
        self,
        *args: str | Path,
        timeout: float = 120,
        columns: int = 200,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """``columns`` is the width rich assumes for output that is not a terminal; ``env``
        adds to (or replaces) variables of the environment."""
        return run_swarm(
            args,
            cwd=self.cwd,
            timeout=timeout,
            env={**clean_env(), "COLUMNS": str(columns), **(env or {})},
        )

    def start(self, *args: str | Path) -> subprocess.Popen[str]:
        """Start ``swarm`` as a terminal would, Ctrl-C included: a job started in the
        background by a shell ignores SIGINT, and its children would inherit that."""
        return subprocess.Popen(
            [sys.executable, "-m", "swarm", *map(str, args)],
            cwd=self.cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=clean_env(),
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["PYTHONUNBUFFERED"] = "1"
    env["COLUMNS"] = "200"
    return env


@pytest.fixture
def swarm(tmp_path: Path) -> Swarm:
    return Swarm(tmp_path)


@pytest.fixture
def runs(state_home: Path) -> Path:
    """Where ``swarm run`` writes run records in a test (see ``state_home``)."""
    return state_home / "swarm" / "runs"


@pytest.fixture
def examples() -> Path:
    return REPO / "examples"


@pytest.fixture
def roles() -> Path:
    return REPO / "roles"
