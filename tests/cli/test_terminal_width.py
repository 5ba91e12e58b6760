"""What the command prints at 80 columns and into a pipe: ids and paths a user copies are
never cut or wrapped, tables fit, counts read as English, an unknown cost says so."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any as Swarm

import pytest

NARROW = 80
# a record path far longer than the width, as a deep project checkout gives
DEEP = "a-project-directory-with-a-long-name/and-a-runs-directory-below-it/runs"


@pytest.fixture
def run_id(swarm: Swarm, examples: Path, tmp_path: Path) -> str:
    """One finished run of a scenario with a sub-agent, recorded deep below ``tmp_path``."""
    done = swarm(
        "run", examples / "build-a-calculator.yaml", "--workspace", "ws", "--runs-dir", DEEP
    )
    assert done.returncode == 0, done.stderr
    (record,) = (tmp_path / DEEP).iterdir()
    return record.name


def whole_lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def test_run_ids_are_whole_in_runs_list_at_80_columns(
    swarm: Swarm, run_id: str, tmp_path: Path
) -> None:
    done = swarm("runs", "list", "--all", "--runs-dir", DEEP, columns=NARROW)
    assert done.returncode == 0, done.stderr
    assert any(line.startswith(run_id) for line in whole_lines(done.stdout)), done.stdout
    assert all(len(line) <= NARROW for line in whole_lines(done.stdout)), done.stdout


def test_runs_show_keeps_the_record_path_on_one_line_when_piped(
    swarm: Swarm, run_id: str, tmp_path: Path
) -> None:
    done = swarm("runs", "show", run_id, "--runs-dir", DEEP, columns=NARROW)
    assert done.returncode == 0, done.stderr
    record = (tmp_path / DEEP / run_id).resolve()
    assert f"Record: {record}" in whole_lines(done.stdout)
    assert any(
        re.fullmatch(r"Audit head: \d+ records, MAC [0-9a-f]{64}", line)
        for line in whole_lines(done.stdout)
    )


def test_the_run_summary_keeps_the_record_path_on_one_line(
    swarm: Swarm, examples: Path, tmp_path: Path
) -> None:
    done = swarm(
        "run",
        examples / "denied-shell.yaml",
        "--workspace",
        "ws",
        "--runs-dir",
        DEEP,
        columns=NARROW,
    )
    assert done.returncode == 0, done.stderr
    (record,) = (tmp_path / DEEP).iterdir()
    assert f"Run record: {record.resolve()}" in whole_lines(done.stdout)


def test_sessions_list_keeps_session_ids_and_agent_paths_whole_at_80_columns(
    swarm: Swarm, run_id: str
) -> None:
    done = swarm("sessions", "list", run_id, "--runs-dir", DEEP, columns=NARROW)
    assert done.returncode == 0, done.stderr
    rows = [line for line in whole_lines(done.stdout) if re.match(r"[0-9a-f]{12}  ", line)]
    assert len(rows) == 5, done.stdout  # the orchestrator and its four sub-agents
    assert any("orchestrator/developer#1/tester#1" in row for row in rows)
    assert all(len(line) <= NARROW for line in rows), done.stdout


def test_audit_show_at_80_columns_gives_each_call_whole_lines(
    swarm: Swarm, run_id: str, tmp_path: Path
) -> None:
    done = swarm("audit", "show", tmp_path / DEEP / run_id, columns=NARROW)
    assert done.returncode == 0, done.stderr
    lines = whole_lines(done.stdout)
    calls = [line for line in lines if re.match(r"\d\d:\d\d:\d\d (allow|deny|invalid) ", line)]
    assert len(calls) == 9, done.stdout  # the run's nine tool calls, one line each
    assert any(" orchestrator/developer#1/tester#1 shell " in line for line in calls)
    assert all(len(line) <= NARROW for line in calls), done.stdout
    assert "9 calls" in done.stdout


def test_audit_show_on_a_wide_terminal_is_a_table(
    swarm: Swarm, run_id: str, tmp_path: Path
) -> None:
    done = swarm("audit", "show", tmp_path / DEEP / run_id, columns=200)
    assert re.search(r"time\s+┃\s+agent\s+┃\s+tool", done.stdout), done.stdout


def test_counts_of_one_are_singular(
    swarm: Swarm, examples: Path, roles: Path, tmp_path: Path
) -> None:
    team = tmp_path / "team"
    team.mkdir()
    (team / "solo.md").write_text(
        "---\nname: solo\ndescription: Works alone.\n---\nYou work alone.\n"
    )
    validated = swarm("validate", team)
    assert validated.returncode == 0, validated.stderr
    assert ": 1 role," in validated.stdout
    ran = swarm("run", examples / "denied-shell.yaml", "--workspace", "ws", "--plain")
    assert "finished (end_turn) after 2 iterations" in ran.stdout
    verified = swarm("audit", "verify", ran.stdout.split("Run record: ")[1].split()[0])
    assert verified.returncode == 0, verified.stdout + verified.stderr
    output = ran.stdout + validated.stdout + verified.stdout
    assert not re.search(r"\b1 (roles|iterations|records|calls|segments|messages)\b", output)


def test_a_failed_run_shows_its_cost_as_unknown(swarm: Swarm, examples: Path) -> None:
    # a model whose prices are known, on a port where nothing listens: the run fails
    model = "openai-compatible:http://127.0.0.1:9/v1:gpt-4o"
    done = swarm(
        "run", examples / "denied-shell.yaml", "--model", model, "--workspace", "ws", "--plain"
    )
    assert done.returncode == 1
    assert "Stop reason: error." in done.stdout
    assert "(cost unknown)" in done.stdout
    assert "$0.0000" not in done.stdout
    assert "Traceback" not in done.stderr


def test_a_team_run_works_in_the_current_directory_and_says_so(
    swarm: Swarm, roles: Path, runs: Path, tmp_path: Path
) -> None:
    model = "openai-compatible:http://127.0.0.1:9/v1:x"  # nothing listens: it fails at once
    done = swarm("run", "--team", roles, "--model", model, "--plain", "What files are here?")
    assert done.stdout.splitlines()[0] == f"workspace: {tmp_path.resolve()}"
    (record,) = runs.iterdir()
    assert f'"workspace": "{tmp_path.resolve()}"' in (record / "manifest.json").read_text()
    assert not (tmp_path / ".swarm" / "workspaces").exists()


def test_a_team_run_started_in_the_home_directory_needs_a_workspace(
    swarm: Swarm, roles: Path, runs: Path, tmp_path: Path
) -> None:
    model = "openai-compatible:http://127.0.0.1:9/v1:x"
    done = swarm("run", "--team", roles, "--model", model, "hi", env={"HOME": str(tmp_path)})
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    (error,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert str(tmp_path.resolve()) in error and "--workspace" in error
    assert not runs.exists() and list(tmp_path.iterdir()) == []


def test_a_scenario_keeps_its_own_workspace_and_says_where(
    swarm: Swarm, examples: Path, tmp_path: Path
) -> None:
    done = swarm("run", examples / "denied-shell.yaml", "--plain")
    workspace = tmp_path.resolve() / ".swarm" / "workspaces" / "denied-shell"
    assert done.stdout.splitlines()[0] == f"workspace: {workspace}"
    assert (workspace / "notes.txt").read_text() == "keep me"


def test_swarm_test_keep_says_where_each_workspace_is(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "hello.yaml"
    scenario.write_text(
        f"team: {roles}\ntask: x\nfiles: {{seed.txt: seeded}}\n"
        "model: {script: {orchestrator: [{text: hi}]}}\nexpect: {final_contains: [hi]}\n"
    )
    done = swarm("test", scenario, "--keep")
    assert done.returncode == 0, done.stdout
    (line,) = [line for line in done.stdout.splitlines() if "workspace:" in line]
    workspace = Path(line.split("workspace:")[1].strip())
    assert (workspace / "seed.txt").read_text() == "seeded"


def test_a_reader_leaving_the_pipe_does_not_break_the_run(
    swarm: Swarm, examples: Path, runs: Path
) -> None:
    process = swarm.start("run", examples / "build-a-calculator.yaml", "--workspace", "ws")
    assert process.stdout is not None and process.stderr is not None
    while not process.stdout.readline().startswith("[orchestrator] delegates to"):
        pass  # the run has begun
    process.stdout.close()  # as `| head` does once it has its lines
    with process.stderr:
        errors = process.stderr.read()
    process.wait(timeout=120)
    assert "Traceback" not in errors, errors
    (record,) = runs.iterdir()
    assert '"stop_reason": "end_turn"' in (record / "summary.json").read_text()
