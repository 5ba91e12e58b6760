"""``swarm runs undo`` and ``diff`` and ``RunRecord.undo``/``diff``: what they refuse (a
file edited since the run, a file they did not see created), ``--force``, ``--call`` and
``--since``, the audit record and the new segment, and the ``undo`` budget."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from swarm_command import run_swarm

from swarm.audit import read_head, read_key, verify_log
from swarm.errors import ConfigError
from swarm.guards.policy import Policy
from swarm.record.record import RunRecord
from swarm.undo import UndoSettings
from swarm.undo.restore import UndoRefused

from .runs import finishes, run, scenario_file, shell, team, tree_hash

OFF = "name: open\ndefault: allow\nsandbox: off\n"


def _run(tmp_path: Path, calls: list[dict], *, policy: str = OFF) -> tuple[Path, Path]:
    """A run of one agent making ``calls`` in a workspace holding ``keep.txt``."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "keep.txt").write_text("kept\n")
    script = {"dev": [*calls, {"text": "Done."}]}
    scenario = scenario_file(
        tmp_path, script, team=team(tmp_path, dev="shell, write_file, edit_file"), policy=policy
    )
    outcome = run(scenario, workspace, tmp_path / "runs")
    return workspace, outcome.record_dir


def _swarm(*args: str) -> subprocess.CompletedProcess[str]:
    return run_swarm(args, cwd=os.getcwd(), env=os.environ)


def test_undo_refuses_naming_a_file_edited_since_the_run_and_force_puts_it_back(
    tmp_path: Path,
) -> None:
    workspace, record = _run(tmp_path, [shell("echo wrong > keep.txt")])
    (workspace / "keep.txt").write_text("edited by a person\n")

    refused = _swarm("runs", "undo", str(record))

    assert refused.returncode == 1
    assert "keep.txt: changed since the run" in refused.stderr
    assert (workspace / "keep.txt").read_text() == "edited by a person\n"  # nothing changed
    forced = _swarm("runs", "undo", str(record), "--force")
    assert forced.returncode == 0, forced.stderr
    assert (workspace / "keep.txt").read_text() == "kept\n"


def test_undo_never_deletes_a_file_it_did_not_see_created(tmp_path: Path) -> None:
    workspace, record = _run(tmp_path, [shell("mkdir out && echo x > out/made.txt")])
    (workspace / "out" / "mine.txt").write_text("a person's file\n")

    with pytest.raises(UndoRefused) as refused:
        RunRecord(record).undo(force=True)

    assert "out/mine.txt" in str(refused.value)
    assert (workspace / "out" / "mine.txt").read_text() == "a person's file\n"
    assert (workspace / "out" / "made.txt").exists()  # refused whole: nothing taken back


def test_undo_of_one_call_keeps_the_others_and_since_takes_the_rest(tmp_path: Path) -> None:
    workspace, record = _run(
        tmp_path,
        [
            {"call": "write_file", "args": {"path": "one.txt", "content": "1\n"}},
            {
                "call": "edit_file",
                "args": {"path": "keep.txt", "old_text": "kept", "new_text": "2"},
            },
            shell("echo 3 > three.txt; chmod 600 keep.txt"),
        ],
    )
    calls = RunRecord(record).calls()
    assert [c.tool for c in calls] == ["write_file", "edit_file", "shell"]
    first, second, _ = (c.call for c in calls)

    RunRecord(record).undo(call=first)
    assert not (workspace / "one.txt").exists()
    assert (workspace / "three.txt").exists()

    RunRecord(record).undo(since=second)
    assert (workspace / "keep.txt").read_text() == "kept\n"
    assert (workspace / "keep.txt").stat().st_mode & 0o777 == 0o644
    assert not (workspace / "three.txt").exists()
    assert sorted(p.name for p in workspace.iterdir() if p.name != ".swarm") == ["keep.txt"]


def test_undo_is_an_audit_record_and_a_new_segment(tmp_path: Path) -> None:
    workspace, record = _run(tmp_path, [shell("echo wrong > keep.txt")])
    (call,) = RunRecord(record).calls()

    RunRecord(record).undo()

    log = [json.loads(line) for line in (record / "audit.jsonl").read_text().splitlines()]
    assert log[-1]["event"] == "undo"
    assert log[-1]["undone"] == [{"call": call.call, "agent": "dev"}]
    assert log[-1]["restored"] == ["keep.txt"]
    report = verify_log(
        record / "audit.jsonl",
        key=read_key(record / "audit.key"),
        anchor=read_head(record / "head.json"),
    )
    assert report.ok, report.problem
    summary = json.loads((record / "summary.json").read_text())
    assert [s.get("kind") for s in summary["segments"]] == [None, "undo"]
    assert summary["totals"]["segments"] == 2
    changes = json.loads((record / "changes.json").read_text())
    assert [(f["path"], f["agents"]) for f in changes["files"]] == [("keep.txt", ["(undo)"])]
    assert (workspace / "keep.txt").read_text() == "kept\n"


