"""A parent's denials are a ceiling for its whole subtree: a sub-agent whose own policy
allows everything still cannot do what a role above it denies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Any as Swarm

import pytest

LEAD_POLICY = """\
name: lead-policy
default: allow
rules:
  - id: nothing-in-locked
    deny: write_file
    args: {path: {path: "locked/**"}}
  - id: lead-only-no-notes
    deny: write_file
    roles: [lead]
    args: {path: {path: "lead-only/**"}}
"""

OPEN_POLICY = "name: open\ndefault: allow\n"


def role(name: str, delegates: list[str], policy: str) -> str:
    return (
        f"name: {name}\ndescription: the {name}\nsystem: you are the {name}\n"
        f"tools: [write_file]\ndelegates: {json.dumps(delegates)}\npolicy: {policy}\n"
    )


def write_call(path: str) -> str:
    return f"      - call: write_file\n        args: {{path: {path}, content: x}}\n"


@pytest.fixture
def team_run(swarm: Swarm, tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    team, policies = tmp_path / "team", tmp_path / "policies"
    team.mkdir()
    policies.mkdir()
    (policies / "lead-policy.yaml").write_text(LEAD_POLICY)
    (policies / "open.yaml").write_text(OPEN_POLICY)
    (team / "lead.yaml").write_text(role("lead", ["dev"], "../policies/lead-policy.yaml"))
    (team / "dev.yaml").write_text(role("dev", ["tester"], "../policies/open.yaml"))
    (team / "tester.yaml").write_text(role("tester", [], "../policies/open.yaml"))
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "team: team\nentry: lead\ntask: go\nmodel:\n  script:\n    lead:\n"
        + write_call("locked/by-lead.txt")
        + "      - call: dev\n        args: {task: go}\n      - text: done\n"
        "    dev:\n"
        + write_call("locked/by-dev.txt")
        + write_call("lead-only/by-dev.txt")
        + write_call("open/by-dev.txt")
        + "      - call: tester\n        args: {task: go}\n      - text: done\n"
        "    tester:\n" + write_call("locked/deep/by-tester.txt") + "      - text: done\n"
    )
    workspace, runs = tmp_path / "ws", tmp_path / "runs"
    done = swarm("run", scenario, "--plain", "--workspace", workspace, "--runs-dir", runs)
    assert done.returncode == 0, done.stdout + done.stderr
    (log,) = runs.glob("*/audit.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    return workspace, [r for r in records if r["event"] == "decision"]


def test_a_parents_deny_reaches_every_agent_below_it(
    team_run: tuple[Path, list[dict[str, Any]]],
) -> None:
    workspace, decisions = team_run
    assert not (workspace / "locked").exists()
    denied = {
        (r["role"], r["arguments"]["path"]): r for r in decisions if r["tool"] == "write_file"
    }
    for who, path in [
        ("lead", "locked/by-lead.txt"),
        ("dev", "locked/by-dev.txt"),
        ("tester", "locked/deep/by-tester.txt"),
    ]:
        record = denied[(who, path)]
        assert record["decision"] == "deny"
        assert record["rule"] == "nothing-in-locked"
        assert record["policy"] == "lead-policy"
    assert denied[("dev", "locked/by-dev.txt")]["guard"] == "ceiling"


def test_the_childs_own_policy_decides_the_rest(
    team_run: tuple[Path, list[dict[str, Any]]],
) -> None:
    workspace, decisions = team_run
    assert (workspace / "open" / "by-dev.txt").read_text() == "x"
    # a rule the parent scoped to its own role is not inherited
    assert (workspace / "lead-only" / "by-dev.txt").read_text() == "x"
    allowed = [r for r in decisions if r["role"] == "dev" and r["decision"] == "allow"]
    assert {r["policy"] for r in allowed} == {"open"}
