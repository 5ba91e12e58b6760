"""``swarm validate``, ``swarm graph`` and ``swarm test``."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any as Swarm


def test_validate_accepts_the_default_team(swarm: Swarm, roles: Path) -> None:
    done = swarm("validate", roles)
    assert done.returncode == 0, done.stderr
    assert "ok:" in done.stdout and "entry 'orchestrator'" in done.stdout


def test_validate_lists_every_problem_with_file_and_field(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    team = tmp_path / "team"
    shutil.copytree(roles, team)
    (team / "developer.yaml").write_text(
        (team / "developer.yaml").read_text().replace("tools: [read_file,", "tools: [raed_file,")
    )
    (team / "tester.yaml").write_text((team / "tester.yaml").read_text() + "\ncolour: blue\n")
    done = swarm("validate", team)
    assert done.returncode == 2
    assert "developer.yaml" in done.stderr or "tester.yaml" in done.stderr
    assert "field 'colour'" in done.stderr


def test_validate_scenario_checks_script_against_the_team(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"team: {roles}\ntask: x\nmodel:\n  script:\n    orchestrator:\n"
        "      - call: shell\n        args: {command: ls}\n    ghost:\n      - text: boo\n"
    )
    done = swarm("validate", scenario)
    assert done.returncode == 2
    assert "'ghost' is not a role" in done.stderr
    assert "turn 1 of 'orchestrator' calls 'shell'" in done.stderr


def test_graph_prints_mermaid_and_dot(swarm: Swarm, roles: Path) -> None:
    mermaid = swarm("graph", roles)
    assert mermaid.returncode == 0 and mermaid.stdout.startswith("flowchart TD")
    assert "-->" in mermaid.stdout
    dot = swarm("graph", roles, "--format", "dot")
    assert dot.returncode == 0 and dot.stdout.startswith("digraph team {")
    assert '"orchestrator" -> "developer";' in dot.stdout


def test_all_examples_pass_as_tests(swarm: Swarm, examples: Path) -> None:
    done = swarm("test", examples, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1] == "4 passed, 0 failed"


def test_failing_expectation_fails_the_test_run(swarm: Swarm, roles: Path, tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"team: {roles}\ntask: x\nmodel: {{script: {{orchestrator: [{{text: hello}}]}}}}\n"
        "expect:\n  final_contains: [goodbye]\n  files: {out.txt: null}\n"
    )
    done = swarm("test", scenario)
    assert done.returncode == 1
    assert "FAILED" in done.stdout
    assert "final_contains: the final answer does not contain 'goodbye'" in done.stdout
    assert "files: 'out.txt' does not exist in the workspace" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "0 passed, 1 failed"


def test_validate_warns_about_delegated_roles_without_script_turns(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"team: {roles}\ntask: x\nmodel:\n  script:\n    orchestrator:\n"
        "      - call: developer\n        args: {task: build}\n"
        "      - call: reviewer\n        args: {task: check}\n"
        "      - text: done\n"
        "    developer#1:\n      - call: tester\n        args: {task: test}\n"
        "      - text: built\n"
    )
    done = swarm("validate", scenario)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stdout.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 2, done.stdout
    assert f"{scenario}:8: field 'model.script.orchestrator.1'" in warnings[0]
    assert "delegates to 'reviewer', which has no turns" in warnings[0]
    assert f"{scenario}:12: field 'model.script.developer#1.0'" in warnings[1]
    assert "delegates to 'tester', which has no turns" in warnings[1]


def test_validate_warns_about_an_entry_scripted_only_per_instance(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"team: {roles}\ntask: x\nmodel:\n  script:\n    orchestrator#1:\n      - text: hi\n"
    )
    done = swarm("validate", scenario)
    assert f"warning: {scenario}:4: field 'model.script'" in done.stdout
    assert "the entry role 'orchestrator' has no turns" in done.stdout
    assert "'orchestrator#1' is never played" in done.stdout
