"""The tests' fork server runs ``swarm`` as a real process does: the same exit code,
output and errors for the same arguments, environment and working directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from swarm_command import run_swarm

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
