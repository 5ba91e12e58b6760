"""Shell calls captured by their workspace overlay (bubblewrap): the call's change set is
the overlay's upper layer, so capturing it reads what it changed and nothing else, and
the workspace ends exactly as the same command would leave it run directly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from swarm.record.record import RunRecord
from swarm.sandbox import SandboxUnavailable, probe_bubblewrap
from swarm.sandbox.overlay import overlay_works

from .runs import finishes, git, run, scenario_file, shell, team, tree_hash

MiB = 1024 * 1024


def _require_overlay(tmp_path: Path) -> None:
    try:
        probe_bubblewrap()
    except SandboxUnavailable as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"bubblewrap is not usable here: {exc}")
    works = overlay_works(tmp_path, tmp_path / "probe")
    if not works and not os.environ.get("CI"):
        pytest.skip("an overlay cannot be mounted here (no user namespaces, or no unshare)")
    assert works, "CI must be able to mount a workspace overlay"


def _stored(record: Path) -> int:
    blobs = record / "undo" / "blobs"
    return sum(p.stat().st_size for p in blobs.iterdir() if len(p.name) == 64)


def _one_run(runs: Path) -> Path:
    (record,) = runs.iterdir()
    return record


def test_a_call_costs_what_it_changed_not_what_the_workspace_holds(tmp_path: Path) -> None:
    _require_overlay(tmp_path)
    workspace = tmp_path / "ws"
    (workspace / "many").mkdir(parents=True)
    for i in range(2000):
        (workspace / "many" / f"{i:04}.txt").write_text(f"file {i}\n")
    with (workspace / "big.bin").open("wb") as big:  # never touched by the calls
        for _ in range(64):
            big.write(os.urandom(MiB))
    before = tree_hash(workspace)
    script = {
        "dev": [
            shell("echo changed > many/0007.txt && echo new > new.txt"),
            shell("rm many/0008.txt && mkdir -p out && echo x > out/y"),
            {"text": "Done."},
        ]
    }
    scenario = scenario_file(tmp_path, script, team=team(tmp_path, dev="shell"))

    run(scenario, workspace, tmp_path / "runs")

    record = _one_run(tmp_path / "runs")
    first, second = RunRecord(record).calls()
    assert {(c.path, c.kind) for c in first.changes} == {
        ("many/0007.txt", "changed"),
        ("new.txt", "added"),
    }
    assert {(c.path, c.kind) for c in second.changes} == {
        ("many/0008.txt", "deleted"),
        ("out", "added"),
        ("out/y", "added"),
    }
    # the 64 MiB file and the 1,998 other files were never read into the record
    assert _stored(record) < 64 * 1024
    assert not (record / "undo" / "overlay").exists() or not any(
        (record / "undo" / "overlay").iterdir()
    )
    assert (workspace / "many" / "0007.txt").read_text() == "changed\n"
    assert not (workspace / "many" / "0008.txt").exists()

    RunRecord(record).undo()

    assert tree_hash(workspace) == before


KINDS = (
    "chmod 600 keep.txt && ln -s keep.txt link && rm -r gone && mkdir empty"
    " && rm file_to_dir && mkdir file_to_dir && echo in > file_to_dir/f"
    " && rm -r dir_to_file && echo now-a-file > dir_to_file"
    " && rm -r replaced && mkdir replaced && echo only > replaced/only"
    " && mv moved renamed && mkfifo pipe && ln keep.txt hard"
    " && rm oldlink && ln -s elsewhere oldlink && chmod 700 tree"
    " && git add -A && git commit -qm two && git branch -D side && git tag v1"
    " && printf '\\0\\1\\2' > binary && : > emptied.txt && echo all > finished"
)


def _kinds_workspace(workspace: Path) -> None:
    workspace.mkdir()
    git(workspace, "init", "-q", "-b", "main")
    (workspace / "keep.txt").write_text("keep\n")
    (workspace / "gone" / "deep").mkdir(parents=True)
    (workspace / "gone" / "deep" / "a").write_text("a\n")
    (workspace / "file_to_dir").write_text("was a file\n")
    (workspace / "dir_to_file").mkdir()
    (workspace / "dir_to_file" / "x").write_text("x\n")
    (workspace / "replaced").mkdir()
    for name in ("one", "two"):
        (workspace / "replaced" / name).write_text(name)
    (workspace / "moved").mkdir()
    (workspace / "moved" / "m").write_text("m\n")
    (workspace / "oldlink").symlink_to("keep.txt")
    (workspace / "tree").mkdir()
    (workspace / "emptied.txt").write_text("not empty\n")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-qm", "one")
    git(workspace, "branch", "side")


def test_the_workspace_ends_as_the_command_run_directly_would_leave_it(tmp_path: Path) -> None:
    _require_overlay(tmp_path)
    workspace, direct = tmp_path / "ws", tmp_path / "direct"
    _kinds_workspace(workspace)
    before = tree_hash(workspace)
    shutil.copytree(workspace, direct, symlinks=True)
    environment = {
        **os.environ,
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00",
    }
    command = (
        "export GIT_AUTHOR_DATE=2026-01-01T00:00:00 GIT_COMMITTER_DATE=2026-01-01T00:00:00"
        " GIT_AUTHOR_NAME=dev GIT_AUTHOR_EMAIL=dev@example.invalid GIT_COMMITTER_NAME=dev"
        f" GIT_COMMITTER_EMAIL=dev@example.invalid; {KINDS}"
    )
    subprocess.run(["bash", "-c", command], cwd=direct, check=True, env=environment)
    script = {"dev": [shell(command), {"text": "Done."}]}
    scenario = scenario_file(tmp_path, script, team=team(tmp_path, dev="shell"))

    run(scenario, workspace, tmp_path / "runs")

    record = _one_run(tmp_path / "runs")
    assert (workspace / "finished").read_text() == "all\n"
    # git's index caches each file's inode and times: its entries are compared instead
    index = frozenset({".git/index"})
    assert tree_hash(workspace, unread=index) == tree_hash(direct, unread=index)
    assert git(workspace, "ls-files", "-s") == git(direct, "ls-files", "-s")
    assert (workspace / "hard").stat().st_ino == (workspace / "keep.txt").stat().st_ino
    assert not [name for name in os.listxattr(workspace / "keep.txt") if ".overlay." in name]

    RunRecord(record).undo()

    assert tree_hash(workspace) == before
    assert git(workspace, "branch", "--list", "side").strip() == "side"


def test_changes_over_the_budget_are_not_kept_and_the_call_says_why(tmp_path: Path) -> None:
    _require_overlay(tmp_path)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "data.txt").write_text("x" * 20_000)
    script = {"dev": [shell("echo short > data.txt && echo made > new.txt"), {"text": "Done."}]}
    policy = "name: small\ndefault: allow\nundo: {max_bytes: 1000}\n"
    scenario = scenario_file(tmp_path, script, team=team(tmp_path, dev="shell"), policy=policy)

    run(scenario, workspace, tmp_path / "runs")

    assert (workspace / "data.txt").read_text() == "x" * 20_000
    assert not (workspace / "new.txt").exists()
    (finish,) = finishes(_one_run(tmp_path / "runs"))
    assert finish["outcome"] == "error"
    assert "undo-budget" in finish["error"] and "not kept" in finish["error"]


def test_over_the_budget_with_run_the_changes_stay_and_cannot_be_undone(tmp_path: Path) -> None:
    _require_overlay(tmp_path)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "data.txt").write_text("x" * 20_000)
    script = {"dev": [shell("echo short > data.txt"), {"text": "Done."}]}
    policy = "name: small\ndefault: allow\nundo: {max_bytes: 1000, over_budget: run}\n"
    scenario = scenario_file(tmp_path, script, team=team(tmp_path, dev="shell"), policy=policy)

    run(scenario, workspace, tmp_path / "runs")

    assert (workspace / "data.txt").read_text() == "short\n"
    (call,) = RunRecord(_one_run(tmp_path / "runs")).calls()
    assert not call.undoable and "undo.max_bytes" in call.reason
    assert [c.path for c in call.changes] == ["data.txt"]


CRASH_AT_THE_100TH_MOVE = """
import os, runpy, sys
import swarm.undo.overlay as overlay
moved, move = [0], overlay._move_file
def crash(*args):
    moved[0] += 1
    if moved[0] == 100:
        os._exit(9)  # as a kill -9: no cleanup, no finally
    move(*args)
