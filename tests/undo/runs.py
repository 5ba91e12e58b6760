"""What the undo tests share: a tree hash of a workspace (``.git`` included), and a
scenario run with a scripted model."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import anyio
import yaml

from swarm.record.outcome import RunOutcome
from swarm.scenario import load_scenario, run_scenario

ROOT = Path(__file__).parents[2]
SHIPPED_TEAM = ROOT / "roles"
GIT = ["git", "-c", "user.name=dev", "-c", "user.email=dev@example.invalid"]


def tree_hash(root: Path, *, unread: frozenset[str] = frozenset()) -> str:
    """A hash of everything under ``root`` (``.git`` included): each path with its kind,
    mode, bytes or link target. ``.swarm`` is left out: swarm's own directory, read-only
    to every tool (the sandbox makes its mount points there). The bytes of ``unread``
    paths (relative) are left out too."""
    digest = hashlib.sha256()
    for top, dirs, files in os.walk(root):
        dirs.sort()
        if Path(top) == root and ".swarm" in dirs:
            dirs.remove(".swarm")
        for name in sorted(dirs + files):
            path = Path(top, name)
            info = path.lstat()
            rel = path.relative_to(root).as_posix()
            digest.update(
                f"{rel}\0{stat.S_IFMT(info.st_mode)}\0{info.st_mode & 0o7777:o}\0".encode()
            )
            if stat.S_ISLNK(info.st_mode):
                digest.update(os.readlink(path).encode())
            elif stat.S_ISREG(info.st_mode) and rel not in unread:
                digest.update(path.read_bytes())
    return digest.hexdigest()


def git(workspace: Path, *args: str) -> str:
    """Run git in ``workspace``; its output."""
    done = subprocess.run([*GIT, *args], cwd=workspace, check=True, capture_output=True, text=True)
    return done.stdout


def scenario_file(
    tmp_path: Path,
    script: dict[str, list[dict[str, Any]]],
    *,
    team: Path | str = SHIPPED_TEAM,
    policy: str = "name: open\ndefault: allow\n",
) -> Path:
    """A scenario in ``tmp_path`` running ``team`` with a scripted model and ``policy``."""
    (tmp_path / "policy.yaml").write_text(policy)
    scenario = {
        "name": "undo",
        "team": str(team),
        "task": "Work.",
        "policy": "policy.yaml",
        "model": {"script": script},
    }
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(scenario))
    return path


def run(scenario: Path, workspace: Path, runs: Path) -> RunOutcome:
    """Run ``scenario`` in ``workspace`` with its record under ``runs``."""

    async def go() -> RunOutcome:
        return await run_scenario(load_scenario(scenario), workspace=workspace, runs_dir=runs)

    return anyio.run(go)


def finishes(record: Path) -> list[dict[str, Any]]:
    """The audit log's finish records."""
    lines = (record / "audit.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("event") == "finish"]


def shell(command: str) -> dict[str, Any]:
    """A scripted shell call."""
    return {"call": "shell", "args": {"command": command}}


def team(tmp_path: Path, **roles: str) -> Path:
    """A team directory of roles given as name=tools (``dev="shell, write_file"``)."""
    directory = tmp_path / "team"
    directory.mkdir()
    for name, tools in roles.items():
        (directory / f"{name}.yaml").write_text(
            f"name: {name}\ndescription: The {name}.\nsystem: You work.\ntools: [{tools}]\n"
        )
    return directory
