"""Both Linux tiers: the machine's root-only secrets (``/etc/shadow``, SSH host keys, ...)
never reach a command, checked by content against what swarm itself reads on the host."""

from __future__ import annotations

import base64
import functools
import os
from pathlib import Path

import pytest

from swarm.sandbox import Confinement, SandboxSettings

from .conftest import run_launched, tier_finder

PATH = "/usr/local/bin:/usr/bin:/bin"
ROOT_SECRETS = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
)


def secret_files() -> list[Path]:
    """Every file of ``ROOT_SECRETS`` on this machine (what is inside the directories too)."""
    found = []
    for name in ROOT_SECRETS:
        path = Path(name)
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            for top, _dirs, files in os.walk(path):
                found += [Path(top, f) for f in files if Path(top, f).is_file()]
    return found


def must_be_hidden(path: Path) -> bool:
    """As root every file is hidden; otherwise those this user cannot read stay unreadable."""
    return os.geteuid() == 0 or not os.access(path, os.R_OK)


def run_in(tier: str, workspace: Path, script: str) -> str:
    """``script`` run by ``sh`` in ``tier`` (skipped, never in CI, where it does not work)."""
    settings = SandboxSettings(mode="required")
    sandbox = tier_finder(tier)(settings)
    confinement = Confinement(workspace, env={"PATH": PATH})
    return run_launched(sandbox, ("sh", "-c", script), confinement).stdout


@functools.cache
def host_files() -> tuple[Path, ...]:
    files = tuple(secret_files())
    assert files, "no file of ROOT_SECRETS here: /etc/shadow at least should exist"
    return files


@pytest.mark.parametrize("tier", ["bubblewrap", "landlock"])
def test_root_only_secrets_read_as_nothing(tier: str, tmp_path: Path) -> None:
    files = host_files()
    script = "; ".join(f"echo; cat '{f}' 2>/dev/null | base64 -w0" for f in files)
    lines = run_in(tier, tmp_path, script + "; echo").split("\n")[1:-1]
    inside = dict(zip(files, (base64.b64decode(line) for line in lines), strict=True))
    hidden = [f for f in files if must_be_hidden(f)]
    assert hidden
    for path in hidden:
        host = path.read_bytes() if os.access(path, os.R_OK) else None
        assert inside[path] == b"", f"{path} is readable in {tier}"
        assert host is None or host == b"" or host not in inside[path]


@pytest.mark.parametrize("tier", ["bubblewrap", "landlock"])
def test_root_only_secret_directories_list_as_empty(tier: str, tmp_path: Path) -> None:
    directories = [d for d in ROOT_SECRETS if Path(d).is_dir() and must_be_hidden(Path(d))]
    assert directories, "no directory of ROOT_SECRETS here: /etc/ssl/private at least"
    if os.geteuid() == 0:
        assert any(os.listdir(d) for d in directories), "nothing in them to hide here"
    script = "; ".join(f"ls -A '{d}' 2>/dev/null" for d in directories)
    assert run_in(tier, tmp_path, script) == ""