overlay._move_file = crash
sys.argv = ["swarm", *sys.argv[1:]]
runpy.run_module("swarm", run_name="__main__")
"""


def test_a_crash_in_the_middle_of_the_apply_is_undone_whole(tmp_path: Path) -> None:
    """The command makes 3,000 files and deletes one; swarm dies (as by ``kill -9``)
    after moving 99 of them into the workspace. Undo finishes from the pre-scan written
    before the first move: the workspace is as before the run."""
    _require_overlay(tmp_path)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "keep.txt").write_text("kept\n")
    before = tree_hash(workspace)
    command = "rm keep.txt && mkdir many && for i in $(seq 1000 3999); do echo $i > many/$i; done"
    script = {"dev": [shell(command), {"text": "Done."}]}
    scenario = scenario_file(tmp_path, script, team=team(tmp_path, dev="shell"))
    runs = tmp_path / "runs"
    argv = [sys.executable, "-c", CRASH_AT_THE_100TH_MOVE, "run", str(scenario), "--plain"]
    argv += ["--workspace", str(workspace), "--runs-dir", str(runs)]

    crashed = subprocess.run(argv, capture_output=True, text=True, timeout=300)

    assert crashed.returncode == 9, crashed.stderr
    assert len(list((workspace / "many").iterdir())) == 99
    record = _one_run(runs)
    (pending,) = (record / "undo" / "pending").glob("*.json")
    assert "keep.txt" in json.loads(pending.read_text())

    RunRecord(record).undo()

    assert tree_hash(workspace) == before
    assert not any((record / "undo" / "overlay").iterdir())


def test_a_command_cannot_mark_a_directory_replaced_to_have_its_files_deleted(
    tmp_path: Path,
) -> None:
    """overlayfs marks a replaced directory with its own attribute; a command that sets
    an attribute of the same name where the overlay does not keep its marks (or is
    refused it) must not make swarm delete the directory's other files."""
    _require_overlay(tmp_path)
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    for name in ("a.py", "b.py"):
        (workspace / "src" / name).write_text(name)
    mark = (
        "import os\n"
        "for name in ('user.overlay.opaque', 'trusted.overlay.opaque'):\n"
        "    try: os.setxattr('src', name, b'y')\n"
        "    except OSError: pass\n"
    )
    command = f'echo c > src/c.py && python3 -c "{mark}"'
    script = {"dev": [shell(command), {"text": "Done."}]}
    scenario = scenario_file(tmp_path, script, team=team(tmp_path, dev="shell"))

    run(scenario, workspace, tmp_path / "runs")

    assert sorted(p.name for p in (workspace / "src").iterdir()) == ["a.py", "b.py", "c.py"]
    assert (workspace / "src" / "a.py").read_text() == "a.py"