def test_diff_shows_each_call_with_its_agent_and_changes_json_names_them(tmp_path: Path) -> None:
    _, record = _run(tmp_path, [shell("printf 'new\\n' > keep.txt; ln -s /etc/passwd link")])
    (call,) = RunRecord(record).calls()

    shown = _swarm("runs", "diff", str(record), "--call", call.call)

    assert shown.returncode == 0, shown.stderr
    assert f"call {call.call}  agent dev  tool shell" in shown.stdout
    assert "-kept" in shown.stdout and "+new" in shown.stdout
    assert "added link: absent -> link -> /etc/passwd" in shown.stdout
    changes = json.loads((record / "changes.json").read_text())
    by_path = {f["path"]: f.get("calls") for f in changes["files"]}
    assert by_path["keep.txt"] == [{"call": call.call, "agent": "dev"}]
    missing = _swarm("runs", "diff", str(record), "--call", "nope")
    assert missing.returncode == 2 and "no call 'nope'" in missing.stderr


def test_a_call_whose_pre_images_do_not_fit_is_denied_under_undo_budget(tmp_path: Path) -> None:
    policy = OFF + "undo: {max_bytes: 100}\n"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "big.bin").write_bytes(b"\x01" * 1000)
    script = {"dev": [shell("rm big.bin"), {"text": "Done."}]}
    scenario = scenario_file(tmp_path, script, team=team(tmp_path, dev="shell"), policy=policy)

    outcome = run(scenario, workspace, tmp_path / "runs")

    (finish,) = finishes(outcome.record_dir)
    assert finish["outcome"] == "denied"
    assert "undo-budget" in finish["error"] and "1,000 bytes" in finish["error"]
    assert (workspace / "big.bin").exists()


def test_over_budget_run_records_the_call_as_not_undoable(tmp_path: Path) -> None:
    policy = OFF + "undo: {max_bytes: 100, over_budget: run}\n"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "big.bin").write_bytes(b"\x01" * 1000)
    before = tree_hash(workspace)
    script = {"dev": [shell("rm big.bin"), {"text": "Done."}]}
    scenario = scenario_file(tmp_path, script, team=team(tmp_path, dev="shell"), policy=policy)
    outcome = run(scenario, workspace, tmp_path / "runs")
    assert not (workspace / "big.bin").exists()
    (call,) = RunRecord(outcome.record_dir).calls()
    assert not call.undoable and [c.path for c in call.changes] == ["big.bin"]

    with pytest.raises(UndoRefused, match="ran without undo"):
        RunRecord(outcome.record_dir).undo()
    assert tree_hash(workspace) != before


def test_the_undo_policy_key_is_read_and_checked() -> None:
    policy = Policy.from_mapping({"undo": {"max_bytes": 5, "over_budget": "run"}})
    assert policy.undo == UndoSettings(5, "run")
    with pytest.raises(ConfigError, match="over_budget"):
        Policy.from_mapping({"undo": {"over_budget": "maybe"}})


def test_undo_of_a_run_that_changed_nothing_says_so_and_records_nothing(tmp_path: Path) -> None:
    _, record = _run(tmp_path, [shell("cat keep.txt")])
    audit = (record / "audit.jsonl").read_text()

    refused = _swarm("runs", "undo", str(record))

    assert refused.returncode == 1
    assert "nothing to undo" in refused.stderr
    assert (record / "audit.jsonl").read_text() == audit


def test_a_record_a_kill_cut_short_is_taken_off_and_undo_goes_on(tmp_path: Path) -> None:
    """SIGKILL can stop a record's write between pages: the log then ends in half a line,
    past the anchored head. Undo (as resume) moves it to ``audit.torn`` and goes on."""
    workspace, record = _run(tmp_path, [shell("echo wrong > keep.txt")])
    log = record / "audit.jsonl"
    whole = log.read_bytes()
    torn = whole.splitlines()[-1][:40]  # the start of a record like the last one
    log.write_bytes(whole + torn)

    RunRecord(record).undo()

    assert (record / "audit.torn").read_bytes() == torn + b"\n"
    lines = log.read_bytes().splitlines(keepends=True)
    assert b"".join(lines[:-1]) == whole  # every whole record kept, then the undo
    assert json.loads(lines[-1])["event"] == "undo"
    report = verify_log(
        log, key=read_key(record / "audit.key"), anchor=read_head(record / "head.json")
    )
    assert report.ok, report.problem
    assert (workspace / "keep.txt").read_text() == "kept\n"


def test_a_log_cut_inside_an_anchored_record_is_still_refused(tmp_path: Path) -> None:
    workspace, record = _run(tmp_path, [shell("echo wrong > keep.txt")])
    log = record / "audit.jsonl"
    cut = log.read_bytes()[:-30]  # the last record, which the head counts, cut short
    log.write_bytes(cut)

    with pytest.raises(ConfigError, match="the audit log does not verify"):
        RunRecord(record).undo()

    assert log.read_bytes() == cut
    assert not (record / "audit.torn").exists()
    assert (workspace / "keep.txt").read_text() == "wrong\n"


def test_the_record_a_kill_cut_short_is_kept_private(tmp_path: Path) -> None:
    _, record = _run(tmp_path, [shell("echo wrong > keep.txt")])
    log = record / "audit.jsonl"
    log.write_bytes(log.read_bytes() + b'{"seq": 9, "event": "dec')

    RunRecord(record).undo()

    assert (record / "audit.torn").stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in record.iterdir() if p.name.startswith("audit.")) == [
        "audit.jsonl",
        "audit.key",
        "audit.torn",
    ]
