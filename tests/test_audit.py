"""The audit log: records of every call, hash chain, verification, secrets, the table."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from rich.console import Console

from swarm.audit import (
    GENESIS,
    AuditHead,
    AuditLog,
    args_hash,
    audit_rows,
    audit_table,
    read_log,
    record_hash,
    redact,
    verify_log,
)
from swarm.audit.log import torn_at
from swarm.context import MemoryContextStore
from swarm.guards import apply_policy, load_policy
from swarm.loop.agent import Agent
from swarm.messages import Message, ToolResultBlock
from swarm.scope import CallRecord, RunScope, current_scope, use_scope
from swarm.testing import StubTransport, make_text_response, make_tool_use_response
from swarm.tools import Tool

pytestmark = pytest.mark.anyio


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def tool_results(messages: list[Message]) -> list[ToolResultBlock]:
    return [b for m in messages for b in m.content if isinstance(b, ToolResultBlock)]


async def write_calls(log: AuditLog, count: int, path: str = "lead") -> None:
    for i in range(count):
        call = CallRecord(f"call_{i}", "shell", path, {"command": f"echo {i}"})
        call.decision, call.arguments = "allow", {"command": f"echo {i}"}
        await log.on_decision(call)
        await log.on_finish(call, ToolResultBlock(call.call_id, f"{i}"), 0.001)


# ---- a team: a sub-agent attempts a denied call ----


async def run_team(tmp_path: Path) -> tuple[Path, StubTransport, list[str], str]:
    """An orchestrator whose ``worker`` tool runs a child agent; the child tries
    ``bash -c 'rm -rf /'`` through a shell tool under the default policy."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    log_path = tmp_path / "audit.jsonl"
    policy = load_policy("default")
    ran: list[str] = []

    async def shell(command: str) -> str:
        ran.append(command)
        return "ok"

    child_transport = StubTransport(
        [
            make_tool_use_response("shell", "call_rm", {"command": "bash -c 'rm -rf /'"}),
            make_text_response("The policy refused to delete everything."),
        ]
    )
    (child_shell,) = apply_policy(
        [Tool(name="shell", handler=shell)], policy, role="worker", workspace=workspace
    )
    child = Agent(system="worker", transport=child_transport, tools=[child_shell], name="worker")

    async def worker(task: str) -> str:
        scope = current_scope()
        with use_scope(scope.child(path=scope.path + "/worker#1")):
            return await child.run(task, MemoryContextStore())

    (worker_tool,) = apply_policy(
        [Tool(name="worker", handler=worker)], policy, role="orchestrator", workspace=workspace
    )
    orchestrator = Agent(
        system="lead",
        transport=StubTransport(
            [
                make_tool_use_response("worker", "call_worker", {"task": "tidy up"}),
                make_text_response("All done."),
            ]
        ),
        tools=[worker_tool],
        name="orchestrator",
    )
    with (
        AuditLog(log_path) as audit,
        use_scope(RunScope(path="orchestrator", run_id="run-1", observers=(audit,))),
    ):
        final = await orchestrator.run("tidy the workspace", MemoryContextStore())
    return log_path, child_transport, ran, final


async def test_sub_agent_denial_reaches_the_model_and_the_audit_log(tmp_path: Path) -> None:
    log_path, child_transport, ran, final = await run_team(tmp_path)
    assert ran == []
    assert final == "All done."
    messages, _, _ = child_transport.calls[1]
    (result,) = tool_results(messages)
    assert result.is_error
    assert result.text.startswith(
        "Permission denied by policy:default (rule: no-recursive-delete): recursive or forced"
    )

    records = lines(log_path)
    assert [(r["event"], r["path"], r["tool"]) for r in records] == [
        ("decision", "orchestrator", "worker"),
        ("decision", "orchestrator/worker#1", "shell"),
        ("finish", "orchestrator/worker#1", "shell"),
        ("finish", "orchestrator", "worker"),
    ]
    delegation, denied, denied_end, delegation_end = records
    policy_hash = load_policy("default").hash
    assert {k: denied[k] for k in ("run_id", "role", "call_id", "decision", "guard", "rule")} == {
        "run_id": "run-1",
        "role": "worker",
        "call_id": "call_rm",
        "decision": "deny",
        "guard": "policy:default",
        "rule": "no-recursive-delete",
    }
    assert (denied["policy"], denied["policy_hash"]) == ("default", policy_hash)
    assert denied["arguments"] == {"command": "bash -c 'rm -rf /'"}
    assert denied["args_hash"] == args_hash({"command": "bash -c 'rm -rf /'"})
    assert (denied_end["outcome"], denied_end["duration"]) == ("denied", 0.0)
    assert "Permission denied" in denied_end["error"]
    assert (delegation["decision"], delegation["rule"], delegation["role"]) == (
        "allow",
        "default",
        "orchestrator",
    )
    assert delegation_end["outcome"] == "ok"
    report = verify_log(log_path)
    assert report.ok and report.records == 4


