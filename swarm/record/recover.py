"""Picking a run up after a crash: the calls it cut short, and the segments it ran.

A run killed mid-call leaves calls that were decided (in the audit log and the journal) but
never finished, and an assistant turn that was never stored: the loop stores a turn with
its results, once they are all in. Before a resumed run goes on, ``repair_sessions`` puts
each such turn into its agent's history with a result for every call (the result the call
had if it finished, else one saying it was interrupted and not re-run), so every history is
valid and the model knows what happened; ``interrupted_calls`` lists the audit log's
decisions that have no finish, which the resumed run records as ``interrupted``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from swarm.audit import read_log
from swarm.context.sqlite import SQLiteContextStore
from swarm.messages import ContentBlock, Message, ToolResultBlock, ToolUseBlock
from swarm.record.record import JournalState, RunRecord
from swarm.record.summary import segment_totals
from swarm.scenario.script import PlaysScript, turn_call_id

__all__ = [
    "INTERRUPTED",
    "unfinished_background",
    "NOT_RERUN",
    "crashed_segments",
    "interrupted_calls",
    "place_script",
    "repair_sessions",
    "unstored_turns",
]

INTERRUPTED = (
    "Interrupted: the run stopped (its process died) before this call finished, and the"
    " call was not re-run. Call it again if you still need its result."
)
NOT_RERUN = (
    "Interrupted and NOT re-run: the run stopped (its process died) before this call"
    " finished. This tool is not safe to repeat, so the call was not run again; it may have"
    " done some or all of its work. Check its effects before calling it again."
)


def _result(entry: dict[str, Any], finished: dict[str, Any] | None) -> ToolResultBlock:
    call_id = str(entry["decided"])
    if finished is not None:
        return ToolResultBlock(call_id, str(finished.get("text", "")), bool(finished.get("error")))
    text = INTERRUPTED if entry.get("idempotent") else NOT_RERUN
    return ToolResultBlock(call_id, text, is_error=True)


async def _stored(record: RunRecord, session: str) -> tuple[list[Message], set[str]]:
    """A session's live history, and the ids of every tool use it ever held."""
    async with SQLiteContextStore(record.sessions, session) as store:
        history = await store.get_history()
        stored = {use.id for m in history for use in m.tool_uses}
        for segment in await store.archived_segments():
            stored |= {use.id for m in segment.messages for use in m.tool_uses}
    return history, stored


async def place_script(
    model: PlaysScript,
    record: RunRecord,
    state: JournalState,
    summary: Mapping[str, Any] | None,
) -> None:
    """Put a model that plays a script where the run left it: each script key's turns
    taken as the summary or the journal (``state``) counts them, whichever says more,
    and the turns a crash lost before they were stored handed out again first. Call
    ``repair_sessions`` first (see ``unstored_turns``)."""
    used = dict((summary or {}).get("script_used") or {})
    for role, taken in state.turns.items():
        used[role] = max(int(used.get(role, 0)), taken)
    model.used.update(used)
    for role, index in await unstored_turns(record, state):
        model.replay.setdefault(role, []).append(index)


async def unstored_turns(record: RunRecord, state: JournalState) -> list[tuple[str, int]]:
    """The scripted turns (role, index) that a crash lost: the last turn an agent took
    when its session holds neither its calls nor (for a turn without calls) its answer.
    Call ``repair_sessions`` first: a turn whose calls were decided is stored by it."""
    lost: list[tuple[str, int]] = []
    for path, (role, index, calls) in state.last_turn.items():
        session = state.sessions.get(path)
        if session is None or not record.sessions.exists():
            lost.append((role, index))
            continue
        history, stored = await _stored(record, session)
        if calls:
            if not any(turn_call_id(role, index, k) in stored for k in range(1, calls + 1)):
                lost.append((role, index))
        elif not history or history[-1].role != "assistant" or history[-1].tool_uses:
            lost.append((role, index))
    return sorted(lost)


async def repair_sessions(record: RunRecord, state: JournalState) -> list[str]:
    """Store, in each agent's session, the turn a crash left unstored (the calls the
    journal shows decided whose tool use the session does not hold), with a result for
    each. Returns the paths of the agents repaired."""
    by_path: dict[str, list[dict[str, Any]]] = {}
    for (path, _), entry in state.decided.items():
        by_path.setdefault(path, []).append(entry)
    repaired: list[str] = []
    for path, entries in by_path.items():
        session = state.sessions.get(path)
        if session is None or not record.sessions.exists():
            continue
        history, stored = await _stored(record, session)
        missing = [e for e in entries if str(e["decided"]) not in stored]
        if not missing or (history and history[-1].role == "assistant"):
            continue
        async with SQLiteContextStore(record.sessions, session) as store:
            uses = [
                ToolUseBlock(str(e["decided"]), str(e["tool"]), dict(e.get("input") or {}))
                for e in missing
            ]
            results: list[ContentBlock] = [
                _result(e, state.finished.get((path, str(e["decided"])))) for e in missing
            ]
            await store.append_many([Message("assistant", list(uses)), Message("user", results)])
            repaired.append(path)
    return repaired


def unfinished_background(record: RunRecord, history: list[Message]) -> list[str]:
    """The paths of the background sub-agents the entry agent started (its history holds
    their ``running`` results) that had not ended when the run stopped (the event log
    has no end of theirs): a resumed run starts them again."""
    started = [
        str(details["path"])
        for message in history
        for result in message.tool_results
        if (details := result.details or {}).get("background") and details.get("path")
    ]
    if not started:
        return []
    ended: set[str] = set()
    try:
        lines = record.events.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # the line a kill cut short
        inner = entry.get("event") or {}
        if entry.get("type") == "sub_agent" and inner.get("type") == "session_end":
            ended.add(str(entry.get("path")))
    return [path for path in dict.fromkeys(started) if path not in ended]


def interrupted_calls(record: RunRecord) -> list[dict[str, Any]]:
    """The audit log's decision records that no finish record follows."""
    if not record.audit.exists():
        return []
    records, _ = read_log(record.audit)
    finished = {(r.get("path"), r.get("call_id")) for r in records if r.get("event") == "finish"}
    return [
        r
        for r in records
        if r.get("event") == "decision" and (r.get("path"), r.get("call_id")) not in finished
    ]


def crashed_segments(
    summary: dict[str, Any] | None, state: JournalState, tokens: tuple[int, int]
) -> list[dict[str, Any]]:
    """Every segment so far: the summary's, then one for each segment the journal saw
    start that wrote no summary (killed). A killed segment's usage is what the sessions
    hold beyond the segments before it (``tokens``: input and output in every session);
    its duration runs from its start to the journal's last line."""
    segments: list[dict[str, Any]] = list((summary or {}).get("segments") or [])
    if summary is not None and not segments:  # a record from before segments existed
        segments.append(
            {
                "segment": 1,
                "stop_reason": summary.get("stop_reason"),
                "interrupted": bool(summary.get("interrupted")),
                "usage": summary.get("usage") or {"input_tokens": 0, "output_tokens": 0},
                "duration_seconds": summary.get("duration_seconds"),
            }
        )
    for number in range(len(segments) + 1, len(state.segments) + 1):
        known = segment_totals(segments)["usage"]
        started = state.segments[number - 1]
        last = state.last_time or started
        segments.append(
            {
                "segment": number,
                "stop_reason": "killed",
                "interrupted": True,
                "usage": {
                    "input_tokens": max(0, tokens[0] - known["input_tokens"]),
                    "output_tokens": max(0, tokens[1] - known["output_tokens"]),
                },
                "duration_seconds": round(max(0.0, last - started), 3),
            }
        )
    return segments
