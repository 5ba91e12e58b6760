"""A slash command as a run's task: arguments and ``@file`` filled, its ``!`cmd``` lines
run first as the entry role's guarded, sandboxed and audited shell calls, or refused
visibly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarm.context.sqlite import SQLiteContextStore
from swarm.messages import TextBlock
from swarm.scenario import load_scenario, run_scenario
from swarm.types import StopReason

pytestmark = pytest.mark.anyio

AGENT = """---
name: reviewer
description: Reviews things.
tools: Read, Bash(echo:*)
---
You review.
"""

COMMAND = """---
description: Review an area
argument-hint: AREA [DEPTH]
---
Review the $1 area (depth: $2; asked: $ARGUMENTS). Rules: @RULES.md
Said: !`echo ready to review`
Tried: !`touch pwned`
"""


async def test_a_command_task_runs_its_shell_lines_under_the_role_policy(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "commands").mkdir(parents=True)
    (root / ".claude" / "agents" / "reviewer.md").write_text(AGENT)
    (root / ".claude" / "commands" / "review.md").write_text(COMMAND)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "team: project\n"
        "task: {command: project/.claude/commands/review.md, args: [auth, deep]}\n"
        "files: {RULES.md: 'no globals'}\n"
        "model: {script: {reviewer: [{text: reviewed}]}}\n"
    )
    workspace = tmp_path / "ws"
    outcome = await run_scenario(
        load_scenario(scenario), workspace=workspace, runs_dir=tmp_path / "runs"
    )
    assert outcome.stop_reason == StopReason.end_turn
    store = SQLiteContextStore(outcome.record_dir / "sessions.db", outcome.root_session)
    first = (await store.get_history())[0]
    await store.close()
    sent = "".join(b.text for b in first.content if isinstance(b, TextBlock))
    assert "Review the auth area (depth: deep; asked: auth deep)." in sent
    assert "Rules: RULES.md:\n```\nno globals\n```" in sent
    assert "Said: ready to review" in sent
    assert "Tried: (refused: " in sent and "touch" in sent
    assert not (workspace / "pwned").exists()
    audit = [
        json.loads(line) for line in (outcome.record_dir / "audit.jsonl").read_text().splitlines()
    ]
    decisions = [(r["tool"], r["decision"]) for r in audit if r["event"] == "decision"]
    assert decisions == [("shell", "allow"), ("shell", "deny")]