async def test_editing_one_byte_of_the_log_fails_verify_naming_the_record(tmp_path: Path) -> None:
    log_path, *_ = await run_team(tmp_path)
    data = log_path.read_bytes()
    at = data.index(b"no-recursive-delete")
    log_path.write_bytes(data[:at] + b"N" + data[at + 1 :])
    report = verify_log(log_path)
    assert not report.ok
    assert report.problem is not None
    assert (report.problem.line, report.problem.record) == (2, 1)
    assert "edited" in report.problem.reason
    assert "line 2 (record 1)" in str(report)


async def test_any_single_byte_edit_is_detected_where_it_is(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path, fsync=False) as log:
        await write_calls(log, 2)
    data = path.read_bytes()
    for offset in range(len(data)):
        edited = bytearray(data)
        edited[offset] ^= 0x01
        path.write_bytes(bytes(edited))
        report = verify_log(path)
        assert report.problem is not None, offset
        assert report.problem.line == data[:offset].count(b"\n") + 1, offset


# ---- the chain ----


async def test_records_are_hash_chained(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        await write_calls(log, 2)
        head = log.head
    records = lines(path)
    assert [r["seq"] for r in records] == [0, 1, 2, 3]
    assert records[0]["prev"] == GENESIS
    for before, after in itertools.pairwise(records):
        assert after["prev"] == before["hash"]
    assert all(record_hash(r) == r["hash"] for r in records)
    assert verify_log(path).head == head == records[-1]["hash"]


async def test_removed_record_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path, fsync=False) as log:
        await write_calls(log, 3)
    kept = path.read_text().splitlines(keepends=True)
    path.write_text("".join(kept[:2] + kept[3:]))
    problem = verify_log(path).problem
    assert problem is not None and (problem.line, problem.record) == (3, 2)
    assert "removed" in problem.reason


async def test_reordered_records_are_detected(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path, fsync=False) as log:
        await write_calls(log, 2)
    kept = path.read_text().splitlines(keepends=True)
    kept[1], kept[2] = kept[2], kept[1]
    path.write_text("".join(kept))
    problem = verify_log(path).problem
    assert problem is not None and problem.line == 2
    assert "reordered" in problem.reason


async def test_a_forged_record_with_a_valid_hash_does_not_follow_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path, fsync=False) as log:
        await write_calls(log, 2)
    records = lines(path)
    forged = dict(records[1], decision="deny", prev="f" * 64)
    forged["hash"] = record_hash(forged)
    records[1] = forged
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    problem = verify_log(path).problem
    assert problem is not None and problem.line == 2
    assert "does not follow" in problem.reason


async def test_records_cut_from_the_end_need_the_head(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path, fsync=False) as log:
        await write_calls(log, 2)
        head = log.head
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))
    assert verify_log(path).ok
    report = verify_log(path, head=head)
    assert report.problem is not None and "cut" in report.problem.reason


async def test_an_empty_log_fails_unless_its_anchor_says_it_holds_nothing(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text("")
    problem = verify_log(path).problem
    assert problem is not None and "empty" in problem.reason
    assert verify_log(path, anchor=AuditHead(0, "", "")).ok


async def test_reopening_continues_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path, fsync=False) as log:
        await write_calls(log, 1)
    with AuditLog(path, fsync=False) as log:
        assert log.records == 2
        await write_calls(log, 1)
    report = verify_log(path)
    assert report.ok and report.records == 4


