"""Both Linux tiers: paths a run protects (``Confinement.readonly``: role files, policies,
``.git/config``, ``.git/hooks``) stay read-only inside the writable workspace, files and
directories alike, and one that does not exist at launch does not stop the command."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swarm.sandbox import Confinement, SandboxSettings

from .conftest import run_launched, tier_finder

PATH = "/usr/local/bin:/usr/bin:/bin"
TIERS = ["bubblewrap", "landlock"]


def run_in(tier: str, confinement: Confinement, script: str) -> subprocess.CompletedProcess[str]:
    sandbox = tier_finder(tier)(SandboxSettings(mode="required"))
    return run_launched(sandbox, ("sh", "-c", script), confinement)


@pytest.fixture
def repo(ws: Path) -> Path:
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (ws / "roles").mkdir()
    (ws / "roles" / "dev.yaml").write_text("name: dev\n")
    return ws


@pytest.mark.parametrize("tier", TIERS)
def test_readonly_files_and_directories_cannot_change(tier: str, repo: Path) -> None:
    protected = (repo / ".git" / "config", repo / ".git" / "hooks", repo / "roles" / "dev.yaml")
    confinement = Confinement(repo, env={"PATH": PATH}, readonly=protected)
    script = (
        "printf '[core]\\n\\tfsmonitor = touch /tmp/x\\n' >> .git/config;"
        " printf '#!/bin/sh\\n' > .git/hooks/pre-commit;"
        " echo 'policy: open' > roles/dev.yaml;"
        " mv roles/dev.yaml roles/moved.yaml; rm -f .git/config;"
        " echo other > roles/other.yaml; echo done"
    )
    ran = run_in(tier, confinement, script)
    assert "done" in ran.stdout, ran.stderr
    assert (repo / ".git" / "config").read_text() == "[core]\n\tbare = false\n"
    assert list((repo / ".git" / "hooks").iterdir()) == []
    assert (repo / "roles" / "dev.yaml").read_text() == "name: dev\n"
    assert (repo / "roles" / "other.yaml").read_text() == "other\n"  # the rest is writable


@pytest.mark.parametrize("tier", TIERS)
def test_a_readonly_path_missing_at_launch_does_not_stop_the_command(tier: str, ws: Path) -> None:
    confinement = Confinement(
        ws, env={"PATH": PATH}, readonly=(ws / ".git" / "config", ws / ".mcp.json")
    )
    ran = run_in(tier, confinement, "echo ran > out.txt")
    assert ran.returncode == 0, ran.stderr
    assert (ws / "out.txt").read_text() == "ran\n"
    assert not (ws / ".git").exists() and not (ws / ".mcp.json").exists()
