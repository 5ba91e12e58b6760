"""``swarm test`` as a user runs it: failed agents, unfinished delegations, bad files."""

from __future__ import annotations

from pathlib import Path
from typing import Any as Swarm

# the orchestrator delegates to a reviewer whose script has no turns: that agent fails
BROKEN = """team: {roles}
task: review the work
model:
  script:
    orchestrator:
      - call: reviewer
        args: {{task: review it}}
      - text: all done
expect:
  stop_reason: end_turn
  final_contains: [done]
  delegations: [reviewer]
{extra}"""


def _hello(roles: Path, expect: str) -> str:
    """A scenario whose entry agent says hi, with ``expect`` (its YAML) after it."""
    return f"team: {roles}\ntask: x\nmodel: {{script: {{orchestrator: [{{text: hi}}]}}}}\n{expect}"


def _scenario(tmp_path: Path, roles: Path, extra: str = "", name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(BROKEN.format(roles=roles, extra=extra))
    return path


def test_sub_agent_ending_in_an_error_fails_the_scenario(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    done = swarm("test", _scenario(tmp_path, roles))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED" in done.stdout and "PASSED" not in done.stdout
    assert (
        "errors: the agent orchestrator/reviewer#1 ended in an error: the script has no"
        " turns for role 'reviewer'"
    ) in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "0 passed, 1 failed"


def test_failed_delegation_does_not_count_as_delegated(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    done = swarm("test", _scenario(tmp_path, roles))
    assert (
        "delegations: 'reviewer' was delegated to but never finished"
        " (orchestrator/reviewer#1: error)"
    ) in done.stdout


def test_every_failed_expectation_gets_a_line(swarm: Swarm, roles: Path, tmp_path: Path) -> None:
    extra = "  files: {report.md: null}\n  absent_files: [README.md]\n"
    scenario = _scenario(tmp_path, roles, extra + "  max_tokens: 1\n")
    scenario.write_text(scenario.read_text().replace("\ntask:", "\nfiles: {README.md: x}\ntask:"))
    done = swarm("test", scenario)
    lines = [line.strip().split(":", 1)[0] for line in done.stdout.splitlines()]
    assert done.returncode == 1
    for key in ("delegations", "files", "absent_files", "max_tokens", "errors"):
        assert key in lines, done.stdout


def test_expected_error_passes_when_it_comes(swarm: Swarm, roles: Path, tmp_path: Path) -> None:
    scenario = _scenario(
        tmp_path, roles, '  errors: ["reviewer#1: the script has no turns"]\n'
    ).read_text()
    (tmp_path / "s.yaml").write_text(scenario.replace("  delegations: [reviewer]\n", ""))
    done = swarm("test", tmp_path / "s.yaml")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASSED" in done.stdout


def test_expected_error_that_never_comes_fails(swarm: Swarm, roles: Path, tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(_hello(roles, "expect:\n  errors: [budget]\n"))
    done = swarm("test", scenario)
    assert done.returncode == 1
    assert "errors: no error of the run contains 'budget'" in done.stdout


def test_error_not_named_by_errors_still_fails(swarm: Swarm, roles: Path, tmp_path: Path) -> None:
    scenario = _scenario(tmp_path, roles, "  errors: [tester]\n")
    done = swarm("test", scenario)
    assert done.returncode == 1
    assert "errors: no error of the run contains 'tester'" in done.stdout
    assert "reviewer#1 ended in an error" in done.stdout
    assert "which no entry of errors expects" in done.stdout


def test_entry_error_is_expected_by_its_stop_reason(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"team: {roles}\ntask: x\nmodel: {{script: {{developer: [{{text: hi}}]}}}}\n"
        "expect:\n  stop_reason: error\n"
    )
    done = swarm("test", scenario)
    assert done.returncode == 0, done.stdout
    scenario.write_text(scenario.read_text().replace("stop_reason: error", "final_contains: []"))
    done = swarm("test", scenario)
    assert done.returncode == 1
    assert "errors: the entry agent ended in an error: the script has no turns" in done.stdout


def test_invalid_scenario_file_is_a_failed_test_and_the_others_run(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "a-bad.yaml").write_text(
        _hello(roles, "expect:\n  final_contains: [hi]\n  filez: {a: b}\n")
    )
    (suite / "b-good.yaml").write_text(_hello(roles, "expect:\n  final_contains: [hi]\n"))
    done = swarm("test", suite)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"{suite / 'a-bad.yaml'} ERROR  (invalid scenario file)" in done.stdout
    assert f"{suite / 'a-bad.yaml'}:6: field 'expect.filez'" in done.stdout
    assert "b-good.yaml::b-good PASSED" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "1 passed, 1 failed"


FAN_OUT = """team: {roles}
task: build three parts
model:
  script:
    orchestrator:
      - calls:
          - {{tool: developer, args: {{task: part one}}}}
          - {{tool: developer, args: {{task: part two}}}}
          - {{tool: developer, args: {{task: part three}}}}
      - text: all parts done
    developer#1:
      - call: write_file
        args: {{path: one.txt, content: first}}
      - text: wrote one.txt
    developer#2:
      - text: nothing to write
    developer:
      - call: write_file
        args: {{path: three.txt, content: third}}
      - text: wrote three.txt
expect:
  stop_reason: end_turn
  delegations: [developer#1, developer#2, developer#3]
  files: {{one.txt: first, three.txt: third}}
  absent_files: [two.txt]
"""


def test_parallel_fan_out_plays_each_instance_its_own_turns(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "fan.yaml"
    scenario.write_text(FAN_OUT.format(roles=roles))
    done = swarm("test", scenario)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fan.yaml::fan PASSED" in done.stdout


def test_bad_instance_key_is_named_with_its_line(swarm: Swarm, roles: Path, tmp_path: Path) -> None:
    scenario = tmp_path / "fan.yaml"
    scenario.write_text(FAN_OUT.format(roles=roles).replace("developer#2:", "developer#0:"))
    done = swarm("validate", scenario)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"{scenario}:15: field 'model.script.developer#0': 'developer#0' is not a script" in (
        done.stderr
    )
    assert done.stderr.strip().splitlines()[-1] == "1 problem found"


def test_errors_of_the_wrong_form_get_one_clear_line(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(_hello(roles, "expect:\n  errors: oops\n"))
    done = swarm("test", scenario)
    assert done.returncode == 1
    assert f"{scenario}:5: field 'expect.errors': give the texts of the errors" in done.stdout
    assert "tuple" not in done.stdout and "Traceback" not in done.stderr


def test_readme_fan_out_example_passes_as_written(
    swarm: Swarm, roles: Path, tmp_path: Path
) -> None:
    import re

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "developer#2" in b]
    scenario = tmp_path / "readme.yaml"
    scenario.write_text(
        f"team: {roles}\ntask: write add and sub\n{block}"
        "expect:\n  stop_reason: end_turn\n  delegations: [developer#1, developer#2]\n"
        "  files: {add.py: 'def add', sub.py: 'def sub'}\n"
    )
    done = swarm("test", scenario)
    assert done.returncode == 0, done.stdout + done.stderr


def _denied_by(examples: Path, tmp_path: Path, rule: str) -> Path:
    """The denied-shell example, expecting the shell call denied by ``rule``."""
    text = (examples / "denied-shell.yaml").read_text()
    text = text.replace("team: ../roles", f"team: {examples.parent / 'roles'}")
    text = text.replace("      tool: shell\n", f"      tool: shell\n      rule: {rule}\n")
    path = tmp_path / f"denied-{rule}.yaml"
    path.write_text(text)
    return path


def test_expect_denied_checks_the_rule_that_denied_the_call(
    swarm: Swarm, examples: Path, tmp_path: Path
) -> None:
    right = swarm("test", _denied_by(examples, tmp_path, "no-recursive-delete"))
    assert right.returncode == 0, right.stdout + right.stderr
    wrong = swarm("test", _denied_by(examples, tmp_path, "no-network"))
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert "denied: no call of developer's 'shell' was denied by rule 'no-network'" in wrong.stdout
    assert "Traceback" not in wrong.stderr


def test_a_tests_runs_are_listed_where_its_scenarios_are(
    swarm: Swarm, roles: Path, tmp_path: Path, runs: Path
) -> None:
    """``swarm test`` runs each scenario in a fresh workspace elsewhere; ``runs list`` in
    the scenarios' folder lists those runs without ``--all``."""
    (tmp_path / "hello.yaml").write_text(_hello(roles, "expect: {stop_reason: end_turn}\n"))
    assert swarm("test", "hello.yaml").returncode == 0
    (record,) = runs.iterdir()

    listed = swarm("runs", "list")

    assert listed.returncode == 0, listed.stderr
    assert record.name in listed.stdout and "hello" in listed.stdout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert record.name not in swarm("runs", "list", elsewhere).stdout
