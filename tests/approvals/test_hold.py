"""A three-level team whose worker's shell is ``ask``: held in the run record, answered
later, resumed without re-running what finished; receipts in the audit log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from swarm.approvals import ApprovalStore
from swarm.audit import read_key, verify_log
from swarm.audit.anchor import record_mac
from swarm.audit.log import GENESIS, record_hash
from swarm.errors import ConfigError
from swarm.record.outcome import RunOutcome
from swarm.scenario.runner import resume_run, run_scenario
from swarm.scenario.spec import load_scenario
from swarm.scope import ApprovalDecision, ApprovalRequest
from swarm.testing import history_problems
from swarm.types import StopReason

from .support import make_project


def _run(root: Path, **options: Any) -> RunOutcome:
    scenario = load_scenario(make_project(root, on_ask=options.pop("on_ask", "hold")))
    return anyio.run(
        lambda: run_scenario(scenario, workspace=root / "ws", runs_dir=root / "runs", **options)
    )


def _audit(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (record / "audit.jsonl").read_text().splitlines()]


def test_held_call_three_levels_down_waits_while_its_sibling_works(tmp_path: Path) -> None:
    outcome = _run(tmp_path)
    assert outcome.stop_reason == StopReason.awaiting_approval
    assert (tmp_path / "ws" / "notes.txt").read_text() == "noted"  # the sibling went on
    assert not (tmp_path / "ws" / "count.txt").exists()  # the held call did not run
    [request] = ApprovalStore(outcome.record_dir / "approvals.jsonl").pending()
    assert request.path == "boss/lead#1/worker#1"
    assert request.tool == "shell"
    assert request.arguments["command"] == "echo x >> count.txt"
    assert request.rule == "ask-shell"
    assert request.reason == "a person must agree to every command the worker runs"
    summary = json.loads((outcome.record_dir / "summary.json").read_text())
    assert summary["stop_reason"] == "awaiting_approval"
    assert [a["state"] for a in summary["approvals"]] == ["pending"]


def test_approved_held_call_runs_once_on_resume_and_the_run_finishes(tmp_path: Path) -> None:
    record = _run(tmp_path).record_dir
    store = ApprovalStore(record / "approvals.jsonl")
    assert store.answer("1", approved=True, who="ana", via="cli")
    outcome = anyio.run(resume_run, record)
    assert outcome.stop_reason == StopReason.end_turn
    assert outcome.final_text == "all done"
    assert (tmp_path / "ws" / "count.txt").read_text() == "x\n"  # exactly once
    assert anyio.run(_problems, record) == []
    with pytest.raises(ConfigError, match="this run finished"):
        anyio.run(resume_run, record)  # nothing is left to run again
    assert (tmp_path / "ws" / "count.txt").read_text() == "x\n"


def test_receipt_in_the_audit_log_says_who_when_how_and_what(tmp_path: Path) -> None:
    record = _run(tmp_path).record_dir
    ApprovalStore(record / "approvals.jsonl").answer("1", approved=True, who="ana", via="cli")
    anyio.run(resume_run, record)
    records = _audit(record)
    [receipt] = [r for r in records if r["event"] == "approval"]
    assert receipt["who"] == "ana"
    assert receipt["via"] == "cli"
    assert receipt["approved"] is True
    assert receipt["path"] == "boss/lead#1/worker#1"
    assert receipt["arguments"]["command"] == "echo x >> count.txt"
    assert receipt["at"]
    decision = next(r for r in records if r["event"] == "decision" and r.get("asked"))
    assert decision["decision"] == "allow"
    assert decision["seq"] == receipt["seq"] + 1  # the receipt comes just before
    assert verify_log(record / "audit.jsonl", key=read_key(record / "audit.key")).ok


def test_a_log_whose_receipt_was_removed_fails_verify(tmp_path: Path) -> None:
    record = _run(tmp_path).record_dir
    ApprovalStore(record / "approvals.jsonl").answer("1", approved=True, who="ana", via="cli")
    anyio.run(resume_run, record)
    key = read_key(record / "audit.key")
    forged = tmp_path / "forged.jsonl"
    # a forger with the key drops the receipt and rebuilds the chain around the gap
    prev, lines = GENESIS, []
    for seq, entry in enumerate(r for r in _audit(record) if r["event"] != "approval"):
        entry.pop("mac", None)
        entry.pop("hash", None)
        entry["seq"], entry["prev"] = seq, prev
        entry["hash"] = prev = record_hash(entry)
        entry["mac"] = record_mac(entry, key)
        lines.append(json.dumps(entry) + "\n")
    forged.write_text("".join(lines))
    report = verify_log(forged, key=key)
    assert not report.ok
    assert report.problem is not None
    assert "without a receipt" in report.problem.reason


def test_denied_held_call_tells_the_model_why_and_never_runs(tmp_path: Path) -> None:
    record = _run(tmp_path).record_dir
    store = ApprovalStore(record / "approvals.jsonl")
    store.answer("1", approved=False, who="ana", via="cli", reason="not on a Friday")
    seen: list[str] = []

    def collect(event: Any) -> None:
        while hasattr(event, "path") and hasattr(event, "event"):
            event = event.event
        if getattr(event, "type", "") == "tool_result" and event.is_error:
            seen.append(event.content)

    outcome = anyio.run(lambda: resume_run(record, on_event=collect))
    assert outcome.stop_reason == StopReason.end_turn
    assert not (tmp_path / "ws" / "count.txt").exists()
    assert any("not on a Friday" in text for text in seen)
    [receipt] = [r for r in _audit(record) if r["event"] == "approval"]
    assert receipt["approved"] is False
    assert receipt["reason"] == "not on a Friday"


def test_resume_before_an_answer_says_what_waits_and_how_to_answer(tmp_path: Path) -> None:
    outcome = _run(tmp_path)
    with pytest.raises(ConfigError) as caught:
        anyio.run(resume_run, outcome.record_dir)
    message = str(caught.value)
    assert "1 call still wait for approval" in message
    assert "boss/lead#1/worker#1 wants shell" in message
    assert f"swarm approve {outcome.run_id} ID" in message


def test_an_unanswered_request_past_ask_timeout_is_denied(tmp_path: Path) -> None:
    record = _run(tmp_path).record_dir
    outcome = anyio.run(lambda: resume_run(record, ask_timeout=0.001))
    assert outcome.stop_reason == StopReason.end_turn
    assert not (tmp_path / "ws" / "count.txt").exists()
    [request] = ApprovalStore(record / "approvals.jsonl").requests()
    assert request.state == "denied"
    assert request.answer is not None and request.answer["via"] == "ask_timeout"


def test_python_approver_gets_the_sub_agents_path(tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.approve(who="the test")

    outcome = _run(tmp_path, on_ask="deny", approver=approve)
    assert outcome.stop_reason == StopReason.end_turn
    assert [r.path for r in asked] == ["boss/lead#1/worker#1"]
    assert (tmp_path / "ws" / "count.txt").read_text() == "x\n"
    [receipt] = [r for r in _audit(outcome.record_dir) if r["event"] == "approval"]
    assert (receipt["who"], receipt["via"]) == ("the test", "python")


def test_edited_arguments_that_the_policy_denies_are_denied(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "keep.txt").write_text("keep")

    async def edit(request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision.approve({"command": "rm keep.txt"}, who="the test")

    outcome = _run(tmp_path, on_ask="deny", approver=edit)
    assert (tmp_path / "ws" / "keep.txt").read_text() == "keep"
    records = _audit(outcome.record_dir)
    decision = next(r for r in records if r["event"] == "decision" and r.get("asked"))
    assert decision["decision"] == "deny"
    assert decision["rule"] == "no-rm"


def test_without_hold_a_sub_agents_ask_is_denied_with_a_receipt(tmp_path: Path) -> None:
    outcome = _run(tmp_path, on_ask="deny")
    assert outcome.stop_reason == StopReason.end_turn
    assert not (tmp_path / "ws" / "count.txt").exists()
    assert [(d[0], d[1]) for d in outcome.denied_calls] == [("boss/lead#1/worker#1", "shell")]


async def _problems(record: Path) -> list[str]:
    from swarm.context.sqlite import SQLiteContextStore

    problems: list[str] = []
    async with SQLiteContextStore(record / "sessions.db") as store:
        for info in await store.list_sessions():
            async with SQLiteContextStore(record / "sessions.db", info.session_id) as one:
                problems += history_problems(await one.get_history())
    return problems


SOLO = """\
name: solo
team: team
entry: worker
policy: careful.yaml
task: Count once.
model:
  script:
    worker:
      - call: shell
        args: {command: "echo x >> count.txt"}
      - text: counted
"""


def test_the_entry_agents_own_held_call_resumes_too(tmp_path: Path) -> None:
    make_project(tmp_path)
    policy = tmp_path / "careful.yaml"
    policy.write_text(policy.read_text().replace("roles: [worker]", "roles: ['*']"))
    (tmp_path / "solo.yaml").write_text(SOLO)
    scenario = load_scenario(tmp_path / "solo.yaml")
    outcome = anyio.run(
        lambda: run_scenario(scenario, workspace=tmp_path / "ws", runs_dir=tmp_path / "runs")
    )
    assert outcome.stop_reason == StopReason.awaiting_approval
    [request] = ApprovalStore(outcome.record_dir / "approvals.jsonl").pending()
    assert request.path == "worker"
    ApprovalStore(outcome.record_dir / "approvals.jsonl").answer(
        request.id, approved=True, who="ana", via="cli"
    )
    resumed = anyio.run(resume_run, outcome.record_dir)
    assert (resumed.stop_reason, resumed.final_text) == (StopReason.end_turn, "counted")
    assert (tmp_path / "ws" / "count.txt").read_text() == "x\n"
    assert anyio.run(_problems, outcome.record_dir) == []
