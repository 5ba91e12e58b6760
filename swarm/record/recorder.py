"""Writing a run's record: ``start_record`` makes it, and one ``RunRecorder`` per segment
writes everything else.

The order of the writes is what lets a run killed at any instant be resumed: the manifest
before the first model call; the segment's start and the entry agent's session in the
journal before anything runs; the audit log's records of what a crash cut short before
any new call; each sub-agent's session and each scripted turn journaled as it starts; and
``changes.json`` then ``summary.json`` when the segment ends, however it ends.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

import anyio.to_thread

from swarm.approvals import ApprovalStore
from swarm.audit import AuditLog, create_key, environment_secrets, read_key, redact
from swarm.budget import Budget
from swarm.context.sqlite import SQLiteContextStore
from swarm.event_codec import event_to_dict
from swarm.events import StreamEvent
from swarm.record.changes import (
    WorkspaceChanges,
    WorkspaceSnapshot,
    attributed,
    snapshot,
    workspace_changes,
)
from swarm.record.manifest import RunConfig
from swarm.record.outcome import CallTally, EventTally, RunOutcome, build_outcome
from swarm.record.pinning import ChangedFile
from swarm.record.record import Journal, RunRecord
from swarm.record.summary import RunSummary
from swarm.scenario.script import PlaysScript
from swarm.scenario.spec import Scenario
from swarm.scope import ApprovalRequest, CallObserver, current_scope
from swarm.transports.base import CompletionTransport
from swarm.types import StopReason
from swarm.undo import UndoCapture

__all__ = ["RunRecorder", "Segment", "start_record"]


def start_record(
    runs_dir: Path, run_id: str, manifest: Mapping[str, Any], *, role_models: Mapping[str, Any]
) -> RunRecord:
    """Make run ``run_id``'s record under ``runs_dir``: its directory (``0700``), its audit
    key, and ``manifest.json`` (``manifest``, where the key is, and ``role_models``: the
    model each role resolved to). Raises ``ConfigError`` when the directory exists or
    cannot be made."""
    record = RunRecord.create(runs_dir, run_id)
    create_key(record.key)
    record.write_manifest(dict(manifest) | {"key": str(record.key), "role_models": role_models})
    return record


@dataclass(frozen=True, slots=True)
class Segment:
    """One stretch of a run: its number, the segments before it (as ``summary.json``
    lists them), the agents' sessions so far, the audit decisions a crash left
    unfinished, whether the model is asked at all (not when a crash came after the
    run's last turn), and the files that define the run and changed since it started,
    which the resume accepted (recorded in the audit log), and whether answered held
    calls are to be run first (``held``)."""

    number: int
    before: list[dict[str, Any]] = field(default_factory=list)
    sessions: dict[str, str] = field(default_factory=dict)
    interrupted: list[dict[str, Any]] = field(default_factory=list)
    run_model: bool = True
    accepted_changes: tuple[ChangedFile, ...] = ()
    held: bool = False


class RunRecorder:
    """Writes ``segment`` of run ``run_id`` into ``record``: the only writer of its
    journal, audit log, events, summary and changes while the segment runs.

    Made when the segment starts, it opens the journal and journals the start and the
    entry agent's session (``root_session``); ``model``, when it plays a script
    (``PlaysScript``), has each turn journaled as it is handed out. Use it in a
    ``with``, which closes its files. ``begin`` (just before the model is first asked)
    takes the workspace's snapshot, opens the audit log and ``events.jsonl`` and records
    what a crash cut short; ``take`` writes each event (secrets redacted); ``finish``
    writes ``changes.json`` and ``summary.json`` and returns the segment's outcome.
    ``idempotent`` is filled by the guarded tools (which tools are safe to run again)
    and journaled with each call.
    """

    def __init__(
        self,
        record: RunRecord,
        segment: Segment,
        *,
        run_id: str,
        scenario: Scenario,
        config: RunConfig,
        entry: str,
        root_session: str,
        model: CompletionTransport,
    ) -> None:
        self.record = record
        self.idempotent: dict[str, bool] = {}
        self.sessions: dict[str, str] = dict(segment.sessions)
        self.approvals = ApprovalStore(record.approvals_file)
        self.event_tally = EventTally()
        self._segment, self._run_id, self._entry = segment, run_id, entry
        self._scenario, self._config, self._root_session = scenario, config, root_session
        self._script = model if isinstance(model, PlaysScript) else None
        self._calls = CallTally()
        self._files = ExitStack()
        self._journal = Journal(record.journal, idempotent=self.idempotent)
        self._files.callback(self._journal.close)
        self._audit: AuditLog | None = None
        self._events: IO[str] | None = None
        self._secrets: tuple[str, ...] = ()
        self._begun: _Begun | None = None

    def __enter__(self) -> Self:
        try:
            self._journal.segment(self._segment.number)
            self._journal.agent(self._entry, self._root_session)
        except BaseException:
            self._files.close()
            raise
        if self._script is not None:
            self._script.on_turn = lambda key, index, calls: self._journal.turn(
                current_scope().path, key, index, calls
            )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._files.close()  # events.jsonl, then the audit log, then the journal

    def new_session(self) -> SQLiteContextStore:
        """A new session for the sub-agent starting now (a team's ``context_factory``),
        journaled under its path."""
        store = SQLiteContextStore(self.record.sessions)
        path = current_scope().path
        self.sessions[path] = store.session_id
        self._journal.agent(path, store.session_id)
        return store

    def session(self, session: str) -> SQLiteContextStore:
        """The stored session ``session``."""
        return SQLiteContextStore(self.record.sessions, session)

    def entry_session(self) -> SQLiteContextStore:
        """The entry agent's session, counted among the segment's sessions."""
        store = self.session(self._root_session)
        self._root_session = self.sessions[self._entry] = store.session_id
        return store

    def held(self, request: ApprovalRequest) -> None:
        """Journal a call held for approval (a ``RunApprover``'s ``on_held``)."""
        self._journal.held(request.path, request.call_id, request.tool, dict(request.arguments))

    async def begin(self, workspace: Path, capture: UndoCapture) -> None:
        """Start recording what the segment does to ``workspace`` (``capture`` keeps each
        call's changes): its snapshot now, the audit log and ``events.jsonl`` opened, and
        the calls a crash cut short, and the changed files a resume accepted, audited."""
        before = await anyio.to_thread.run_sync(snapshot, workspace)
        self._begun = _Begun(
            workspace,
            capture,
            before,
            first_seq=capture.log.state.next_seq,
            started=time.perf_counter(),
            began=datetime.now(UTC).isoformat(timespec="milliseconds"),
        )
        self._secrets = environment_secrets(os.environ)
        record = self.record
        key = read_key(record.key) if record.key.exists() else None
        events_fd = os.open(record.events, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            audit = AuditLog(record.audit, key=key, anchor=record.head, secrets=self._secrets)
        except BaseException:
            os.close(events_fd)
            raise
        self._audit = self._files.enter_context(audit)
        self._events = self._files.enter_context(os.fdopen(events_fd, "w", encoding="utf-8"))
        for decision in self._segment.interrupted:
            await audit.record_interrupted(decision)
        if self._segment.accepted_changes:
            accepted = [c.to_dict() for c in self._segment.accepted_changes]
            await audit.record_resume(self._run_id, accepted)

    @property
    def observers(self) -> tuple[CallObserver, ...]:
        """What sees every call: the journal, the audit log, and the tally of decisions."""
        assert self._audit is not None, "begin() opens the audit log"
        return (self._journal, self._audit, self._calls)

    def take(self, event: StreamEvent) -> None:
        """Follow ``event`` and write it to ``events.jsonl``, secrets redacted."""
        assert self._events is not None, "begin() opens events.jsonl"
        self.event_tally.see(event)
        self._events.write(json.dumps(_logged(event, self._secrets)) + "\n")

    def finish(
        self, budget: Budget | None, *, cut_text: str = "", awaiting_approval: bool = False
    ) -> RunOutcome:
        """Write ``changes.json`` and ``summary.json`` for the segment, as it ended
        (``awaiting_approval``: every branch waits on a person), and return its outcome.
        ``budget`` is the run's (what it spent when the entry agent never ended);
        ``cut_text`` the text of the last whole turn of a run cut before its end."""
        begun, audit, record = self._begun, self._audit, self.record
        assert begun is not None and audit is not None, "begin() comes first"
        outcome = build_outcome(
            self._scenario,
            run_id=self._run_id,
            record_dir=record.dir,
            workspace=begun.workspace,
            final=self.event_tally,
            tally=self._calls,
            budget=budget,
            duration=time.perf_counter() - begun.started,
            root_session=self._root_session,
            sessions=self.sessions,
            changes=begun.changes(),
            cut_text=cut_text,
        )
        if awaiting_approval:
            outcome = dataclasses.replace(outcome, stop_reason=StopReason.awaiting_approval)
        record.write_changes(outcome.changes.to_dict())
        summary = RunSummary(
            outcome,
            self._segment.number,
            begun.began,
            self._config,
            record.audit,
            audit.anchor_head,
            before=self._segment.before,
            script_used=dict(self._script.used) if self._script is not None else None,
        )
        written = summary.to_dict()
        written["approvals"] = [p.to_dict() for p in self.approvals.requests()]
        record.write_summary(written)
        return outcome


@dataclass(frozen=True, slots=True)
class _Begun:
    """Where a segment's recording began: the workspace and its snapshot, the capture
    of its calls' changes and its first call's number there, and the time (a clock for
    the duration, and the wall clock's ISO time)."""

    workspace: Path
    capture: UndoCapture
    before: WorkspaceSnapshot
    first_seq: int
    started: float
    began: str

    def changes(self) -> WorkspaceChanges:
        """What the segment changed in the workspace, each file with the calls that did."""
        return attributed(
            workspace_changes(self.before, snapshot(self.workspace)),
            [c for c in self.capture.log.state.calls if c.seq >= self.first_seq],
        )


def _logged(event: StreamEvent, secrets: tuple[str, ...]) -> dict[str, Any]:
    data: dict[str, Any] = redact(event_to_dict(event), secrets=secrets)
    data["time"] = datetime.now(UTC).isoformat(timespec="milliseconds")
    return data
