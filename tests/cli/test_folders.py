"""``swarm validate DIR`` and ``swarm test DIR`` agree on what a folder holds: its
scenarios (and its subfolders'), and team folders, which validate checks and test skips."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any as Swarm

ROLE = "description: Works alone.\nsystem: You work alone.\ntools: [read_file]\n"


def _suite(swarm: Swarm, tmp_path: Path) -> Path:
    """``swarm init``'s project, a second scenario in a subfolder (on the same team), a
    team folder no scenario names, and a folder of policies."""
    assert swarm("init", "proj").returncode == 0
    proj = tmp_path / "proj"
    (proj / "suite").mkdir()
    text = (proj / "scenario.yaml").read_text()
    second = text.replace("name: hello", "name: second").replace("team: team", "team: ../team")
    second = second.replace("policy: policies/team.yaml", "policy: ../policies/team.yaml")
    (proj / "suite" / "second.yaml").write_text(second)
    (proj / "teams" / "solo").mkdir(parents=True)
    (proj / "teams" / "solo" / "solo.yaml").write_text(ROLE)
    return proj


def test_validate_and_test_find_the_same_scenarios_in_a_folder(
    swarm: Swarm, tmp_path: Path
) -> None:
    _suite(swarm, tmp_path)
    checked = swarm("validate", "proj")
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.splitlines() == [
        f"ok: {Path('proj/scenario.yaml')}: 3 roles, entry 'lead', delegation depth 1",
        f"ok: {Path('proj/suite/second.yaml')}: 3 roles, entry 'lead', delegation depth 1",
        f"ok: {Path('proj/teams/solo')}: 1 role, entry 'solo', delegation depth 0",
    ]
    assert checked.stderr == ""
    tested = swarm("test", "proj")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    ran = [line.split("::")[0] for line in tested.stdout.splitlines() if "::" in line]
    assert ran == [str(Path("proj/scenario.yaml")), str(Path("proj/suite/second.yaml"))]
    assert tested.stdout.splitlines()[-1] == "2 passed, 0 failed"


def test_test_says_a_folder_of_teams_holds_no_scenario(swarm: Swarm, tmp_path: Path) -> None:
    _suite(swarm, tmp_path)
    done = swarm("test", "proj/teams")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {Path('proj/teams')}: holds no scenario (a YAML file with 'task:'), only"
        f" 1 team folder ({Path('proj/teams/solo')}): `swarm validate` checks them"
    ]
    alone = swarm("test", "proj/teams/solo")
    assert alone.returncode == 2
    assert "a team folder (role files), not a scenario" in alone.stderr
    assert swarm("validate", "proj/teams/solo").returncode == 0


def test_a_folder_with_a_bad_scenario_reports_it_without_dumping_its_values(
    swarm: Swarm, tmp_path: Path
) -> None:
    proj = _suite(swarm, tmp_path)
    second = proj / "suite" / "second.yaml"
    text = second.read_text()
    task = "task: Write hello.py, which prints a greeting, and have it reviewed.\n"
    steps = "".join(
        f"  step{n}: write part {n} of hello.py and have it reviewed\n" for n in range(9)
    )
    second.write_text(text.replace(task, "task:\n" + steps))
    line = text.splitlines().index(task.strip()) + 1
    checked = swarm("validate", "proj")
    assert checked.returncode == 2
    assert checked.stderr.splitlines() == [
        f"{Path('proj/suite/second.yaml')}:{line}: field 'task': Input should be a valid string"
        " (got a mapping of 9 keys)",
        "1 problem found",
    ]
    # the other scenario and the team are still checked, and said to be right
    assert f"ok: {Path('proj/scenario.yaml')}" in checked.stdout
    assert f"ok: {Path('proj/teams/solo')}" in checked.stdout
    tested = swarm("test", "proj")
    assert tested.returncode == 1
    assert "got a mapping of 9 keys" in tested.stdout and "step0" not in tested.stdout


def test_the_examples_folder_is_checked_as_it_is_tested(swarm: Swarm, examples: Path) -> None:
    checked = swarm("validate", examples)
    assert checked.returncode == 0, checked.stderr
    scenarios = sorted(examples.glob("*.yaml"))
    for scenario in scenarios:
        assert f"ok: {scenario}: " in checked.stdout
    assert checked.stderr == ""
    assert "{" not in checked.stdout


def test_a_folder_validate_refuses_an_entry_it_could_not_place(
    swarm: Swarm, tmp_path: Path
) -> None:
    _suite(swarm, tmp_path)
    done = swarm("validate", "proj", "--entry", "lead")
    assert done.returncode == 2
    assert done.stderr == (
        f"error: {Path('proj')}: --entry is for one team, scenario or policy; this folder"
        " holds 2 scenarios and 2 teams: give one of them\n"
    )
    shutil.rmtree(tmp_path / "proj")
