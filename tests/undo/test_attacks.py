"""A command that works against undo: links planted to outside files and directories, a
named pipe, a directory swapped for a link before the undo. swarm neither reads nor
writes outside the workspace, nor hangs, and keeps every pre-image."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swarm.record.record import RunRecord
from swarm.undo.restore import UndoRefused

from .runs import run, scenario_file, shell, team, tree_hash

SECRET = b"the secret outside the workspace\n"


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(SECRET)
    return outside


@pytest.mark.parametrize("policy", ["sandbox: off\n", ""], ids=["off", "sandboxed"])
def test_planted_links_and_a_fifo_are_recorded_as_what_they_are_and_undone(
    tmp_path: Path, policy: str
) -> None:
    outside = _outside(tmp_path)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "data").mkdir()
    (workspace / "data" / "a.txt").write_text("a\n")
    before = tree_hash(workspace)
    command = (
        f"ln -s {outside}/secret.txt leak && ln -s {outside} out && mkfifo pipe"
        " && rm -r data && ln -s /etc data"
    )
    script = {"dev": [shell(command), {"text": "Done."}]}
    scenario = scenario_file(
        tmp_path,
        script,
        team=team(tmp_path, dev="shell"),
        policy="name: open\ndefault: allow\n" + policy,
    )
    outcome = run(scenario, workspace, tmp_path / "runs")
    assert os.readlink(workspace / "leak") == f"{outside}/secret.txt"
    (call,) = RunRecord(outcome.record_dir).calls()
    kinds = {c.path: c.after.kind for c in call.changes}
    assert kinds == {
        "leak": "link",
        "out": "link",
        "pipe": "other",
        "data": "link",
        "data/a.txt": "absent",
    }
    blobs = outcome.record_dir / "undo" / "blobs"
    assert all(blob.read_bytes() != SECRET for blob in blobs.iterdir())  # never read

    RunRecord(outcome.record_dir).undo()

    assert tree_hash(workspace) == before
    assert (outside / "secret.txt").read_bytes() == SECRET
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_a_directory_swapped_for_a_link_before_the_undo_is_not_written_through(
    tmp_path: Path,
) -> None:
    outside = _outside(tmp_path)
    workspace = tmp_path / "ws"
    (workspace / "d").mkdir(parents=True)
    (workspace / "d" / "secret.txt").write_text("the workspace's own\n")
    script = {"dev": [shell("echo changed > d/secret.txt"), {"text": "Done."}]}
    scenario = scenario_file(
        tmp_path, script, team=team(tmp_path, dev="shell"), policy="name: o\ndefault: allow\n"
    )
    outcome = run(scenario, workspace, tmp_path / "runs")
    (workspace / "d").rename(workspace / "d.real")
    (workspace / "d").symlink_to(outside)

    with pytest.raises(UndoRefused, match=r"d/secret\.txt: the directory d on the way is a link"):
        RunRecord(outcome.record_dir).undo(force=True)

    assert (outside / "secret.txt").read_bytes() == SECRET
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
