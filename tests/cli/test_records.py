"""``swarm audit``, ``swarm sessions``, ``swarm runs``, and Ctrl-C during a run."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any as Swarm

import pytest

SLOW = """\
team: {roles}
task: Tidy up.
model:
  script:
    orchestrator:
      - call: developer
        args: {{task: wait for the build}}
      - text: All tidy.
    developer:
      - call: shell
        args: {{command: sleep 60}}
      - text: waited
"""


@pytest.fixture
def finished_run(runs: Path, swarm: Swarm, examples: Path, tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    done = swarm("run", examples / "denied-shell.yaml", "--workspace", workspace)
    assert done.returncode == 0, done.stderr
    (record,) = runs.iterdir()
    return record


def test_audit_verify_passes_on_an_intact_log(swarm: Swarm, finished_run: Path) -> None:
    done = swarm("audit", "verify", finished_run / "audit.jsonl")
    assert done.returncode == 0 and "chain intact" in done.stdout


def test_audit_verify_fails_naming_the_edited_record(swarm: Swarm, finished_run: Path) -> None:
    log = finished_run / "audit.jsonl"
    lines = log.read_text().splitlines()
    record = json.loads(lines[1])
    record["tool"] = "write_file"  # rewrite history: pretend another tool was called
    lines[1] = json.dumps(record)
    log.write_text("\n".join(lines) + "\n")
    done = swarm("audit", "verify", log)
    assert done.returncode == 1
    assert "tampered or damaged at line 2" in done.stdout and "edited" in done.stdout


def test_audit_verify_of_a_missing_log_is_bad_input(swarm: Swarm, tmp_path: Path) -> None:
    done = swarm("audit", "verify", tmp_path / "nope.jsonl")
    assert done.returncode == 2 and "no such audit log" in done.stderr


def test_audit_show_filters_by_decision(swarm: Swarm, finished_run: Path) -> None:
    done = swarm("audit", "show", finished_run, "--decision", "deny")
    assert done.returncode == 0
    assert "shell" in done.stdout and "no-recursive-delete" in done.stdout
    assert "list_files" not in done.stdout


def test_sessions_list_and_show(swarm: Swarm, finished_run: Path) -> None:
    listing = swarm("sessions", "list", finished_run)
    assert listing.returncode == 0
    assert "orchestrator/developer#1" in listing.stdout
    shown = swarm("sessions", "show", finished_run, "orchestrator/developer#1")
    assert shown.returncode == 0
    assert "→ shell" in shown.stdout and "✗" in shown.stdout and "Permission denied" in shown.stdout


def test_runs_list_and_show(swarm: Swarm, finished_run: Path) -> None:
    listing = swarm("runs", "list", "--all")
    assert listing.returncode == 0 and finished_run.name in listing.stdout
    shown = swarm("runs", "show", finished_run)
    assert shown.returncode == 0
    assert "denied" in shown.stdout and "orchestrator/developer#1 shell" in shown.stdout


@pytest.mark.parametrize(
    ("stop", "code", "said"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
    ids=["ctrl-c", "sigterm"],
)
def test_a_stopped_run_writes_its_record_and_resumes(
    runs: Path,
    swarm: Swarm,
    roles: Path,
    tmp_path: Path,
    stop: signal.Signals,
    code: int,
    said: str,
) -> None:
    scenario = tmp_path / "slow.yaml"
    scenario.write_text(SLOW.format(roles=roles))
    workspace = tmp_path / "ws"
    process = swarm.start("run", scenario, "--workspace", workspace, "--plain")
    assert process.stdout is not None
    for line in process.stdout:
        if "calls shell" in line:
            break
    process.send_signal(stop)
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"swarm did not stop on {stop.name}:\n{out}\n{err}")
    assert process.returncode == code, err
    (record,) = runs.iterdir()
    assert said in err and "Traceback" not in err
    # the command alone on its line, so a terminal never wraps it in the middle
    assert f"resume with:\n  swarm sessions resume {record.name}\n" in err
    summary = json.loads((record / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert summary["script_used"] == {"orchestrator": 1, "developer": 1}

    developer = swarm("sessions", "show", record, "orchestrator/developer#1")
    assert "Cancelled" in developer.stdout  # the cut call has its result

    resumed = swarm("sessions", "resume", record, "--plain")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "All tidy." in resumed.stdout
    summary = json.loads((record / "summary.json").read_text())
    assert summary["interrupted"] is False and summary["resumed"] == 1


TWICE = """\
team: {roles}
task: Build it.
model:
  script:
    orchestrator:
      - call: developer
        args: {{task: build the first part}}
      - text: First part built.
      - call: developer
        args: {{task: build the second part}}
      - text: Second part built.
    developer:
      - text: built the first part
      - text: built the second part
