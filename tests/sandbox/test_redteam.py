"""Red-team findings against the merged issue 25: each test reproduces an attack through
the real shell tool and checks its effect on the host."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .test_protected_paths import _shell, repo, tier  # noqa: F401  (fixtures)

__all__: list[str] = []


def _user_git_status(repo: Path) -> None:
    """What the user types after the run, on the host, unconfined."""
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, timeout=60, check=False)


def test_a_nested_repository_cannot_plant_a_command_the_users_git_status_runs(
    repo: Path, tmp_path: Path, tier: str
) -> None:
    # A nested repository registered in the top index as a submodule (a gitlink): the
    # user's `git status` in the workspace runs `git status` in it, with its config.
    marker = tmp_path / "pwned"
    ident = "-c user.name=a -c user.email=a@b.invalid"
    command = (
        "mkdir sub && cd sub && git init -q"
        f" && git {ident} commit -q --allow-empty -m s"
        f" && git config core.fsmonitor 'touch {marker}; false' && cd .."
        " && git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub"
    )
    said = _shell(repo, tier, tmp_path / "evidence")(command)
    _user_git_status(repo)
    assert not marker.exists(), said
