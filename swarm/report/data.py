"""A run record read back for the report: agents, their model and tool calls, in time.

``load_run`` reads a run directory (manifest, summary, events, audit log, changes) and
gives a ``RunData``: the run header, every agent in tree order with its span, its model
calls and tool calls as timed bars, its conversation as the events told it, each call's
guard decision, rule and audit hash, and the files the run changed. It reads only; a
damaged line is skipped, as a crash can leave one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from swarm.audit import NotALog, verify_log
from swarm.errors import ConfigError
from swarm.record.changes import WorkspaceChanges
from swarm.record.record import audit_check

__all__ = ["AgentData", "CallData", "ModelCall", "RunData", "load_run", "verify_record"]

PREVIEW = 2000  # characters of a tool result or an argument kept in the report
VALUE_PREVIEW = 20_000  # characters of one argument's text kept (code a call wrote)


@dataclass(slots=True)
class CallData:
    """One tool call: when, with what, what the guards said, and how it ended.

    ``arguments`` is the call's input as JSON text (cut to ``PREVIEW``); ``values`` the
    same input read back as an object when it was one, each text cut to
    ``VALUE_PREVIEW``, so code a call wrote can be shown as code."""

    call_id: str
    tool: str
    start: float
    end: float | None = None
    arguments: str = ""
    values: dict[str, Any] | None = None
    result: str = ""
    is_error: bool = False
    decision: str = ""
    guard: str = ""
    rule: str = ""
    reason: str = ""
    outcome: str = ""
    duration: float | None = None
    audit_hash: str = ""


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One model call of an agent: from when it was asked to when its turn ended."""

    start: float
    end: float
    input_tokens: int
    output_tokens: int
    stop_reason: str


