"""``swarm init``: a team that validates and passes ``swarm test`` as written."""

from __future__ import annotations

from pathlib import Path
from typing import Any as Swarm

WRITTEN = [
    "team/lead.yaml",
    "team/writer.yaml",
    "team/reviewer.yaml",
    "policies/team.yaml",
    "scenario.yaml",
    ".gitignore",
]


def test_init_writes_a_team_that_validates_and_passes_its_test(
    swarm: Swarm, tmp_path: Path
) -> None:
    done = swarm("init", "project")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        *(f"wrote {Path('project', name)}" for name in WRITTEN),
        f"next: swarm test {Path('project/scenario.yaml')}",
    ]
    checked = swarm("validate", "project/scenario.yaml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith("ok: project/scenario.yaml: 3 roles, entry 'lead'")
    assert "warning" not in checked.stdout
    tested = swarm("test", "project/scenario.yaml")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert tested.stdout.strip().splitlines()[-1] == "1 passed, 0 failed"
    assert swarm("validate", "project/team").returncode == 0


def test_init_without_a_directory_writes_here(swarm: Swarm, tmp_path: Path) -> None:
    done = swarm("init")
    assert done.returncode == 0, done.stderr
    assert all((tmp_path / name).is_file() for name in WRITTEN)
    assert done.stdout.splitlines()[-1] == "next: swarm test scenario.yaml"


def test_init_overwrites_nothing_and_writes_nothing_when_a_file_exists(
    swarm: Swarm, tmp_path: Path
) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "scenario.yaml").write_text("mine\n")
    done = swarm("init", "project")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        f"error: {Path('project/scenario.yaml')}: already exists; swarm init overwrites nothing"
    )
    assert (tmp_path / "project" / "scenario.yaml").read_text() == "mine\n"
    assert sorted(p.name for p in (tmp_path / "project").iterdir()) == ["scenario.yaml"]
    assert done.stdout == ""


def test_init_into_a_file_is_refused(swarm: Swarm, tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("x")
    done = swarm("init", "taken")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "taken: cannot write a team here: it is a file" in done.stderr


def test_init_that_fails_half_way_takes_back_what_it_wrote(swarm: Swarm, tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "policies").write_text("a file where a directory goes\n")
    done = swarm("init", "project")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: {Path('project/policies')}: cannot write the team")
    assert sorted(p.name for p in (tmp_path / "project").iterdir()) == ["policies"]


def test_validate_refuses_what_is_not_a_file(swarm: Swarm) -> None:
    done = swarm("validate", "/dev/zero")
    assert done.returncode == 2
    assert done.stderr == "error: /dev/zero: not a file or a directory\n"


def test_init_ignores_the_workspaces_in_git_and_keeps_a_gitignore_it_finds(
    swarm: Swarm, tmp_path: Path
) -> None:
    assert swarm("init", "fresh").returncode == 0
    assert ".swarm/" in (tmp_path / "fresh" / ".gitignore").read_text().splitlines()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / ".gitignore").write_text("*.pyc\n")
    done = swarm("init", "mine")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "mine" / ".gitignore").read_text() == "*.pyc\n"
    assert done.stdout.splitlines()[-2] == (
        f"note: {Path('mine/.gitignore')} does not list .swarm/, where runs keep workspaces: add it"
    )