def test_the_programs_in_front_of_the_sandbox_are_not_found_through_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``unshare`` and ``mount`` run outside the sandbox, before it exists: a program of
    that name in a directory on ``PATH`` (one a command could write) must not run."""
    _require_overlay(tmp_path)
    planted = tmp_path / "bin"
    planted.mkdir()
    for name in ("unshare", "mount", "sh"):
        fake = planted / name
        fake.write_text(f"#!/bin/sh\ntouch {tmp_path / 'ran-unconfined'}\nexit 1\n")
        fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{planted}:{os.environ['PATH']}")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = {"dev": [shell("echo made > new.txt"), {"text": "Done."}]}
    scenario = scenario_file(tmp_path, script, team=team(tmp_path, dev="shell"))

    run(scenario, workspace, tmp_path / "runs")

    assert not (tmp_path / "ran-unconfined").exists()
    assert (workspace / "new.txt").read_text() == "made\n"
    (call,) = RunRecord(_one_run(tmp_path / "runs")).calls()
    assert [c.path for c in call.changes] == ["new.txt"]


SET_UP_FAILS_ONCE = """
import runpy, sys
import swarm.sandbox.bubblewrap as bubblewrap
arguments, failed = bubblewrap.bwrap_arguments, []
def racing(*args, **kwargs):
    options = arguments(*args, **kwargs)
    if not failed:  # a file of /etc listed, then removed before bubblewrap mounts
        failed.append(1)
        options += ["--ro-bind", "/dev/null", "/etc/swarm-test-gone-%d.lock" % id(failed)]
    return options
bubblewrap.bwrap_arguments = racing
sys.argv = ["swarm", *sys.argv[1:]]
runpy.run_module("swarm", run_name="__main__")
"""


def test_a_set_up_that_failed_once_still_captures_the_one_run_of_the_command(
    tmp_path: Path,
) -> None:
    """The overlay of a launch whose bubblewrap set-up failed is mounted again: the
    command runs once, its change is captured, and undo takes it back."""
    _require_overlay(tmp_path)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "keep.txt").write_text("kept\n")
    before = tree_hash(workspace)
    script = {"dev": [shell("echo once >> keep.txt && echo new > new.txt"), {"text": "Done."}]}
    scenario = scenario_file(tmp_path, script, team=team(tmp_path, dev="shell"))
    runs = tmp_path / "runs"
    argv = [sys.executable, "-c", SET_UP_FAILS_ONCE, "run", str(scenario), "--plain"]
    argv += ["--workspace", str(workspace), "--runs-dir", str(runs)]

    ran = subprocess.run(argv, capture_output=True, text=True, timeout=300)

    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (workspace / "keep.txt").read_text() == "kept\nonce\n"
    (call,) = RunRecord(_one_run(runs)).calls()
    assert {(c.path, c.kind) for c in call.changes} == {
        ("keep.txt", "changed"),
        ("new.txt", "added"),
    }
    RunRecord(_one_run(runs)).undo()
    assert tree_hash(workspace) == before
