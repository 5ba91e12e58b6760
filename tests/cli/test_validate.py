"""``swarm validate`` reports every problem of every file in one pass, as a user runs it."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any as Swarm


def problems_of(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The problem lines of a failed validate (exit 2, no traceback, a count at the end)."""
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    count = len(lines) - 1
    assert lines[-1] == f"{count} problem{'s' if count != 1 else ''} found", done.stderr
    return lines[:-1]


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


LEAD = "description: leads\nsystem: you lead\ndelegates: [dev, writer]\n"
DEV = "description: develops\nsystem: you develop\ntools: [read_file, shel]\n"


def test_problems_of_every_stage_come_in_one_run(swarm: Swarm, tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "team/lead.yaml": LEAD + "budget: {tokens: many}\n",
            "team/dev.yaml": DEV + "delgates: [x]\n",
        },
    )
    found = problems_of(swarm("validate", "team"))
    assert "team/lead.yaml:4: field 'budget.tokens': Input should be a valid integer" in found[1]
    assert any(
        p.startswith("team/lead.yaml:3: field 'delegates': delegate 'writer' is not a role")
        for p in found
    )
    assert any(p.startswith("team/dev.yaml:3: field 'tools': unknown tool 'shel'") for p in found)
    assert any(
        p.startswith("team/dev.yaml:4: field 'delgates': unknown field; did you mean 'delegates'?")
        for p in found
    )
    # the misspelt field is read as the one it was meant to be: its delegate is checked too
    assert "team/dev.yaml:4: field 'delegates': delegate 'x' is not a role (roles: dev, lead)" in (
        found
    )
    assert len(found) == 5, found


def test_a_role_file_that_cannot_be_read_still_counts_as_a_role(
    swarm: Swarm, tmp_path: Path
) -> None:
    write(
        tmp_path,
        {
            "team/lead.yaml": "description: leads\nsystem: x\ndelegates: [dev, ops]\n",
            "team/dev.yaml": "description: [unclosed\n",
        },
    )
    found = problems_of(swarm("validate", "team"))
    assert any(p.startswith("team/dev.yaml:") and "invalid YAML" in p for p in found)
    assert any("delegate 'ops' is not a role" in p for p in found)
    assert not any("'dev' is not a role" in p for p in found), found


def test_a_cycle_and_an_unknown_tool_together(swarm: Swarm, tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "team/lead.yaml": "description: a\nsystem: x\ndelegates: [dev]\n",
            "team/dev.yaml": "description: b\nsystem: x\ndelegates: [qa]\ntools: [nope]\n",
            "team/qa.yaml": "description: c\nsystem: x\ndelegates: [dev]\n",
        },
    )
    found = problems_of(swarm("validate", "team", "--entry", "lead"))
    assert any("delegation cycle dev -> qa -> dev" in p for p in found)
    assert any(p.startswith("team/dev.yaml:4: field 'tools': unknown tool 'nope'") for p in found)


POLICY = """\
name: mine
defualt: allow
rules:
  - id: no-rm
    deny: shell
    argz: {command: {shell: [rm]}}
guards:
  - use: pth
  - use: rate_limit
    with: {calls: 30, windo: 60}
extend: ./nowhere.yaml
"""


def test_policy_typos_each_with_file_line_and_suggestion(swarm: Swarm, tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "team/lead.yaml": "description: a\nsystem: x\npolicy: ../mine.yaml\n",
            "mine.yaml": POLICY,
        },
    )
    found = problems_of(swarm("validate", "team"))
    text = "\n".join(found)
    assert "mine.yaml:2: field 'defualt': unknown field; did you mean 'default'?" in text
    assert "mine.yaml:6: field 'rules.0.argz': unknown field; did you mean 'args'?" in text
    assert "mine.yaml:8: field 'guards.0.use': unknown guard 'pth'; did you mean 'path'?" in text
    assert "mine.yaml:10: field 'guards.1.with.windo': unknown field; did you mean 'window'?" in (
        text
    )
    assert "mine.yaml:11: field 'extend': policy file not found" in text
    assert "nowhere.yaml" in text


