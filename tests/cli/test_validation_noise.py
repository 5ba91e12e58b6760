"""One typo is one problem: the line it is on, the field as the file spells it, a
suggestion, and none of pydantic's union members, input dumps or field lists."""

from __future__ import annotations

from pathlib import Path
from typing import Any as Swarm

POLICY = """\
rules:
  - id: no-rm
    deny: [shell]
    args:
      command:
        shell:
          - progam: [rm]
"""


def test_a_script_typo_is_one_problem_on_its_line(swarm: Swarm, tmp_path: Path) -> None:
    assert swarm("init", "proj").returncode == 0
    scenario = tmp_path / "proj" / "scenario.yaml"
    text = scenario.read_text()
    scenario.write_text(text.replace("      - call: writer", "      - cal: writer", 1))
    line = text.splitlines().index("      - call: writer") + 1
    done = swarm("validate", "proj/scenario.yaml")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"{Path('proj/scenario.yaml')}:{line}: field 'model.script.lead.0.cal': unknown field;"
        " did you mean 'call'?",
        "1 problem found",
    ]
    tested = swarm("test", "proj/scenario.yaml")
    assert tested.returncode == 1 and "model.str" not in tested.stdout + tested.stderr
    assert not (tmp_path / "proj" / ".swarm").exists()


def test_a_shell_rule_typo_is_one_problem_naming_no_internal_type(
    swarm: Swarm, tmp_path: Path
) -> None:
    (tmp_path / "pol.yaml").write_text(POLICY)
    done = swarm("validate", "pol.yaml")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "pol.yaml:7: field 'rules.0.args.command.shell.0.progam': unknown field;"
        " did you mean 'program'?",
        "1 problem found",
    ]


def _init(swarm: Swarm, tmp_path: Path) -> Path:
    assert swarm("init", "proj").returncode == 0
    return tmp_path / "proj"


def test_a_misspelt_role_field_is_one_problem_with_its_suggestion(
    swarm: Swarm, tmp_path: Path
) -> None:
    lead = _init(swarm, tmp_path) / "team" / "lead.yaml"
    text = lead.read_text()
    lead.write_text(text.replace("delegates:", "delegate:", 1))
    line = text.splitlines().index("delegates: [writer, reviewer]") + 1
    expected = [
        f"{Path('proj/team/lead.yaml')}:{line}: field 'delegate': unknown field;"
        " did you mean 'delegates'?",
        "1 problem found",
    ]
    for target in ("proj/team", "proj/scenario.yaml"):
        done = swarm("validate", target)
        # neither the implicit orchestrator's note nor the script's calls to the
        # delegates the role seemed not to have: the typo, once, without a field list
        assert (done.returncode, done.stdout, done.stderr.splitlines()) == (2, "", expected)
    tested = swarm("test", "proj/scenario.yaml")
    assert tested.returncode == 1
    assert "did you mean 'delegates'?" in tested.stdout
    assert "fields:" not in tested.stdout + tested.stderr
    assert not (tmp_path / "proj" / ".swarm").exists()


def test_a_delegate_that_is_no_role_is_told_the_role_it_was_meant_to_be(
    swarm: Swarm, tmp_path: Path
) -> None:
    team = tmp_path / "team"
    team.mkdir()
    (team / "lead.yaml").write_text("description: leads\nsystem: Lead.\ndelegates: [testr]\n")
    (team / "tester.yaml").write_text("description: tests\nsystem: Test.\n")
    done = swarm("validate", "team")
    assert done.returncode == 2
    # one problem: not also "cannot tell the entry role" (tester is delegated to by no one
    # only because of the typo)
    assert done.stderr.splitlines() == [
        f"{Path('team/lead.yaml')}:3: field 'delegates': delegate 'testr' is not a role;"
        " did you mean 'tester'?",
        "1 problem found",
    ]
    ran = swarm("run", "--team", "team", "--model", "local", "hello")
    assert ran.returncode == 2
    assert ran.stderr.splitlines() == [
        f"error: {Path('team/lead.yaml')}:3: field 'delegates': delegate 'testr' is not a"
        " role; did you mean 'tester'?"
    ]
    assert ran.stdout == ""


def test_a_team_warning_is_printed_once_by_each_command(swarm: Swarm, tmp_path: Path) -> None:
    proj = _init(swarm, tmp_path)
    writer = proj / "team" / "writer.yaml"
    writer.write_text(writer.read_text().replace("description: ", "# description: ", 1))
    scenario = proj / "scenario.yaml"
    # a tool timeout makes the run build its team a second time (and a third)
    scenario.write_text(scenario.read_text() + "limits: {tool_timeout: 30}\n")
    said = "role 'writer' has no description"
    checked = swarm("validate", "proj/scenario.yaml")
    assert checked.returncode == 0
    assert (checked.stdout.count(said), checked.stderr.count(said)) == (1, 0)
    ran = swarm("run", "proj/scenario.yaml")
    assert ran.returncode == 0, ran.stderr
    assert (ran.stdout.count(said), ran.stderr.count(said)) == (0, 1)
    assert f"warning: {said}" in ran.stderr
    tested = swarm("test", "proj/scenario.yaml")
    assert tested.returncode == 0
    assert (tested.stdout + tested.stderr).count(said) == 1