async def test_a_last_record_longer_than_a_read_block_is_continued(tmp_path: Path) -> None:
    """The log is read backwards from its end a block at a time: a last record of
    several blocks is read whole, and the chain goes on from it. (swarm caps the
    texts it writes; a record this long comes from another writer of the format.)"""
    path = tmp_path / "audit.jsonl"
    with AuditLog(path, fsync=False) as log:
        await write_calls(log, 1)
    first = lines(path)
    record = {**first[-1], "seq": 2, "note": "x" * 300_000, "prev": first[-1]["hash"]}
    del record["hash"]
    record["hash"] = record_hash(record)
    with path.open("a") as file:
        file.write(json.dumps(record) + "\n")
    with AuditLog(path, fsync=False) as log:
        assert log.records == 3 and log.head == record["hash"]
        await write_calls(log, 1)
    report = verify_log(path)
    assert report.ok and report.records == 5


@pytest.mark.parametrize("size", [1, 65535, 65536, 65537, 300_000])
def test_a_torn_last_line_is_found_whatever_its_length(tmp_path: Path, size: int) -> None:
    path = tmp_path / "audit.jsonl"
    whole = b'{"seq":0}\n' * 3
    path.write_bytes(whole + b"x" * size)
    assert torn_at(path) == len(whole)
    path.write_bytes(b"x" * size)  # no newline at all: the whole file is the torn line
    assert torn_at(path) == 0
    path.write_bytes(whole)
    assert torn_at(path) is None
    path.write_bytes(b"")
    assert torn_at(path) is None


async def test_a_damaged_tail_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path, fsync=False) as log:
        await write_calls(log, 1)
    with path.open("a") as file:
        file.write('{"event": "decis')
    with pytest.raises(ValueError, match="incomplete record"):
        AuditLog(path)


async def test_writing_to_a_closed_log_fails(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    log.close()
    with pytest.raises(ValueError, match="closed"):
        await write_calls(log, 1)


async def test_concurrent_writers_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path) as log:
        async with anyio.create_task_group() as group:
            for writer in range(100):
                group.start_soon(write_calls, log, 3, f"lead/agent#{writer}")
    records = lines(path)
    assert len(records) == 600
    assert sorted(r["seq"] for r in records) == list(range(600))
    assert verify_log(path).ok


# ---- records written by the loop ----


