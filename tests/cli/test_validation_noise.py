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
