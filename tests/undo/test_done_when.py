"""The issue's "done when": destructive commands run by the shipped team through a
scripted model (the ten git commands, ``shutil.rmtree`` of an untracked directory, a
Makefile's ``clean``, ``write_file`` over a good file) and ``swarm runs undo`` brings the
workspace back, ``.git`` included (branches, stash, reflog, untracked files), compared
by a tree hash; undo of one agent keeps another agent's later changes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from swarm_command import run_swarm

from swarm.record.record import RunRecord

from .runs import finishes, git, run, scenario_file, shell, tree_hash

DESTROYING = [
    {"call": "write_file", "args": {"path": "README.md", "content": "wrong\n"}},
    shell("python3 -c \"import shutil; shutil.rmtree('src')\""),
    shell("make clean"),
    shell("git stash && git stash drop"),
    shell("echo more >> lib.py; git checkout -- ."),
    shell("echo more >> lib.py; git restore ."),
    shell("git checkout -f HEAD~1"),
    shell("git branch -Df f1"),
    shell("git branch --delete --force f2"),
    shell("git branch -d -f f3"),
    shell("git update-ref -d refs/heads/f4"),
    shell("git reflog expire --expire=now --all && git gc --prune=now"),
    shell("git -c clean.requireForce=false clean -d"),
]


def _repository(workspace: Path) -> None:
    """A repository with work worth keeping: two commits, four branches, a stash, a
    dirty tracked file, untracked files and directories, a build directory."""
    workspace.mkdir()
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "config", "user.name", "dev")
    git(workspace, "config", "user.email", "dev@example.invalid")
    (workspace / "README.md").write_text("good\n")
    (workspace / "Makefile").write_text("clean:\n\trm -rf build\n")
    (workspace / "lib.py").write_text("x = 1\n")
    git(workspace, "add", ".")
    git(workspace, "commit", "-qm", "one")
    (workspace / "lib.py").write_text("x = 2\n")
    git(workspace, "commit", "-qam", "two")
    for branch in ("f1", "f2", "f3", "f4"):
        git(workspace, "branch", branch)
    (workspace / "lib.py").write_text("x = 3  # stashed\n")
    git(workspace, "stash")
    (workspace / "lib.py").write_text("x = 4  # not committed yet\n")
    (workspace / "src").mkdir()
    (workspace / "src" / "draft.py").write_text("print('draft')\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.o").write_bytes(b"\x7fELF\x00")
    (workspace / "notes.txt").write_text("untracked notes\n")
    (workspace / "scratch").mkdir()
    (workspace / "scratch" / "idea.md").write_text("an idea\n")
    (workspace / "run.sh").write_text("#!/bin/sh\n")
    (workspace / "run.sh").chmod(0o750)


def test_destructive_commands_of_the_shipped_team_are_undone_to_the_tree(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    _repository(workspace)
    before = tree_hash(workspace)
    branches = git(workspace, "branch", "--list")
    script = {
        "orchestrator": [
            {"call": "developer", "args": {"task": "Clean up."}},
            {"text": "Done."},
        ],
        "developer": [*DESTROYING, {"text": "Cleaned."}],
    }
    outcome = run(scenario_file(tmp_path, script), workspace, tmp_path / "runs")
    ran = [f for f in finishes(outcome.record_dir) if f["tool"] in ("shell", "write_file")]
    assert len(ran) == len(DESTROYING)
    assert all(f["outcome"] == "ok" for f in ran), [f["error"] for f in ran]
    assert not (workspace / "src").exists() and not (workspace / "notes.txt").exists()
    assert git(workspace, "branch", "--list") != branches
    assert tree_hash(workspace) != before

    result = RunRecord(outcome.record_dir).undo()

    assert tree_hash(workspace) == before
    assert git(workspace, "branch", "--list") == branches
    assert "stashed" in git(workspace, "stash", "show", "-p")
    assert git(workspace, "reflog").count("\n") >= 2
    assert {c.agent for c in result.undone} == {"orchestrator/developer#1"}
    subprocess.run([*["git", "fsck", "--no-progress"]], cwd=workspace, check=True)


def test_undo_of_one_agent_keeps_another_agents_later_changes(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a, good\n")
    (workspace / "b.txt").write_text("b, good\n")
    script = {
        "orchestrator": [
            {"call": "developer", "args": {"task": "Change a."}},
            {"call": "tester", "args": {"task": "Change b."}},
            {"text": "Done."},
        ],
        "developer": [shell("echo 'a, wrong' > a.txt"), {"text": "Changed."}],
        "tester": [shell("echo 'b, better' > b.txt; mkdir tests"), {"text": "Changed."}],
    }
    outcome = run(scenario_file(tmp_path, script), workspace, tmp_path / "runs")
    assert (workspace / "a.txt").read_text() == "a, wrong\n"

    command = ["runs", "undo", str(outcome.record_dir)]
    done = run_swarm(
        [*command, "--agent", "orchestrator/developer#1"], cwd=os.getcwd(), env=os.environ
    )

    assert done.returncode == 0, done.stderr
    assert "a.txt" in done.stdout
    assert (workspace / "a.txt").read_text() == "a, good\n"
    assert (workspace / "b.txt").read_text() == "b, better\n"  # the tester's, later: kept
    assert (workspace / "tests").is_dir()