async def test_decision_is_on_disk_before_the_tool_runs(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    seen: list[list[dict[str, Any]]] = []

    async def probe() -> str:
        seen.append(lines(path))
        return "ok"

    agent = Agent(
        system="s",
        transport=StubTransport([make_tool_use_response("probe", "c1", {}), make_text_response()]),
        tools=[Tool(name="probe", handler=probe)],
    )
    with AuditLog(path) as log, use_scope(RunScope(path="a", observers=(log,))):
        await agent.run("go", MemoryContextStore())
    ((decision,),) = seen
    assert (decision["event"], decision["call_id"], decision["decision"]) == (
        "decision",
        "c1",
        "allow",
    )


async def test_invalid_and_failed_calls_are_recorded(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"

    async def fail(n: int) -> str:
        raise RuntimeError("disk on fire")

    transport = StubTransport(
        [
            make_tool_use_response("nope", "c1", {}),
            make_tool_use_response("fail", "c2", {"n": "not a number"}),
            make_tool_use_response("fail", "c3", {"n": 1}),
            make_text_response(),
        ]
    )
    agent = Agent(system="s", transport=transport, tools=[Tool(name="fail", handler=fail)])
    with AuditLog(path) as log, use_scope(RunScope(path="a", observers=(log,))):
        await agent.run("go", MemoryContextStore())
    rows = audit_rows(read_log(path)[0])
    summary = [
        (r.decision["call_id"], r.decision["decision"], (r.finish or {}).get("outcome"))
        for r in rows
    ]
    assert summary == [
        ("c1", "invalid", "invalid"),
        ("c2", "invalid", "invalid"),
        ("c3", "allow", "error"),
    ]
    assert "disk on fire" in (rows[2].finish or {})["error"]
    assert rows[1].decision["arguments"] == {"n": "not a number"}


# ---- secrets ----

SECRETS = [
    "hunter2-very-secret",
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "AKIAIOSFODNN7EXAMPLE",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "p4ssw0rd-in-url",
    "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MEFCQ0RFRkdISUpL",
    "opensesame",
]


async def test_secrets_never_reach_the_log(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    arguments = {
        "api_key": SECRETS[0],
        "headers": {"Authorization": f"Bearer {SECRETS[1]}", "X-Request": "ok"},
        "command": f"curl -H 'Authorization: token {SECRETS[2]}' https://user:{SECRETS[5]}@h/",
        "env": [f"AWS_ACCESS_KEY_ID={SECRETS[3]}", f"JWT={SECRETS[4]}"],
        "note": f"the blob is {SECRETS[6]}",
        "dbPassword": SECRETS[7],
        SECRETS[1]: "a key that is a token",
    }
    call = CallRecord("c1", "http", "lead", arguments)
    call.decision, call.reason = "deny", f"refused: password={SECRETS[7]}"
    with AuditLog(path) as log:
        await log.on_decision(call)
        await log.on_finish(call, ToolResultBlock("c1", f"echoed {SECRETS[1]}", True), 0.0)
    text = path.read_text()
    for secret in SECRETS:
        assert secret not in text
    decision = lines(path)[0]
    assert decision["arguments"]["headers"]["X-Request"] == "ok"
    assert decision["arguments"]["api_key"] == "[REDACTED]"
    assert decision["args_hash"] == args_hash(arguments)
    assert verify_log(path).ok


def test_redaction_keeps_ordinary_values() -> None:
    ordinary = {
        "path": "src/components/Button.tsx",
        "max_tokens": 100,
        "commit": "3f786850e387550fdab836ed7e6dc881de23001b",
        "author": "Ada",
        "query": "where is the token refreshed?",
    }
    assert redact(ordinary) == ordinary


# ---- the table ----


async def test_audit_table_filters_calls(tmp_path: Path) -> None:
    log_path, *_ = await run_team(tmp_path)
    console = Console(record=True, width=250)
    console.print(audit_table(log_path, decision="deny"))
    shown = console.export_text()
    assert "no-recursive-delete" in shown and "orchestrator/worker#1" in shown
    assert "1 call " in shown and "1 calls" not in shown
    assert len(audit_rows(read_log(log_path)[0], role="orchestrator")) == 1
    assert len(audit_rows(read_log(log_path)[0], tool="sh*")) == 1
    assert audit_rows(read_log(log_path)[0], decision="invalid") == []


async def test_audit_table_skips_unreadable_lines(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog(path, fsync=False) as log:
        await write_calls(log, 1)
    with path.open("a") as file:
        file.write("garbage\n")
    console = Console(record=True, width=200)
    console.print(audit_table(path))
    assert "1 call; 1 unreadable line skipped" in console.export_text()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
async def test_a_failed_write_is_an_error_and_leaves_the_chain_as_it_was() -> None:
    with AuditLog("/dev/full", fsync=False) as log:
        with pytest.raises(OSError):
            await write_calls(log, 1)
        assert (log.records, log.head) == (0, GENESIS)


async def test_an_approved_ask_is_recorded_with_its_rule(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    workspace = tmp_path / "workspace"
    workspace.mkdir()

    async def read_file(path: str) -> str:
        return "contents"

    async def approver(request: Any) -> bool:
        return True

    (tool,) = apply_policy(
        [Tool(name="read_file", handler=read_file)], load_policy("strict"), workspace=workspace
    )
    agent = Agent(
        system="s",
        transport=StubTransport(
            [make_tool_use_response("read_file", "c1", {"path": "a.txt"}), make_text_response()]
        ),
        tools=[tool],
    )
    with AuditLog(path) as log, use_scope(RunScope(path="a", observers=(log,), approver=approver)):
        await agent.run("go", MemoryContextStore())
    receipt, decision, finish = lines(path)
    assert (receipt["event"], receipt["approved"], receipt["who"], receipt["via"]) == (
        "approval",
        True,
        "test_an_approved_ask_is_recorded_with_its_rule.<locals>.approver",
        "python",
    )
    assert decision["asked"] is True
    assert (decision["decision"], decision["rule"], decision["policy"], decision["reason"]) == (
        "allow",
        "ask-everything",
        "strict",
        "approved",
    )
    assert finish["outcome"] == "ok"