@dataclass(slots=True)
class AgentData:
    """One agent of the run, with everything it did, in order."""

    path: str
    depth: int
    start: float
    end: float | None = None
    stop_reason: str = ""
    error: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    background: bool = False
    model_calls: list[ModelCall] = field(default_factory=list)
    calls: list[CallData] = field(default_factory=list)
    conversation: list[tuple[str, str]] = field(default_factory=list)
    _cursor: float = 0.0
    _text: list[str] = field(default_factory=list)
    _open: dict[str, CallData] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The last part of the path (``tester#1``)."""
        return self.path.rsplit("/", 1)[-1]

    def flush_text(self) -> None:
        if self._text:
            self.conversation.append(("assistant", "".join(self._text)))
            self._text.clear()


@dataclass(slots=True)
class RunData:
    """A run as the report shows it."""

    run_dir: Path
    manifest: dict[str, Any]
    summary: dict[str, Any]
    agents: dict[str, AgentData]
    changes: WorkspaceChanges
    audit: str
    audit_ok: bool
    start: float
    end: float

    def children(self) -> tuple[list[AgentData], dict[str, list[AgentData]]]:
        """The delegation tree: the agents no other agent of the run started (the
        roots), and each agent's children; siblings by start."""
        children: dict[str, list[AgentData]] = {}
        roots = []
        for agent in sorted(self.agents.values(), key=lambda a: a.start):
            parent = agent.path.rsplit("/", 1)[0] if "/" in agent.path else None
            if parent is not None and parent in self.agents:
                children.setdefault(parent, []).append(agent)
            else:
                roots.append(agent)
        return roots, children

    def ordered(self) -> list[AgentData]:
        """The agents depth-first, each after its parent, siblings by start."""
        roots, children = self.children()
        out: list[AgentData] = []
        stack = roots[::-1]
        while stack:
            agent = stack.pop()
            out.append(agent)
            stack += children.get(agent.path, [])[::-1]
        return out

    def denied(self) -> list[tuple[AgentData, CallData]]:
        """Every call a guard denied, with its agent, in tree order."""
        return [(a, c) for a in self.ordered() for c in a.calls if c.decision == "deny"]

    def failed(self) -> list[tuple[AgentData, CallData]]:
        """Every call that was allowed and failed (an error result), in tree order."""
        return [
            (a, c)
            for a in self.ordered()
            for c in a.calls
            if c.decision != "deny" and (c.is_error or c.outcome == "error")
        ]

    def errors(self) -> list[AgentData]:
        """The agents that ended with an error, in tree order."""
        return [agent for agent in self.ordered() if agent.error]


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _lines(path: Path) -> list[dict[str, Any]]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    out = []
    for line in raw.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue  # a line a crash cut short
        if isinstance(data, dict):
            out.append(data)
    return out


def _time(text: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(text)).timestamp()
    except ValueError:
        return None


def _cut(text: str, limit: int = PREVIEW) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def verify_record(run: Path) -> tuple[bool, str]:
    """Verify a run's audit log with its key and anchored head (``audit_check``), as
    ``swarm audit verify`` does: ``(ok, one line)``."""
    log = run / "audit.jsonl"
    try:
        key, anchor = audit_check(run)
    except (OSError, ValueError) as exc:
        return False, f"cannot read the audit key or head: {exc}"
    if not log.exists() and (anchor is None or anchor.records == 0):
        return True, "no audit records: the run made no tool call"
    if not log.exists():
        return False, "tampered or damaged: the audit log is missing"
    try:
        report = verify_log(log, key=key, anchor=anchor)
    except (NotALog, OSError, ValueError) as exc:
        return False, f"cannot verify the audit log: {exc}"
    return report.ok, str(report)


def load_run(run: Path) -> RunData:
    """Read the run record in ``run``. Raises ``ConfigError`` when it is not one."""
    manifest = _read_json(run / "manifest.json")
    summary = _read_json(run / "summary.json")
    if not manifest and not summary:
        raise ConfigError("not a run record (no manifest.json or summary.json)", path=run)
    root = str((manifest.get("config") or {}).get("entry") or "")
    if not root:
        root = str((summary.get("usage_tree") or {}).get("path") or "agent")
    agents: dict[str, AgentData] = {}
    first: float | None = None
    last = 0.0

    def agent(path: str, now: float) -> AgentData:
        found = agents.get(path)
        if found is None:
            found = agents[path] = AgentData(path, path.count("/"), now, _cursor=now)
        return found

    for line in _lines(run / "events.jsonl"):
        now = _time(line.get("time"))
        if now is None:
            continue
        first = now if first is None else first
        last = max(last, now)
        path, event = root, line
        while event.get("type") == "sub_agent" and isinstance(event.get("event"), dict):
            path, event = str(event.get("path") or path), event["event"]
        _apply(agent(path, now), event, now)
    _attach_audit(agents, _lines(run / "audit.jsonl"))
    changes = WorkspaceChanges.from_dict(_read_json(run / "changes.json"))
    ok, audit = verify_record(run)
    for path in _started_in_background(agents.values()):
        if path in agents:
            agents[path].background = True
    start = first if first is not None else 0.0
    return RunData(run, manifest, summary, agents, changes, audit, ok, start, max(last, start))


def _started_in_background(agents: Iterable[AgentData]) -> list[str]:
    """The paths of the sub-agents a delegation started in the background: its result
    (what the caller read) is ``{"path": ..., "status": "running"}``."""
    paths = []
    for agent in agents:
        for call in agent.calls:
            if not call.result.startswith("{"):
                continue
            try:
                said = json.loads(call.result)
            except ValueError:
                continue
            if isinstance(said, dict) and said.get("status") == "running" and "path" in said:
                paths.append(str(said["path"]))
    return paths


def _apply(agent: AgentData, event: dict[str, Any], now: float) -> None:
    kind = event.get("type")
    if kind == "text_delta":
        agent._text.append(str(event.get("delta") or ""))
    elif kind == "tool_use_start":
        agent.flush_text()
        call = CallData(str(event.get("tool_use_id")), str(event.get("name")), now)
        agent._open[call.call_id] = call
        agent.calls.append(call)
    elif kind == "tool_input_delta":
        going = agent._open.get(str(event.get("tool_use_id")))
        if going is not None:
            going.arguments += str(event.get("partial_json") or "")
    elif kind == "tool_result":
        found = agent._open.pop(str(event.get("tool_use_id")), None)
        if found is None:
            found = CallData(str(event.get("tool_use_id")), str(event.get("name")), now)
            agent.calls.append(found)
        call = found
        call.end = now
        call.is_error = bool(event.get("is_error"))
        call.result = _cut(str(event.get("content") or ""))
        if event.get("input"):
            call.arguments = json.dumps(event["input"], ensure_ascii=False, indent=1)
        call.values = _values(event.get("input") or call.arguments)
        call.arguments = _cut(call.arguments)
        agent.conversation.append(("call", call.call_id))
        agent._cursor = max(agent._cursor, now)
    elif kind == "iteration_end":
        usage = event.get("usage") or {}
        tokens_in, tokens_out = (
            int(usage.get("input_tokens", 0)),
            int(usage.get("output_tokens", 0)),
        )
        agent.model_calls.append(
            ModelCall(agent._cursor, now, tokens_in, tokens_out, str(event.get("stop_reason")))
        )
        agent.input_tokens += tokens_in
        agent.output_tokens += tokens_out
        agent.cache_read_tokens += int(usage.get("cache_read_tokens", 0))
        agent.cache_write_tokens += int(usage.get("cache_write_tokens", 0))
        agent._cursor = now
        agent.flush_text()
    elif kind == "error":
        agent.error = str((event.get("exception") or {}).get("message") or "error")
        agent.conversation.append(("error", agent.error))
    elif kind == "context_compacted":
        agent.conversation.append(("note", "the context was compacted"))
    elif kind == "session_end":
        agent.flush_text()
        agent.end = now
        agent.stop_reason = str(event.get("stop_reason") or "")


def _values(given: Any) -> dict[str, Any] | None:
    """A call's input as an object (parsed when it came as JSON text), each text in it
    cut to ``VALUE_PREVIEW``; ``None`` when it is not an object."""
    if isinstance(given, str):
        try:
            given = json.loads(given)
        except ValueError:
            return None
    if not isinstance(given, dict):
        return None
    return {str(k): _cut(v, VALUE_PREVIEW) if isinstance(v, str) else v for k, v in given.items()}


def _attach_audit(agents: dict[str, AgentData], records: list[dict[str, Any]]) -> None:
    calls = {(a.path, c.call_id): c for a in agents.values() for c in a.calls}
    for record in records:
        call = calls.get((str(record.get("path")), str(record.get("call_id"))))
        if call is None:
            continue
        if record.get("event") == "decision":
            call.decision = str(record.get("decision") or "")
            call.guard = str(record.get("guard") or "")
            call.rule = str(record.get("rule") or "")
            call.reason = str(record.get("reason") or "")
            call.audit_hash = str(record.get("hash") or "")
        elif record.get("event") == "finish":
            call.outcome = str(record.get("outcome") or "")
            duration = record.get("duration")
            call.duration = float(duration) if isinstance(duration, int | float) else None
