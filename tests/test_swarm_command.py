"""The tests' fork server runs ``swarm`` as a real process does: the same exit code,
output and errors for the same arguments, environment and working directory."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from swarm_command import ForkedRun, run_swarm, start_swarm

REPO = Path(__file__).parents[1]

COMMANDS = {
    "version": ["--version"],
    "a team": ["validate", str(REPO / "roles")],
    "an example": ["validate", str(REPO / "examples" / "denied-shell.yaml")],
    "an unknown command": ["bogus"],
    "a folder that is not there": ["runs", "list", "--runs-dir", "not-there"],
    "a scenario with a mistake": ["validate", "broken.yaml"],
}


@pytest.mark.parametrize("name", COMMANDS)
def test_a_forked_run_gives_what_a_process_of_its_own_gives(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken.yaml").write_text("team: roles\nentry: [1\n")
    env = {**os.environ, "COLUMNS": "90", "NO_COLOR": "1"}
    forked = run_swarm(COMMANDS[name], cwd=tmp_path, env=env)
    monkeypatch.setenv("SWARM_TEST_FORK", "0")
    real = run_swarm(COMMANDS[name], cwd=tmp_path, env=env)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    )
    assert forked.stdout or forked.stderr


def test_a_run_that_sets_pythonpath_starts_a_python_of_its_own(tmp_path: Path) -> None:
    """The server imported swarm from its own path; a run given another one must get it."""
    fake = tmp_path / "elsewhere" / "swarm"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text("print('the swarm on PYTHONPATH')\n")
    env = {**os.environ, "PYTHONPATH": str(fake.parent), "PYTHONSAFEPATH": "1"}
    done = run_swarm(["--version"], cwd=tmp_path, env=env)
    assert done.stdout == "the swarm on PYTHONPATH\n"


def test_the_working_directory_and_environment_are_the_runs_own(tmp_path: Path) -> None:
    here = tmp_path / "here"
    here.mkdir()
    (here / "only-here.yaml").write_text("team: roles\nentry: [1\n")
    done = run_swarm(["validate", "only-here.yaml"], cwd=here, env=dict(os.environ))
    assert done.returncode == 2
    assert done.stderr.startswith("only-here.yaml:3: invalid YAML")
    widest = {}
    for columns in (40, 200):  # the help is wrapped at the width the environment says
        env = {**os.environ, "COLUMNS": str(columns)}
        lines = run_swarm(["--help"], cwd=here, env=env).stdout.splitlines()
        widest[columns] = max(len(line) for line in lines)
    assert widest[40] < widest[200]


SLEEPER = """\
name: sleeper
team: team
task: Wait.
model:
  script:
    lead:
      - call: shell
        args: {command: "sleep 60 && touch woke"}
      - text: done
"""


@pytest.mark.parametrize("fork", ["1", "0"])
def test_a_started_run_can_be_polled_killed_and_waited_for(
    fork: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWARM_TEST_FORK", fork)
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "lead.yaml").write_text(
        "name: lead\ndescription: Waits.\nsystem: You wait.\ntools: [shell]\n"
    )
    (tmp_path / "sleeper.yaml").write_text(SLEEPER)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    run = start_swarm(["run", "sleeper.yaml", "--workspace", "ws"], cwd=tmp_path, env=env)
    try:
        assert isinstance(run, ForkedRun) == (fork == "1")
        deadline = time.monotonic() + 60
        while not (tmp_path / "state" / "swarm" / "runs").is_dir():  # the run has begun
            assert run.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        assert run.poll() is None
        run.send_signal(signal.SIGKILL)
        assert run.wait(timeout=30) == -signal.SIGKILL
        assert run.poll() == -signal.SIGKILL
        assert not (tmp_path / "ws" / "woke").exists()
    finally:  # a failed check leaves no run behind for a later test to find
        run.kill()
        run.wait(timeout=30)