"""


def test_a_resumed_run_gives_its_new_sub_agents_new_paths(
    runs: Path, swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "twice.yaml"
    scenario.write_text(TWICE.format(roles=roles))
    workspace = tmp_path / "ws"
    assert swarm("run", scenario, "--workspace", workspace, "--plain").returncode == 0
    (record,) = runs.iterdir()
    resumed = swarm("sessions", "resume", record, "Now", "the", "second", "part", "--plain")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    sessions = json.loads((record / "summary.json").read_text())["sessions"]
    first, second = sessions["orchestrator/developer#1"], sessions["orchestrator/developer#2"]
    assert first != second
    shown = swarm("sessions", "show", record, "orchestrator/developer#1")
    assert "built the first part" in shown.stdout and "second" not in shown.stdout


def test_resume_of_a_finished_run_needs_a_message(swarm: Swarm, finished_run: Path) -> None:
    done = swarm("sessions", "resume", finished_run)
    assert done.returncode == 2 and "give a message" in done.stderr


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        (["a list"], "the run record's config is not an object"),
        ({"task": "t", "team": "t"}, "the run record lacks 'name'"),
    ],
)
def test_resume_of_a_record_with_a_damaged_config_names_the_manifest(
    swarm: Swarm, finished_run: Path, config: object, problem: str
) -> None:
    manifest = finished_run / "manifest.json"
    data = json.loads(manifest.read_text())
    manifest.write_text(json.dumps(data | {"config": config}))
    done = swarm("sessions", "resume", finished_run, "go on")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{manifest}: {problem}" in done.stderr


def test_a_run_killed_mid_call_resumes_without_rerunning_the_shell_call(
    runs: Path, swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "slow.yaml"
    scenario.write_text(SLOW.format(roles=roles))
    process = swarm.start("run", scenario, "--workspace", tmp_path / "ws", "--plain")
    assert process.stdout is not None
    for line in process.stdout:
        if "calls shell" in line:
            break
    (record,) = runs.iterdir()
    journal, log = record / "journal.jsonl", record / "audit.jsonl"
    for _ in range(5000):  # until the shell call is decided (its handler is then running)
        if '"tool": "shell"' in journal.read_text() and '"shell"' in log.read_text():
            break
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)  # no cleanup, no summary: a crash
    process.communicate(timeout=30)
    assert not (record / "summary.json").exists()

    resumed = swarm("sessions", "resume", record.name, "--plain")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "All tidy." in resumed.stdout
    developer = swarm("sessions", "show", record.name, "orchestrator/developer#1")
    assert "NOT re-run" in developer.stdout and "sleep 60" in developer.stdout
    audit = [json.loads(line) for line in (record / "audit.jsonl").read_text().splitlines()]
    cut = [r for r in audit if r.get("outcome") == "interrupted"]
    assert {r["tool"] for r in cut} == {"shell", "developer"}
    assert swarm("audit", "verify", record.name).returncode == 0
    shown = swarm("runs", "show", record.name)
    assert "Segment 1: killed (interrupted)" in shown.stdout
    assert "Segment 2: end_turn" in shown.stdout and "Total: 2 segments" in shown.stdout


def test_runs_list_finds_a_run_by_its_workspace(
    swarm: Swarm, finished_run: Path, tmp_path: Path
) -> None:
    assert finished_run.name in swarm("runs", "list", tmp_path / "ws").stdout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert finished_run.name not in swarm("runs", "list", elsewhere).stdout


def test_events_hold_no_secret_that_the_sessions_keep(
    runs: Path, swarm: Swarm, roles: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "s3cr3t-value-9f8e7d6c"
    github = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    monkeypatch.setenv("DEPLOY_TOKEN", token)
    scenario = tmp_path / "leak.yaml"
    scenario.write_text(LEAK.format(roles=roles, token=token, github=github))
    done = swarm("run", scenario, "--workspace", tmp_path / "ws", "--plain")
    assert done.returncode == 0, done.stdout + done.stderr
    (record,) = runs.iterdir()
    events = (record / "events.jsonl").read_text()
    assert "deploy.txt" in events and "[REDACTED]" in events
    assert token not in events and github not in events
    assert token in (record / "sessions.db").read_bytes().decode(errors="replace")


LEAK = """team: {roles}
entry: researcher
task: What is in deploy.txt?
files: {{deploy.txt: "token {token} and {github}"}}
model:
  script:
    researcher:
      - call: read_file
        args: {{path: deploy.txt}}
      - text: It holds credentials.
