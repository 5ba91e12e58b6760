"""``swarm run``: scenarios, ad-hoc tasks, JSON output, the run record, exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any as Swarm


def test_scenario_runs_offline_and_builds_the_program(
    swarm: Swarm, examples: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    done = swarm("run", examples / "build-a-calculator.yaml", "--workspace", workspace)
    assert done.returncode == 0, done.stderr
    assert "def add(a, b)" in (workspace / "calc.py").read_text()
    assert "[orchestrator] delegates to architect" in done.stdout
    assert "[orchestrator/developer#1] delegates to tester" in done.stdout
    assert "Final answer" in done.stdout and "calc.py provides add and sub" in done.stdout
    assert "Run record:" in done.stdout


def test_run_record_holds_events_audit_sessions_and_summary(
    runs: Path, swarm: Swarm, examples: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    assert (
        swarm("run", examples / "build-a-calculator.yaml", "--workspace", workspace).returncode == 0
    )
    (record,) = runs.iterdir()
    assert {p.name for p in record.iterdir()} >= {
        "events.jsonl",
        "audit.jsonl",
        "sessions.db",
        "summary.json",
    }
    summary = json.loads((record / "summary.json").read_text())
    assert summary["stop_reason"] == "end_turn" and summary["interrupted"] is False
    assert summary["calls"]["denied"] == 0 and summary["calls"]["allowed"] >= 8
    assert "orchestrator/developer#1/tester#1" in summary["sessions"]
    paths = {
        json.loads(line).get("path") for line in (record / "events.jsonl").read_text().splitlines()
    }
    assert "orchestrator/reviewer#1" in paths


def test_json_streams_events_then_a_summary(swarm: Swarm, examples: Path, tmp_path: Path) -> None:
    done = swarm("run", examples / "denied-shell.yaml", "--workspace", tmp_path / "ws", "--json")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1]["type"] == "summary"
    assert lines[-1]["calls"]["denied"] == 1
    assert any(line.get("type") == "sub_agent" for line in lines)


def test_denied_sub_agent_call_is_reported_and_audited(
    runs: Path, swarm: Swarm, examples: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    done = swarm("run", examples / "denied-shell.yaml", "--workspace", workspace)
    assert done.returncode == 0, done.stderr
    assert "DENIED shell" in done.stdout and "no-recursive-delete" in done.stdout
    assert "1 denied" in done.stdout
    (record,) = runs.iterdir()
    audit = [json.loads(line) for line in (record / "audit.jsonl").read_text().splitlines()]
    denials = [r for r in audit if r.get("decision") == "deny"]
    assert len(denials) == 1 and denials[0]["rule"] == "no-recursive-delete"
    assert (workspace / "notes.txt").read_text() == "keep me"


def test_no_model_says_how_to_configure_one(swarm: Swarm, roles: Path) -> None:
    done = swarm("run", "--team", roles, "--entry", "orchestrator", "build me a thing")
    assert done.returncode == 2
    assert "--model" in done.stderr and "OPENAI_API_KEY" in done.stderr
    assert "Traceback" not in done.stderr


def test_scenario_without_model_or_script_exits_2(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"team: {roles}\ntask: do it\n")
    done = swarm("run", scenario)
    assert done.returncode == 2
    assert "no model is configured" in done.stderr and "--model" in done.stderr


def test_unknown_provider_is_bad_input(swarm: Swarm, roles: Path) -> None:
    done = swarm("run", "--team", roles, "--model", "nosuch:model", "task")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "nosuch" in done.stderr


def test_bad_scenario_file_names_file_line_and_field(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "bad.yaml"
    scenario.write_text(f"team: {roles}\ntask: do it\ntimeout: 5\n")
    done = swarm("run", scenario)
    assert done.returncode == 2
    assert f"{scenario}:3: field 'timeout': unknown field" in done.stderr


def test_bad_role_file_names_file_and_field(swarm: Swarm, tmp_path: Path) -> None:
    team = tmp_path / "team"
    team.mkdir()
    (team / "lead.yaml").write_text("description: leads\nsystem: lead\nmax_iterations: lots\n")
    scenario = tmp_path / "s.yaml"
    scenario.write_text("team: team\ntask: x\nmodel: {script: {lead: [{text: hi}]}}\n")
    done = swarm("run", scenario)
    assert done.returncode == 2
    assert "lead.yaml:3: field 'max_iterations'" in done.stderr


def test_bad_policy_file_names_file_and_field(swarm: Swarm, roles: Path, tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text("name: mine\nrules:\n  - allow: '*'\n    colour: red\n")
    scenario = tmp_path / "s.yaml"
    script = "model: {script: {orchestrator: [{text: hi}]}}\n"
    scenario.write_text(f"team: {roles}\npolicy: mine.yaml\ntask: x\n" + script)
    done = swarm("run", scenario)
    assert done.returncode == 2
    assert "mine.yaml:4" in done.stderr and "colour" in done.stderr


def test_failed_run_exits_1(swarm: Swarm, roles: Path, tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"team: {roles}\ntask: x\nmodel:\n  script:\n    orchestrator:\n"
        "      - call: developer\n        args: {task: go}\n      - text: done\n"
        "    developer: []\n"
    )
    done = swarm("run", scenario, "--workspace", tmp_path / "ws")
    assert done.returncode == 0  # the developer's failure is an error result; the run goes on
    assert "did not finish (error)" in done.stdout
    scenario.write_text(f"team: {roles}\ntask: x\nmodel:\n  script:\n    orchestrator: []\n")
    done = swarm("run", scenario, "--workspace", tmp_path / "ws")
    assert done.returncode == 1
    assert "Stop reason: error" in done.stdout


SPY = """\
name: spy
team: {roles}
entry: developer
policy: default
task: Look around.
model:
  script:
    developer:
      - call: shell
        args:
          command: ls -A .swarm; cat .swarm/runs/*/audit.jsonl; echo done > made.txt
      - text: Looked.
"""


def test_run_prints_records_and_audits_its_sandbox_and_hides_the_records(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    import os

    import pytest

    from swarm import SandboxSettings, SandboxUnavailable, find_sandbox

    try:
        expected = find_sandbox(SandboxSettings(mode="required")).describe("none")
    except SandboxUnavailable as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"no sandbox works here ({exc}); CI installs bubblewrap")
    scenario = tmp_path / "spy.yaml"
    scenario.write_text(SPY.format(roles=roles))
    workspace = tmp_path / "ws"
    # records inside the workspace: the hardest place to hide them from its commands
    runs = workspace / ".swarm" / "runs"
    done = swarm("run", scenario, "--workspace", workspace, "--runs-dir", runs, "--plain")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == [f"workspace: {workspace}", f"sandbox: {expected}"]
    (record,) = runs.iterdir()
    assert json.loads((record / "summary.json").read_text())["config"]["sandbox"] == expected
    audit = [json.loads(line) for line in (record / "audit.jsonl").read_text().splitlines()]
    [decision] = [r for r in audit if r["event"] == "decision" and r["tool"] == "shell"]
    assert decision["sandbox"] == expected
    events = [json.loads(line) for line in (record / "events.jsonl").read_text().splitlines()]
    [result] = [e for e in events if e.get("type") == "tool_result"]
    assert "audit.jsonl': No such file or directory" in result["content"]
    assert (workspace / "made.txt").read_text() == "done\n"


def test_end_summary_lists_errors_denials_and_files(
    runs: Path, swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "old.txt").write_text("old\n")
    (workspace / "notes.txt").write_text("one\n")
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"team: {roles}\ntask: x\nentry: orchestrator\npolicy: default\nmodel:\n  script:\n"
        "    orchestrator:\n"
        "      - call: developer\n        args: {task: go}\n"
        "      - call: tester\n        args: {task: test}\n"
        "      - text: finished\n"
        "    developer:\n"
        "      - calls:\n"
        "          - tool: write_file\n            args: {path: new.py, content: 'x = 1'}\n"
        "          - tool: write_file\n            args: {path: notes.txt, content: 'two'}\n"
        "          - tool: shell\n            args: {command: rm old.txt}\n"
        "          - tool: shell\n            args: {command: rm -rf /tmp/nothing-here}\n"
        "      - text: written\n"
        "    tester: []\n"
    )
    done = swarm("run", scenario, "--workspace", workspace)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Errors (1):" in out and "orchestrator/tester#1:" in out
    assert "Denied calls (1):" in out and "denied: orchestrator/developer#1 shell" in out
    assert "+ new.py  (added)" in out
    assert "~ notes.txt  (changed)" in out
    assert "- old.txt  (deleted)" in out
    (record,) = runs.iterdir()
    changes = json.loads((record / "changes.json").read_text())
    diff = next(f["diff"] for f in changes["files"] if f["path"] == "notes.txt")
    assert "-one" in diff and "+two" in diff
    summary = json.loads((record / "summary.json").read_text())
    assert summary["files"] == {
        "added": ["new.py"],
        "changed": ["notes.txt"],
        "deleted": ["old.txt"],
    }


def test_escape_sequences_in_answers_and_file_names_are_written_out(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"team: {roles}\ntask: x\nentry: developer\nmodel:\n  script:\n    developer:\n"
        '      - call: write_file\n        args: {path: "evil\\e]0;pwned\\a.txt", content: x}\n'
        '      - text: "done \\e[2J\\e]52;c;cm0gLXJmIH4=\\a"\n'
    )
    done = swarm("run", scenario, "--workspace", tmp_path / "ws")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "+ evil\\x1b]0;pwned\\x07.txt  (added)" in done.stdout
    assert "done \\x1b[2J\\x1b]52;c;cm0gLXJmIH4=\\x07" in done.stdout


def test_a_second_run_says_it_reuses_the_workspace_with_the_first_runs_files(
    swarm: Swarm, examples: Path, tmp_path: Path
) -> None:
    first = swarm("run", examples / "build-a-calculator.yaml", "--plain")
    workspace = tmp_path.resolve() / ".swarm" / "workspaces" / "build-a-calculator"
    assert first.stdout.splitlines()[0] == f"workspace: {workspace}"
    left = sum(1 for p in workspace.rglob("*") if p.is_file())
    assert left >= 3  # calc.py, test_calc.py, DESIGN.md
    again = swarm("run", examples / "build-a-calculator.yaml", "--plain")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[0] == (
        f"workspace: {workspace} (reused: {left} files of an earlier run still in it)"
    )
