"""The ``protect:`` key of a policy: checked where it is written, inherited through
``extend``, and what it covers."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from swarm.errors import ConfigError
from swarm.guards.policy import load_policy
from swarm.guards.protect import ProtectedPaths, git_controls


def test_protect_globs_are_inherited_through_extend(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("default: allow\nprotect: [deploy/**]\n")
    (tmp_path / "team.yaml").write_text("extend: base\nprotect: [Makefile]\n")
    policy = load_policy(tmp_path / "team.yaml")
    assert policy.protect == ("deploy/**", "Makefile")
    assert policy.files == (tmp_path / "base.yaml", tmp_path / "team.yaml")


@pytest.mark.parametrize("glob", ["/etc/passwd", "../outside", "a/../../b", ""])
def test_a_protect_glob_outside_the_workspace_is_an_error_naming_the_line(
    tmp_path: Path, glob: str
) -> None:
    (tmp_path / "p.yaml").write_text(f"default: allow\nprotect:\n  - {glob!r}\n")
    with pytest.raises(ConfigError) as caught:
        load_policy(tmp_path / "p.yaml")
    assert f"{tmp_path / 'p.yaml'}:3" in str(caught.value)
    assert "relative to the workspace" in str(caught.value)


def test_protect_swarm_false_is_kept_unless_an_extending_policy_sets_it(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("default: allow\nprotect_swarm: false\n")
    (tmp_path / "child.yaml").write_text("extend: base\n")
    (tmp_path / "strict.yaml").write_text("extend: base\nprotect_swarm: true\n")
    assert load_policy(tmp_path / "child.yaml").protect_swarm is False
    assert load_policy(tmp_path / "strict.yaml").protect_swarm is True
    assert load_policy("default").protect_swarm is True


def test_a_glob_covers_what_lies_below_what_it_matches(tmp_path: Path) -> None:
    ws = Path(os.path.realpath(tmp_path))
    paths = ProtectedPaths(ws, globs=("deploy/*.sh", "secrets"))
    assert paths.covers(ws / "deploy" / "run.sh")
    assert paths.covers(ws / "secrets" / "deep" / "key")
    assert not paths.covers(ws / "deploy" / "README")
    assert not paths.covers(ws / "src" / "secrets.py")


def test_a_dot_git_file_protects_where_it_points(tmp_path: Path) -> None:
    ws = Path(os.path.realpath(tmp_path)) / "wt"
    main = Path(os.path.realpath(tmp_path)) / "main" / ".git"
    (main / "worktrees" / "wt").mkdir(parents=True)
    (main / "worktrees" / "wt" / "commondir").write_text("../..\n")
    ws.mkdir()
    (ws / ".git").write_text(f"gitdir: {main / 'worktrees' / 'wt'}\n")
    found = set(git_controls(ws))
    assert {
        ws / ".git",
        main / "config",
        main / "hooks",
        main / "worktrees" / "wt" / "config",
    } <= found


def test_the_file_tools_refuse_protected_paths_with_no_guard_at_all(tmp_path: Path) -> None:
    import anyio

    from swarm.errors import ToolError
    from swarm.toolbox import make_toolbox

    ws = Path(os.path.realpath(tmp_path))
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n")
    tools = make_toolbox(ws, readonly=ProtectedPaths.of_run(ws, globs=("deploy/**",)))
    write, edit = tools["write_file"], tools["edit_file"]

    async def attempt(tool: object, **arguments: str) -> str:
        try:
            await tool.execute(tool.validate(arguments))  # type: ignore[attr-defined]
        except ToolError as exc:
            return str(exc)
        return "written"

    async def go() -> list[str]:
        return [
            await attempt(write, path=".git/config", content="[core]\n\tfsmonitor = x\n"),
            await attempt(write, path=".git/hooks/pre-commit", content="#!/bin/sh\n"),
            await attempt(edit, path=".git/config", old_text="[core]", new_text="[x]"),
            await attempt(write, path="deploy/run.sh", content="x"),
            await attempt(write, path="src/app.py", content="x"),
        ]

    said = anyio.run(go)
    assert all("is protected" in s for s in said[:4]) and said[4] == "written"
    assert (ws / ".git" / "config").read_text() == "[core]\n"
    assert not (ws / ".git" / "hooks").exists() and not (ws / "deploy").exists()


@pytest.mark.parametrize("version", [2, 3, 4])
def test_submodules_are_found_in_every_index_version(tmp_path: Path, version: int) -> None:
    from swarm.guards.protect import gitlinks, submodule_controls

    repo = tmp_path / "repo"
    git = ["git", "-C", str(repo), "-c", "user.name=a", "-c", "user.email=a@b.invalid"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for name in ("a.txt", "deep/dir/b.txt", "deep/dir/c.txt"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(name)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    for path in ("deep/dir/mod", "zz/other"):
        cacheinfo = f"160000,{head.stdout.strip()},{path}"
        subprocess.run([*git, "update-index", "--add", "--cacheinfo", cacheinfo], check=True)
    subprocess.run([*git, "update-index", "--index-version", str(version)], check=True)
    index = (repo / ".git" / "index").read_bytes()
    assert gitlinks(index) == ["deep/dir/mod", "zz/other"]
    assert repo / "deep/dir/mod/.git/config" in submodule_controls(repo)
    assert gitlinks(b"not an index") == [] and gitlinks(index[:40]) == []


def test_a_fifo_in_place_of_the_index_does_not_hang_the_look_for_submodules(tmp_path: Path) -> None:
    from swarm.guards.protect import submodule_controls

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".git" / "index").unlink(missing_ok=True)
    os.mkfifo(repo / ".git" / "index")  # opening it to read would wait for a writer
    assert submodule_controls(repo) == ()


def test_saving_originals_never_reads_through_a_link_a_command_swapped_in(tmp_path: Path) -> None:
    from swarm.guards.protect import ProtectedPaths

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    outside = tmp_path / "outside"
    (outside / "hooks").mkdir(parents=True)
    (outside / "hooks" / "secret").write_text("outside secret\n")
    protected = ProtectedPaths.of_run(repo)
    # what a command without a sandbox could do meanwhile: .git made a link to outside
    (repo / ".git").rename(tmp_path / "git-old")
    (repo / ".git").symlink_to(outside)
    protected.save()
    assert all(b"outside secret" not in data for data, _mode in protected.originals.values())
