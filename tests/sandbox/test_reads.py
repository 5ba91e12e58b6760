"""Both Linux tiers: a shell command reads only what its work needs (reads confined, the
default of every policy). Secrets planted by the test where the issue found them (a
sibling project's ``.env``, a key in the workspace's parent, a 0600 file in ``/etc``,
keys under ``/var/lib`` and ``/opt``) never reach the text the model gets; with
``read: host`` they do, so the test can tell."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swarm import SandboxSettings
from swarm.guards._sandboxing import SandboxFile, merge_sandbox
from swarm.toolbox import make_toolbox

from .conftest import run, text, tier_finder

TIERS = ["bubblewrap", "landlock"]
pytestmark = pytest.mark.anyio


@pytest.fixture
def project(elsewhere: Path) -> Path:
    """A workspace outside /tmp and the home, with a sibling project and a key beside it."""
    workspace = elsewhere / "project"
    workspace.mkdir()
    (workspace / "mine.txt").write_text("my own file\n")
    sibling = elsewhere / "sibling"
    sibling.mkdir()
    (sibling / ".env").write_text(f"API_KEY=sibling-{uuid.uuid4().hex}\n")
    (elsewhere / "deploy.pem").write_text(f"parent-key-{uuid.uuid4().hex}\n")
    return workspace


@pytest.fixture
def planted() -> Iterator[dict[str, str]]:
    """Secrets in /etc (mode 0600), /var/lib and /opt, removed afterwards: path -> text."""
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            raise AssertionError("CI runs as root: the test plants files in /etc")
        pytest.skip("needs root to plant files in /etc, /var/lib and /opt")
    tag = uuid.uuid4().hex[:12]
    made: list[Path] = []
    secrets: dict[str, str] = {}
    try:
        etc = Path(f"/etc/swarm-test-{tag}.key")
        etc.write_text(f"etc-secret-{tag}\n")
        etc.chmod(0o600)
        made.append(etc)
        secrets[str(etc)] = f"etc-secret-{tag}"
        for base in ("/var/lib", "/opt"):
            directory = Path(base) / f"swarm-test-{tag}"
            directory.mkdir(parents=True)
            made.append(directory)
            (directory / "id.key").write_text(f"{base}-secret-{tag}\n")
            secrets[str(directory / "id.key")] = f"{base}-secret-{tag}"
        yield secrets
    finally:
        for path in made:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def shell_in(tier: str, workspace: Path, settings: SandboxSettings) -> Any:
    """The shell tool confined by ``tier`` (skipped, never in CI, where it does not work)."""
    find = tier_finder(tier)
    return make_toolbox(workspace, sandbox=settings, find=find)["shell"]


def confined(**sandbox: Any) -> SandboxSettings:
    """Settings as a policy's ``sandbox:`` key gives them, with the sandbox required."""
    merged = merge_sandbox(SandboxFile(mode="required", **sandbox), None)
    assert merged is not None
    return merged


def cat_all(paths: list[str]) -> str:
    return "; ".join(f"cat '{p}' 2>&1" for p in paths) + "; true"


@pytest.mark.parametrize("tier", TIERS)
async def test_sibling_project_and_parent_key_unreadable(tier: str, project: Path) -> None:
    shell = shell_in(tier, project, confined())
    sibling = project.parent / "sibling" / ".env"
    key = project.parent / "deploy.pem"
    out = text(await run(shell, cat_all([str(sibling), str(key), "mine.txt"])))
    assert "my own file" in out  # the workspace itself is read
    assert sibling.read_text().strip() not in out
    assert key.read_text().strip() not in out
    listing = text(await run(shell, "ls -a .. 2>&1; true"))
    assert "sibling" not in listing and "deploy.pem" not in listing


@pytest.mark.parametrize("tier", TIERS)
async def test_planted_system_secrets_unreadable(
    tier: str, project: Path, planted: dict[str, str]
) -> None:
    shell = shell_in(tier, project, confined())
    out = text(await run(shell, cat_all(list(planted))))
    for secret in planted.values():
        assert secret not in out
    listing = text(await run(shell, "ls /opt /var/lib /srv /mnt /media 2>&1; true"))
    assert "swarm-test-" not in listing


@pytest.mark.parametrize("tier", TIERS)
async def test_read_host_reads_them(tier: str, project: Path, planted: dict[str, str]) -> None:
    shell = shell_in(tier, project, confined(read="host"))
    sibling = project.parent / "sibling" / ".env"
    out = text(await run(shell, cat_all([*planted, str(sibling)])))
    for secret in planted.values():
        assert secret in out
    assert sibling.read_text().strip() in out


@pytest.mark.parametrize("tier", TIERS)
async def test_paths_the_policy_names_are_readable(tier: str, project: Path) -> None:
    sibling = project.parent / "sibling"
    shell = shell_in(tier, project, confined(read=[str(sibling)]))
    out = text(
        await run(shell, cat_all([str(sibling / ".env"), str(project.parent / "deploy.pem")]))
    )
    assert (sibling / ".env").read_text().strip() in out
    assert (project.parent / "deploy.pem").read_text().strip() not in out


@pytest.mark.parametrize("tier", TIERS)
async def test_ordinary_system_files_stay_readable(tier: str, project: Path) -> None:
    shell = shell_in(tier, project, confined())
    out = text(await run(shell, "head -1 /etc/passwd; ls /usr/bin | grep -c . ; git --version"))
    assert out.startswith("root:")
    assert "git version" in out


def test_read_paths_must_be_absolute() -> None:
    with pytest.raises(ValueError, match="not an absolute path"):
        SandboxFile(read=["data/shared"])
    with pytest.raises(ValueError, match="read: host"):
        SandboxFile(read=["/"])