"""


@pytest.mark.parametrize("form", ["id", "prefix", "last", "path"])
def test_every_command_that_takes_a_run_takes_its_id_prefix_last_and_path(
    swarm: Swarm, finished_run: Path, form: str
) -> None:
    ref = {
        "id": finished_run.name,
        "prefix": finished_run.name[:12],
        "last": "last",
        "path": str(finished_run),
    }[form]
    shown = swarm("audit", "show", ref, "--decision", "deny")
    assert shown.returncode == 0, shown.stderr
    assert "no-recursive-delete" in shown.stdout
    verified = swarm("audit", "verify", ref)
    assert verified.returncode == 0 and "chain intact" in verified.stdout
    summary = swarm("runs", "show", ref)
    assert summary.returncode == 0
    assert summary.stdout.startswith(f"Run {finished_run.name} (denied-shell)\n")


def test_last_without_any_run_is_one_line_and_exit_2(swarm: Swarm, runs: Path) -> None:
    done = swarm("audit", "show", "last")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: no run records in ")


def test_a_resumed_run_says_which_run_where_and_its_audit_head(
    runs: Path, swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "twice.yaml"
    scenario.write_text(TWICE.format(roles=roles))
    workspace = tmp_path / "ws"
    assert swarm("run", scenario, "--workspace", workspace, "--plain").returncode == 0
    (record,) = runs.iterdir()
    resumed = swarm("sessions", "resume", record.name, "Now", "the", "second", "part", "--plain")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    lines = resumed.stdout.splitlines()
    assert lines[:2] == [
        f"resuming: {record.name} ({record})",
        f"workspace: {workspace.resolve()}",
    ]
    head = json.loads((record / "summary.json").read_text())["audit"]
    assert lines[-1] == f"Audit head: {head['records']} records, MAC {head['mac']}"


WRITES_TWICE = """\
team: {roles}
task: Build it.
model:
  script:
    orchestrator:
      - call: developer
        args: {{task: build the first part}}
      - text: First part built.
      - call: developer
        args: {{task: build the second part}}
      - text: Second part built.
    developer:
      - call: write_file
        args: {{path: one.txt, content: "one"}}
      - text: built the first part
      - call: write_file
        args: {{path: two.txt, content: "two"}}
      - text: built the second part
"""


def test_a_resumed_run_says_its_sandbox_its_earlier_files_and_all_its_calls(
    runs: Path, swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "twice.yaml"
    scenario.write_text(WRITES_TWICE.format(roles=roles))
    first = swarm("run", scenario, "--workspace", tmp_path / "ws", "--plain")
    assert first.returncode == 0, first.stderr
    sandbox = next(line for line in first.stdout.splitlines() if line.startswith("sandbox: "))
    (record,) = runs.iterdir()

    resumed = swarm("sessions", "resume", record.name, "Now", "the", "second", "part", "--plain")

    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    lines = resumed.stdout.splitlines()
    assert lines[2] == sandbox
    earlier = lines.index("Files of the earlier segments:")
    assert lines[earlier + 1] == "  + one.txt  (added)  by orchestrator/developer#1"
    assert "  + two.txt  (added)  by orchestrator/developer#2" in lines[:earlier]
    shown = swarm("runs", "show", record.name)
    assert "Tool calls: 4 allowed, 0 denied" in shown.stdout.splitlines()
    (listed,) = json.loads(swarm("runs", "list", "--all", "--json").stdout)
    assert (listed["calls"], listed["segments"]) == (4, 2)
