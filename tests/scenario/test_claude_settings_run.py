"""A Claude Code project's ``.claude/settings.json`` and ``settings.local.json`` in a
scripted run: denied commands and paths never run (their files are absent), allowed
ones do, ``ask`` entries and commands the allow list lacks go to the run's approver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarm.scenario import load_scenario, run_scenario
from swarm.scope import ApprovalRequest
from swarm.types import StopReason

pytestmark = pytest.mark.anyio

BUILDER = """---
name: builder
description: Builds things.
tools: Bash, Read, Write, Edit
---
You build.
"""

SETTINGS = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "permissions": {
        "allow": ["Bash(touch ok:*)", "Bash(touch local:*)", "Read(src/**)"],
        "deny": ["Bash(touch denied:*)", "Read(./secrets/**)", "Edit(src/locked.py)"],
        "ask": ["Bash(touch asked:*)"],
    },
}
LOCAL = {"permissions": {"deny": ["Bash(touch local:*)"]}}

# Bash(touch ok:*) covers the commands whose words start with 'touch ok' ('touch ok',
# 'touch ok more'), as Claude Code's ':*' does (a word boundary)
CALLS = [
    ("shell", {"command": "touch ok"}),
    ("shell", {"command": "touch denied"}),
    ("shell", {"command": "touch local"}),
    ("shell", {"command": "touch ok more && touch denied again"}),
    ("shell", {"command": "touch asked"}),
    ("shell", {"command": "touch unlisted"}),
    ("read_file", {"path": "secrets/key.txt"}),
    ("write_file", {"path": "src/locked.py", "content": "x = 2\n"}),
    ("write_file", {"path": "src/free.py", "content": "y = 1\n"}),
]


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / ".claude" / "agents").mkdir(parents=True)
    (project / ".claude" / "agents" / "builder.md").write_text(BUILDER)
    (project / ".claude" / "settings.json").write_text(json.dumps(SETTINGS, indent=2))
    (project / ".claude" / "settings.local.json").write_text(json.dumps(LOCAL, indent=2))
    turns = [{"call": tool, "args": args} for tool, args in CALLS] + [{"text": "built"}]
    path = tmp_path / "build.yaml"
    path.write_text(
        json.dumps(
            {
                "task": "build",
                "team": "project",
                "files": {"secrets/key.txt": "hunter2\n", "src/locked.py": "x = 1\n"},
                "model": {"script": {"builder": turns}},
            }
        )
    )
    return path


async def test_denied_commands_and_paths_never_run_and_allowed_ones_do(
    scenario: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    outcome = await run_scenario(load_scenario(scenario), workspace=ws, runs_dir=tmp_path / "r")
    assert outcome.stop_reason == StopReason.end_turn
    assert (ws / "ok").exists()
    assert (ws / "src" / "free.py").read_text() == "y = 1\n"
    # deny wins, the local file's deny over the shared file's allow, a whole command line
    # is refused for one program of it, and nobody is here to answer an ask
    for absent in ("denied", "local", "more", "again", "asked", "unlisted"):
        assert not (ws / absent).exists(), absent
    assert (ws / "src" / "locked.py").read_text() == "x = 1\n"
    assert outcome.denied == 7
    rules = [rule for _, _, _, rule in outcome.denied_calls]
    assert rules == [
        ".claude/settings.json:10",  # Bash(touch denied:*)
        ".claude/settings.local.json:4",  # Bash(touch local:*)
        ".claude/settings.json:10",
        ".claude/settings.json:15",  # ask: Bash(touch asked:*), nobody to ask
        "not allowed",  # not in the allow list: asked, nobody to ask
        ".claude/settings.json:11",  # Read(./secrets/**)
        ".claude/settings.json:12",  # Edit(src/locked.py)
    ]
    # the secret never reached the model (the events hold every tool result it got)
    assert "hunter2" not in (outcome.record_dir / "events.jsonl").read_text()


async def test_asks_go_to_the_runs_approver(scenario: Path, tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> bool:
        asked.append(request)
        return "asked" in str(request.arguments.get("command"))

    ws = tmp_path / "ws"
    outcome = await run_scenario(
        load_scenario(scenario), workspace=ws, runs_dir=tmp_path / "r", approver=approver
    )
    assert outcome.stop_reason == StopReason.end_turn
    assert [r.arguments["command"] for r in asked] == ["touch asked", "touch unlisted"]
    assert asked[0].rule == ".claude/settings.json:15"
    assert "allow only" in asked[1].reason
    assert (ws / "asked").exists()  # approved
    assert not (ws / "unlisted").exists()  # refused
    assert not (ws / "denied").exists()  # a deny is never asked about


async def test_an_ask_can_be_held_for_a_person_like_a_policys(
    scenario: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    outcome = await run_scenario(
        load_scenario(scenario), workspace=ws, runs_dir=tmp_path / "r", on_ask="hold"
    )
    assert outcome.stop_reason.value == "awaiting_approval"
    text = (outcome.record_dir / "approvals.jsonl").read_text()
    held = [json.loads(line) for line in text.splitlines()]
    assert held[0]["arguments"]["command"] == "touch asked"
    assert held[0]["rule"] == ".claude/settings.json:15"
    assert not (ws / "asked").exists()
