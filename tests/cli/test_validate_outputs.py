"""``swarm validate`` checks each role's ``output:`` schema and names file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def test_swarm_validate_reports_a_bad_schema_with_file_and_line(tmp_path: Path, swarm: Any) -> None:
    roles = tmp_path / "roles"
    roles.mkdir()
    (roles / "lead.yaml").write_text("system: s\ndelegates: [reviewer]\n")
    (roles / "reviewer.yaml").write_text(
        "system: s\noutput:\n  type: object\n  required: verdict\n"
    )
    done = swarm("validate", roles)
    assert done.returncode == 2
    assert f"{roles / 'reviewer.yaml'}:4: field 'output.required'" in done.stderr
    assert "Traceback" not in done.stderr


def test_validate_knows_final_answer_and_agents_come_with_output_and_delegates(
    tmp_path: Path, swarm: Any
) -> None:
    roles = tmp_path / "roles"
    roles.mkdir()
    (roles / "lead.yaml").write_text("system: s\ndelegates: [typed, plain]\n")
    (roles / "typed.yaml").write_text("system: s\noutput: {type: object}\n")
    (roles / "plain.yaml").write_text("system: s\n")
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "team: roles\nentry: lead\ntask: t\nmodel:\n  script:\n"
        "    lead: [{call: agents, args: {action: status}}, {text: done}]\n"
        "    typed: [{call: final_answer, args: {}}]\n"
        "    plain: [{call: final_answer, args: {}}]\n"
    )
    done = swarm("validate", scenario)
    assert done.returncode == 2
    assert "turn 1 of 'plain' calls 'final_answer', which the role does not have" in done.stderr
    assert "'typed' calls" not in done.stderr and "'lead' calls" not in done.stderr
