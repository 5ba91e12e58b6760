"""The ``protect:`` key of a policy: checked where it is written, inherited through
``extend``, and what it covers."""

from __future__ import annotations

import os
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
