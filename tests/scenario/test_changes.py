"""What a run did to its workspace: files added, changed and deleted, with diffs."""

from __future__ import annotations

import os
from pathlib import Path

from swarm.scenario.changes import WorkspaceChanges, snapshot, workspace_changes


def test_added_changed_and_deleted_files_with_diffs(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("same\n")
    (tmp_path / "edit.py").write_text("x = 1\n")
    (tmp_path / "gone.txt").write_text("bye\n")
    before = snapshot(tmp_path)
    (tmp_path / "edit.py").write_text("x = 2\n")
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "new.py").write_text("y = 1\n")
    changes = workspace_changes(before, snapshot(tmp_path))
    assert [(c.path, c.kind) for c in changes.files] == [
        ("edit.py", "changed"),
        ("gone.txt", "deleted"),
        ("pkg/new.py", "added"),
    ]
    edit = changes.files[0].diff
    assert "-x = 1\n" in edit and "+x = 2\n" in edit
    assert "+++ /dev/null" in changes.files[1].diff and "-bye" in changes.files[1].diff
    assert WorkspaceChanges.from_dict(changes.to_dict()) == changes


def test_a_link_out_of_the_workspace_is_listed_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("TOP SECRET\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    before = snapshot(workspace)
    (workspace / "peek").symlink_to(outside)
    changes = workspace_changes(before, snapshot(workspace))
    assert [(c.path, c.kind) for c in changes.files] == [("peek", "added")]
    assert "TOP SECRET" not in changes.files[0].diff


def test_a_named_pipe_does_not_hang_the_snapshot(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")  # an open() that blocks would never return here
    (tmp_path / "a.txt").write_text("a")
    taken = snapshot(tmp_path)
    assert set(taken.digests) == {"pipe", "a.txt"} and "pipe" not in taken.texts


def test_git_internals_are_left_out(tmp_path: Path) -> None:
    before = snapshot(tmp_path)
    (tmp_path / ".git" / "objects").mkdir(parents=True)
    (tmp_path / ".git" / "objects" / "ab").write_bytes(b"\0blob")
    (tmp_path / "work.txt").write_text("done\n")
    assert [c.path for c in workspace_changes(before, snapshot(tmp_path)).files] == ["work.txt"]


def test_binary_files_change_without_a_diff(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\xff\x00\x01")
    before = snapshot(tmp_path)
    (tmp_path / "blob.bin").write_bytes(b"\xff\x00\x02")
    (change,) = workspace_changes(before, snapshot(tmp_path)).files
    assert (change.path, change.kind, change.diff) == ("blob.bin", "changed", "")