def test_a_policy_name_that_does_not_exist_is_shown_where_it_is_written(
    swarm: Swarm, tmp_path: Path
) -> None:
    write(
        tmp_path,
        {
            "team/lead.yaml": "description: a\nsystem: x\n\npolicy: redonly\n",
            "scenario.yaml": "team: team\ntask: do it\npolicy: strictt\n",
        },
    )
    found = problems_of(swarm("validate", "scenario.yaml"))
    assert any(
        p.startswith("team/lead.yaml:4: field 'policy': unknown policy 'redonly'")
        and "did you mean 'readonly'?" in p
        for p in found
    ), found
    assert any(
        p.startswith("scenario.yaml:3: field 'policy': unknown policy 'strictt'")
        and "did you mean 'strict'?" in p
        for p in found
    ), found


def test_unknown_scenario_keys_get_a_suggestion_and_the_team_is_still_checked(
    swarm: Swarm, tmp_path: Path
) -> None:
    write(
        tmp_path,
        {
            "team/lead.yaml": "description: a\nsystem: x\ntools: [raed_file]\n",
            "scenario.yaml": "team: team\ntusk: do it\nexpect:\n  filez: {a.txt: b}\n",
        },
    )
    found = problems_of(swarm("validate", "scenario.yaml"))
    text = "\n".join(found)
    assert "scenario.yaml:2: field 'tusk': unknown field; did you mean 'task'?" in text
    # the misspelt task is one problem: not also "task: required field is missing"
    assert "field 'task'" not in text
    assert "scenario.yaml:4: field 'expect.filez': unknown field; did you mean 'files'?" in text
    assert "team/lead.yaml:3: field 'tools': unknown tool 'raed_file'" in text


def test_a_problem_in_a_policy_two_roles_name_is_reported_once(
    swarm: Swarm, tmp_path: Path
) -> None:
    write(
        tmp_path,
        {
            "team/lead.yaml": "description: a\nsystem: x\ndelegates: [dev]\npolicy: ../p.yaml\n",
            "team/dev.yaml": "description: b\nsystem: x\npolicy: ../p.yaml\n",
            "p.yaml": "rulez: []\n",
        },
    )
    found = problems_of(swarm("validate", "team"))
    assert found == [
        f"{Path('team/../p.yaml')}:1: field 'rulez': unknown field; did you mean 'rules'?"
    ]


def test_a_policy_file_alone_is_validated(swarm: Swarm, tmp_path: Path) -> None:
    write(
        tmp_path, {"mine.yaml": POLICY, "good.yaml": "extend: readonly\nrules:\n  - allow: '*'\n"}
    )
    found = problems_of(swarm("validate", "mine.yaml"))
    # 'windo' is one problem, not also "window: required field is missing"
    assert len(found) == 5, found
    assert not any("required field is missing" in p for p in found), found
    assert all(p.startswith("mine.yaml:") for p in found), found
    done = swarm("validate", "good.yaml")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: good.yaml: policy 'good', ")


def test_a_scenario_max_depth_is_the_limit_validate_checks(swarm: Swarm, tmp_path: Path) -> None:
    chain = ["a", "b", "c", "d", "e"]
    write(
        tmp_path,
        {
            **{
                f"team/{name}.yaml": f"description: {name}\nsystem: x\n"
                + (f"delegates: [{chain[i + 1]}]\n" if i + 1 < len(chain) else "")
                for i, name in enumerate(chain)
            },
            "deep.yaml": "team: team\ntask: x\nlimits: {max_depth: 4}\n",
            "shallow.yaml": "team: team\ntask: x\n",
        },
    )
    done = swarm("validate", "deep.yaml")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok: deep.yaml: 5 roles, entry 'a', delegation depth 4")
    found = problems_of(swarm("validate", "shallow.yaml"))
    assert any(
        "delegation chain a -> b -> c -> d -> e is 4 deep; max_depth is 3" in p for p in found
    )


def test_broken_role_files_do_not_make_the_entry_role_look_ambiguous(
    swarm: Swarm, tmp_path: Path
) -> None:
    write(
        tmp_path,
        {
            "team/lead.yaml": "description: a\nsystem: x\ndelegates: {dev: 1}\n",
            "team/dev.yaml": "description: b\nsystem: x\ndelegates: [qa]\ntools: 3\n",
            "team/qa.yaml": "description: [\n",
        },
    )
    found = problems_of(swarm("validate", "team"))
    assert len(found) == 3, found
    assert not any("entry role" in p for p in found), found
