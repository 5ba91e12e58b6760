"""A user's mistake gets one line naming what and where, and exit code 2: no traceback."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
from pathlib import Path
from typing import Any as Swarm

import pytest


def assert_one_clear_line(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    for word in words:
        assert word in errors[0]


@pytest.mark.parametrize(
    ("where", "says"),
    [("a-file", "must be a directory"), ("/proc/no-such/ws", "cannot use this as the workspace")],
)
def test_a_workspace_that_cannot_be_one(
    swarm: Swarm, examples: Path, tmp_path: Path, where: str, says: str
) -> None:
    (tmp_path / "a-file").write_text("not a directory\n")
    done = swarm("run", examples / "denied-shell.yaml", "--workspace", where, "--plain")
    assert_one_clear_line(done, where, says)
    assert (tmp_path / "a-file").read_text() == "not a directory\n"


def test_a_runs_dir_that_is_a_file(swarm: Swarm, examples: Path, tmp_path: Path) -> None:
    (tmp_path / "runs").write_text("")
    done = swarm("run", examples / "denied-shell.yaml", "--workspace", "ws", "--runs-dir", "runs")
    assert_one_clear_line(done, "runs", "cannot create the run record")
    assert not (tmp_path / "ws").exists()  # found before the workspace is made and seeded


@pytest.mark.parametrize("command", ["list", "show"])
def test_a_file_that_is_not_a_sessions_database(swarm: Swarm, tmp_path: Path, command: str) -> None:
    (tmp_path / "fake.db").write_text("junk\n")
    done = swarm("sessions", command, "fake.db", *(["lead"] if command == "show" else []))
    assert_one_clear_line(done, "fake.db", "not a sessions database")
    assert (tmp_path / "fake.db").read_text() == "junk\n"


def test_version(swarm: Swarm) -> None:
    done = swarm("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("swarm ") and done.stdout.split()[1][0].isdigit()


def no_records(runs: Path) -> bool:
    return not runs.exists() or not any(runs.iterdir())


@pytest.mark.parametrize(
    ("spec", "variable"),
    [("openai:gpt-4o", "OPENAI_API_KEY"), ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY")],
)
def test_a_missing_api_key_stops_the_run_before_it_starts(
    swarm: Swarm, examples: Path, runs: Path, tmp_path: Path, spec: str, variable: str
) -> None:
    done = swarm("run", examples / "denied-shell.yaml", "--model", spec, "--workspace", "ws")
    assert_one_clear_line(done, variable, spec)
    assert "retry" not in done.stderr  # nothing was sent
    assert no_records(runs) and not (tmp_path / "ws").exists()


@pytest.mark.parametrize(
    ("cassette", "says"),
    [
        ("nope.jsonl", "no such cassette"),
        ("junk.jsonl", "not a cassette"),
        ("empty.jsonl", "the cassette is empty"),
        ("a-dir", "cannot read the cassette"),
    ],
)
def test_a_replay_cassette_that_is_not_one(
    swarm: Swarm, examples: Path, runs: Path, tmp_path: Path, cassette: str, says: str
) -> None:
    (tmp_path / "junk.jsonl").write_text('{"not": "a recorded call"}\n')
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "a-dir").mkdir()
    done = swarm("run", examples / "denied-shell.yaml", "--replay", cassette, "--workspace", "ws")
    assert_one_clear_line(done, cassette, says)
    assert no_records(runs) and not (tmp_path / "ws").exists()


def test_a_bad_line_of_a_cassette_is_named(swarm: Swarm, examples: Path, tmp_path: Path) -> None:
    recorded = '{"path": "", "call": 0, "request": {}, "events": []}\n'
    (tmp_path / "c.jsonl").write_text(recorded + "{half a line\n")
    done = swarm("run", examples / "denied-shell.yaml", "--replay", "c.jsonl")
    assert_one_clear_line(done, "c.jsonl:2", "not a cassette")


@pytest.mark.parametrize(
    ("cassette", "says"),
    [("no-dir/c.jsonl", "does not exist"), ("a-dir", "this is a directory")],
)
def test_a_record_cassette_that_cannot_be_written(
    swarm: Swarm, examples: Path, runs: Path, tmp_path: Path, cassette: str, says: str
) -> None:
    (tmp_path / "a-dir").mkdir()
    done = swarm("run", examples / "denied-shell.yaml", "--record", cassette, "--workspace", "ws")
    assert_one_clear_line(done, cassette, says)
    assert no_records(runs) and not (tmp_path / "ws").exists()


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["runs", "list", "nowhere"], ["nowhere", "no such directory"]),
        (["runs", "list", "a-file"], ["a-file", "not a directory"]),
        (["runs", "list", "--runs-dir", "a-file"], ["a-file", "--runs-dir is not a directory"]),
        (["runs", "show", "BADID"], ["BADID", "no run record"]),
        (["runs", "show", ""], ["give a run id"]),
        (["runs", "show", "a-dir"], ["a-dir", "not a run record"]),
        (["runs", "show", "no/such/run"], ["no/such/run", "no such run directory"]),
        (["runs", "show", "x", "--runs-dir", "nowhere"], ["nowhere", "does not exist"]),
        (["sessions", "resume", "BADID"], ["BADID", "no run record"]),
        (["audit", "verify", "BADID"], ["BADID", "no run record"]),
        (["audit", "show", "a-file"], ["a-file", "not an audit log"]),
        (["sessions", "list", "a-file"], ["a-file", "not a sessions database"]),
    ],
)
def test_run_records_that_are_not_there(
    swarm: Swarm, tmp_path: Path, args: list[str], words: list[str]
) -> None:
    (tmp_path / "a-file").write_text("some text\n")
    (tmp_path / "a-dir").mkdir()
    assert_one_clear_line(swarm(*args), *words)


def test_another_sqlite_database_is_not_read_as_sessions_nor_changed(
    swarm: Swarm, tmp_path: Path
) -> None:
    db = tmp_path / "other.db"
    with contextlib.closing(sqlite3.connect(db)) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
    before = db.read_bytes()
    assert_one_clear_line(swarm("sessions", "list", "other.db"), "other.db", "no sessions table")
    assert db.read_bytes() == before


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["run", "x.yaml", "--modle", "local"], "did you mean --model?"),
        (["test", "x.yaml", "--kep"], "did you mean --keep?"),
        (["rnu", "x.yaml"], "did you mean 'run'?"),
        (["runs", "lsit"], "did you mean 'list'?"),
        (["audit", "show", "x", "--decision", "dny"], "did you mean 'deny'?"),
    ],
)
def test_a_misspelt_flag_or_command_gets_a_suggestion(
    swarm: Swarm, args: list[str], hint: str
) -> None:
    done = swarm(*args)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert hint in done.stderr.splitlines()[-1]


@pytest.mark.parametrize(
    "args", [["-v", "runs", "list"], ["runs", "list", "-v"], ["runs", "-v", "list", "--verbose"]]
)
def test_verbose_before_or_after_the_command(swarm: Swarm, args: list[str]) -> None:
    done = swarm(*args)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
