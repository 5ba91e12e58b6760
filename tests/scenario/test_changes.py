"""What a run did to its workspace: files added, changed and deleted, with diffs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from swarm.record.changes import SnapshotBudget, WorkspaceChanges, snapshot, workspace_changes


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


def test_git_changes_are_listed_and_objects_counted(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    (git / "hooks").mkdir(parents=True)
    (git / "objects" / "ab").mkdir(parents=True)
    (git / "config").write_text("[core]\n\tbare = false\n")
    (git / "objects" / "ab" / "cdef").write_bytes(b"x\0blob")
    before = snapshot(tmp_path)
    (git / "config").write_text("[core]\n\tbare = false\n\tfsmonitor = touch /tmp/owned\n")
    (git / "hooks" / "post-checkout").write_text("#!/bin/sh\ncurl evil\n")
    for name in ("01", "02", "03"):
        (git / "objects" / "ab" / name).write_bytes(b"x\0blob")
    (git / "objects" / "ab" / "cdef").unlink()
    (tmp_path / "work.txt").write_text("done\n")
    changes = workspace_changes(before, snapshot(tmp_path))
    assert [(c.path, c.kind, c.detail) for c in changes.files] == [
        (".git/config", "changed", ""),
        (".git/hooks/post-checkout", "added", ""),
        (".git/objects", "changed", "3 objects added, 1 object deleted"),
        ("work.txt", "added", ""),
    ]
    assert "+\tfsmonitor = touch /tmp/owned\n" in changes.files[0].diff
    assert "+curl evil" in changes.files[1].diff
    assert WorkspaceChanges.from_dict(changes.to_dict()) == changes


def test_a_nested_repository_s_objects_are_counted_on_their_own(tmp_path: Path) -> None:
    before = snapshot(tmp_path)
    (tmp_path / "vendor" / "lib" / ".git" / "objects" / "12").mkdir(parents=True)
    (tmp_path / "vendor" / "lib" / ".git" / "objects" / "12" / "34").write_bytes(b"o")
    (change,) = workspace_changes(before, snapshot(tmp_path)).files
    assert (change.path, change.kind, change.detail) == (
        "vendor/lib/.git/objects",
        "added",
        "1 object added",
    )


def test_binary_files_change_without_a_diff(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\xff\x00\x01")
    before = snapshot(tmp_path)
    (tmp_path / "blob.bin").write_bytes(b"\xff\x00\x02")
    (change,) = workspace_changes(before, snapshot(tmp_path)).files
    assert (change.path, change.kind, change.diff) == ("blob.bin", "changed", "")


def test_past_its_read_budget_the_snapshot_compares_by_size_and_time(tmp_path: Path) -> None:
    budget = SnapshotBudget(read_bytes=1024 * 1024)
    for name in ("b.bin", "c.bin"):
        (tmp_path / name).write_bytes(b"\xff" * 600_000)
    before = snapshot(tmp_path, budget=budget)
    (tmp_path / "a.bin").write_bytes(b"\xff" * 600_000)  # read first: b.bin is now unread
    os.utime(tmp_path / "c.bin", ns=(1, 1))
    changes = workspace_changes(before, snapshot(tmp_path, budget=budget))
    assert [(c.path, c.kind) for c in changes.files] == [("a.bin", "added"), ("c.bin", "changed")]
    assert changes.truncated
    assert changes.reason == (
        "before the run, 1 file(s) compared by size and modification time only: the"
        " snapshot's read budget of 1 MiB was spent; after the run, 2 file(s) compared by"
        " size and modification time only: the snapshot's read budget of 1 MiB was spent"
    )
    assert changes.to_dict()["reason"] == changes.reason


def test_past_its_text_budget_the_snapshot_keeps_no_more_diffs(tmp_path: Path) -> None:
    budget = SnapshotBudget(text_bytes=100_000)
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text("line\n" * 8_000)
    before = snapshot(tmp_path, budget=budget)
    for name in ("a.txt", "c.txt"):
        (tmp_path / name).write_text("line\n" * 8_001)
    changes = workspace_changes(before, snapshot(tmp_path, budget=budget))
    assert [(c.path, c.kind, bool(c.diff)) for c in changes.files] == [
        ("a.txt", "changed", True),
        ("c.txt", "changed", False),
    ]
    assert changes.reason.endswith("the snapshot's text budget of 0 MiB was spent")


_MEASURE = """
import json, resource, sys
from pathlib import Path
from swarm.record.changes import snapshot, workspace_changes
workspace = Path(sys.argv[1])
snapshot(workspace / "warm")  # imports, first allocations
start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
before = snapshot(workspace)
(workspace / "new.txt").write_text("new")
changes = workspace_changes(before, snapshot(workspace))
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - start) * 1024
print(json.dumps({"growth": grown, "changes": changes.to_dict()}))
"""
SNAPSHOT_GROWTH_BOUND = 96 * 1024 * 1024
"""What taking two snapshots and comparing them may add to swarm's peak memory
(docs/tools.md, "Caps"): two text budgets and a margin."""


def test_sparse_files_keep_the_snapshot_within_its_bounds(tmp_path: Path) -> None:
    (tmp_path / "warm").mkdir()
    for n in range(1_500):
        with (tmp_path / f"sparse{n:04}.txt").open("wb") as file:
            file.write("é".encode() * 100)
            file.truncate(256 * 1024)
    with (tmp_path / "huge.txt").open("wb") as file:
        file.truncate(256 * 1024 * 1024)
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    found = json.loads(done.stdout)
    assert found["growth"] < SNAPSHOT_GROWTH_BOUND, f"grew by {found['growth'] / 2**20:.0f} MiB"
    changes = found["changes"]
    assert [(c["path"], c["kind"]) for c in changes["files"]] == [("new.txt", "added")]
    assert changes["truncated"] and "read budget of 256 MiB was spent" in changes["reason"]


def test_compiled_python_caches_are_counted_not_listed(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("VALUE = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "stale.pyc").write_bytes(b"\x00old")
    before = snapshot(tmp_path)
    (tmp_path / "app.py").write_text("VALUE = 2\n")
    (tmp_path / "pkg" / "stale.pyc").unlink()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-c", "import app"], cwd=tmp_path, env=env, check=True, timeout=60
    )
    made = [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("__pycache__/*")]
    assert made  # Python wrote its cache, as running the code does
    changes = workspace_changes(before, snapshot(tmp_path))
    assert [(c.path, c.kind) for c in changes.files] == [("app.py", "changed")]
    assert changes.caches == len(made) + 1  # the new cache and the deleted .pyc
    assert changes.to_dict()["caches"] == changes.caches
    assert WorkspaceChanges.from_dict(changes.to_dict()) == changes
