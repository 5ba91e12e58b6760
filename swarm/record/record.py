"""A run's record on disk: where it lives, its manifest, and its journal.

Records live outside the workspace, in the user's state directory
(``$XDG_STATE_HOME/swarm/runs/<run id>``, default ``~/.local/state``; on macOS
``~/Library/Application Support/swarm/runs``), in directories created ``0700``, so an
agent working in the workspace neither sees nor edits them. One run's directory holds::

    manifest.json   what the run is (scenario, team, policy, model, workspace, hashes),
                    written atomically before the first model call
    audit.key       the run's audit key (0600), never handed to a tool
    audit.jsonl     the keyed, hash-chained audit log; head.json its anchored head
    audit.torn      a record a kill cut short mid-write, taken off the log's end (resume
                    and undo do that, when the rest verifies against the head)
    events.jsonl    every event, secrets redacted
    sessions.db     every agent's history (what the model saw), for inspection and resume
    journal.jsonl   what resuming after a crash needs: agents' sessions, tool calls decided
                    and finished, scripted turns taken, segments started
    summary.json    written when a segment ends; every segment and the totals
    changes.json    the files the last segment added, changed and deleted, with diffs
                    and the calls (id, agent) that changed each
    undo/           each call's changes with their pre-images (``swarm.undo``), what
                    ``undo`` and ``diff`` read

A run killed at any instant leaves a manifest and a journal that ``resume_run`` reads.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from swarm.audit import AuditHead, AuditLog, read_head, read_key, verify_log
from swarm.audit.log import torn_at
from swarm.errors import ConfigError
from swarm.messages import ToolResultBlock
from swarm.scope import CallRecord
from swarm.undo.log import CallChanges
from swarm.undo.taking import UndoResult, call_diff, run_calls, undo_calls

__all__ = [
    "JOURNAL",
    "Journal",
    "JournalState",
    "RunRecord",
    "audit_check",
    "default_runs_dir",
    "file_hash",
    "new_run_id",
    "read_journal",
    "segment_totals",
]

JOURNAL = "journal.jsonl"
_PRIVATE = 0o700


def default_runs_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where run records go unless told: ``$XDG_STATE_HOME/swarm/runs`` (default
    ``~/.local/state``), or ``~/Library/Application Support/swarm/runs`` on macOS."""
    env = os.environ if environ is None else environ
    state = env.get("XDG_STATE_HOME")
    if state and Path(state).is_absolute():
        return Path(state) / "swarm" / "runs"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "swarm" / "runs"
    return Path.home() / ".local" / "state" / "swarm" / "runs"


def new_run_id() -> str:
    """A new run id: the UTC time and six random hex digits (``20261123-233918-1a2b3c``)."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]


def file_hash(path: Path | None) -> str | None:
    """``sha256:`` and the hash of a file's bytes, or of a directory's files (names and
    bytes, sorted); ``None`` when there is nothing to hash."""
    if path is None or not path.exists():
        return None
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode())
        digest.update(b"\0" + file.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()


def _private_dir(path: Path) -> None:
    """Create ``path`` and its missing parents ``0700`` (``mkdir(parents=True)`` would give
    the parents the umask's mode)."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for directory in reversed(missing):
        directory.mkdir(mode=_PRIVATE, exist_ok=True)


def _write_atomically(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(partial, flags, 0o600)
    try:
        os.write(fd, (text + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(partial, path)


@dataclass(frozen=True, slots=True)
class RunRecord:
    """The directory of one run, and the names of its files."""

    dir: Path

    @property
    def manifest(self) -> Path:
        """``manifest.json``: what the run is; written before the first model call."""
        return self.dir / "manifest.json"

    @property
    def key(self) -> Path:
        """``audit.key``: the audit log's key (``0600``)."""
        return self.dir / "audit.key"

    @property
    def audit(self) -> Path:
        """``audit.jsonl``: the audit log."""
        return self.dir / "audit.jsonl"

    @property
    def head(self) -> Path:
        """``head.json``: the audit log's anchored head."""
        return self.dir / "head.json"

    @property
    def events(self) -> Path:
        """``events.jsonl``: every event, secrets redacted."""
        return self.dir / "events.jsonl"

    @property
    def sessions(self) -> Path:
        """``sessions.db``: the agents' histories."""
        return self.dir / "sessions.db"

    @property
    def journal(self) -> Path:
        """``journal.jsonl``: what resuming after a crash needs."""
        return self.dir / JOURNAL

    @property
    def approvals_file(self) -> Path:
        """``approvals.jsonl``: the calls held for approval, and their answers."""
        return self.dir / "approvals.jsonl"

    @property
    def summary(self) -> Path:
        """``summary.json``: every segment and the totals; absent while a run is going or
        after a crash."""
        return self.dir / "summary.json"

    @staticmethod
    def check_place(runs_dir: Path) -> None:
        """Raise ``ConfigError`` when no record could be made under ``runs_dir`` (it, or
        the nearest of its parents that exists, is not a directory); creates nothing."""
        for place in (runs_dir, *runs_dir.parents):
            if place.exists():
                if not place.is_dir():
                    raise ConfigError("cannot create the run record: not a directory", path=place)
                return

    @property
    def changes(self) -> Path:
        """``changes.json``: the files the last segment added, changed and deleted."""
        return self.dir / "changes.json"

    @classmethod
    def create(cls, runs_dir: Path, run_id: str) -> RunRecord:
        """Make a new run's directory (``0700``, parents too). Raises ``ConfigError`` when
        it exists or cannot be made."""
        try:
            _private_dir(runs_dir)
            directory = runs_dir / run_id
            directory.mkdir(mode=_PRIVATE)
            directory.chmod(_PRIVATE)
        except FileExistsError:
            raise ConfigError("a run record with this id exists", path=runs_dir / run_id) from None
        except OSError as exc:
            raise ConfigError(f"cannot create the run record: {exc}", path=runs_dir) from None
        return cls(directory)

    def write_manifest(self, manifest: Mapping[str, Any]) -> None:
        """Write ``manifest.json`` atomically (a temporary file, fsynced, renamed)."""
        _write_atomically(self.manifest, json.dumps(manifest, indent=2))

    def write_summary(self, summary: Mapping[str, Any]) -> None:
        """Write ``summary.json`` atomically."""
        _write_atomically(self.summary, json.dumps(summary, indent=2))

    def write_changes(self, changes: Mapping[str, Any]) -> None:
        """Write ``changes.json`` atomically."""
        _write_atomically(self.changes, json.dumps(changes, indent=2))

    def read_manifest(self) -> dict[str, Any]:
        """The manifest. Raises ``ConfigError`` when it is missing or unreadable."""
        try:
            data = json.loads(self.manifest.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(
                "this run record has no manifest: the run stopped before it started, or it"
                " is not a run record",
                path=self.dir,
            ) from None
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the manifest: {exc}", path=self.manifest) from None
        if not isinstance(data, dict) or "run_id" not in data:
            raise ConfigError("not a run manifest", path=self.manifest)
        return data

    def check_audit(self) -> None:
        """Refuse to go on with a record whose audit log does not verify (a resumed run
        would otherwise anchor a tampered log): raises ``ConfigError`` naming the log.

        A write of a record longer than a page can stop between pages when SIGKILL comes,
        leaving a last line without its newline; the head is written only after a whole
        record, so such a line is past it. With a head, the log is then verified up to
        that line, and, when that much verifies, the line is moved to ``audit.torn``.
        Any other damage is refused as it is."""
        try:
            anchor = read_head(self.head) if self.head.exists() else None
            key = read_key(self.key) if self.key.exists() else None
            empty = not self.audit.exists() or self.audit.stat().st_size == 0
            if empty and (anchor is None or anchor.records == 0):
                return  # stopped before its first call
            torn = torn_at(self.audit) if anchor is not None else None
            report = verify_log(self.audit, key=key, anchor=anchor, length=torn)
            if report.ok and torn is not None:
                self._take_torn(torn)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot check the audit log: {exc}", path=self.audit) from None
        if not report.ok:
            raise ConfigError(
                f"the audit log does not verify, so the run is not resumed: {report.problem}",
                path=self.audit,
            )

    def _take_torn(self, whole: int) -> None:
        """Move the audit log's bytes from ``whole`` on (a record a kill cut short) to
        ``audit.torn`` (0600, never through a link), then cut the log there."""
        with self.audit.open("rb") as log:
            log.seek(whole)
            tail = log.read()
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
        torn = os.open(self.dir / "audit.torn", flags, 0o600)
        try:
            os.write(torn, tail + b"\n")
            os.fsync(torn)
        finally:
            os.close(torn)
        os.truncate(self.audit, whole)

    def read_summary(self) -> dict[str, Any] | None:
        """The summary, or ``None`` when there is none yet (the run is going or was
        killed). Raises ``ConfigError`` when it exists but cannot be read."""
        try:
            data = json.loads(self.summary.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the run summary: {exc}", path=self.summary) from None
        return data if isinstance(data, dict) else None

    def calls(self) -> list[CallChanges]:
        """Every call that changed (or could have changed) the workspace, in order, with
        what it changed (``swarm.undo.CallChanges``); undos are listed as calls of agent
        ``(undo)``."""
        return run_calls(self.dir)

    def diff(self, *, call: str | None = None) -> str:
        """What the run's calls did to the workspace (only call ``call`` when given), as
        unified diffs per path with each call's id and agent. Raises ``ConfigError``
        when no call has that id."""
        calls = self.calls()
        if call is not None:
            calls = [c for c in calls if c.call == call]
            if not calls:
                raise ConfigError(f"no call '{call}' changed the workspace", path=self.dir)
        return call_diff(self.dir, calls)

    def undo(
        self,
        *,
        call: str | None = None,
        agent: str | None = None,
        since: str | None = None,
        force: bool = False,
    ) -> UndoResult:
        """Put the run's workspace back as it was before call ``call``, the calls of
        agent ``agent`` (and its sub-agents), the calls from ``since`` on, or the whole
        run (nothing given); other calls' changes to other paths are kept. Recorded as a
        new segment (``summary.json``, ``changes.json``) and an ``undo`` audit record.

        Raises ``swarm.undo.UndoRefused`` naming each path that changed since the run
        (unless ``force``) or cannot be put back, and ``ConfigError`` for a record
        that is not one or whose audit log does not verify. Nothing is changed then.
        """
        manifest = self.read_manifest()
        self.check_audit()
        began = datetime.now(UTC).isoformat(timespec="milliseconds")
        started = time.perf_counter()
        workspace = Path(str(manifest["workspace"]))
        result = undo_calls(self.dir, workspace, call=call, agent=agent, since=since, force=force)
        key = read_key(self.key) if self.key.exists() else None
        with AuditLog(self.audit, key=key, anchor=self.head) as audit:
            audit.record_undo(
                str(manifest["run_id"]),
                [{"call": c.call, "agent": c.agent} for c in result.undone],
                [c.path for c in result.restored],
                forced=force,
            )
            head = audit.anchor_head
        self._undo_segment(result, began, time.perf_counter() - started, head)
        return result

    def _undo_segment(
        self, result: UndoResult, began: str, duration: float, head: AuditHead
    ) -> None:
        """Record an undo as a segment: the journal, ``summary.json`` and
        ``changes.json`` (the paths it put back)."""
        number = len(read_journal(self.journal).segments) + 1
        journal = Journal(self.journal)
        try:
            journal.segment(number)
        finally:
            journal.close()
        summary = self.read_summary() or {}
        segments = [s for s in summary.get("segments") or [] if isinstance(s, dict)]
        segments.append(
            {
                "segment": max(number, len(segments) + 1),
                "kind": "undo",
                "started": began,
                "stop_reason": "undo",
                "interrupted": False,
                "usage": {"input_tokens": 0, "output_tokens": 0},
                "duration_seconds": round(duration, 3),
                "calls": 0,
                "undone": [{"call": c.call, "agent": c.agent} for c in result.undone],
            }
        )
        summary["segments"] = segments
        summary["totals"] = segment_totals(segments)
        summary["audit"] = {"log": str(self.audit), **head.to_dict()}
        self.write_summary(summary)
        undo = self.calls()[-1] if result.restored else None
        by = [{"call": undo.call, "agent": undo.agent}] if undo is not None else []
        files = [
            {"path": c.path, "kind": c.kind, "diff": "", "calls": by, "agents": ["(undo)"]}
            for c in result.restored
        ]
        self.write_changes({"truncated": False, "reason": "", "files": files})


def segment_totals(segments: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The usage, dollars and duration of all ``segments`` (as ``summary.json`` lists
    them); the cache parts of the usage when any segment had them, and ``cost_usd`` as
    ``None`` when any segment's cost is unknown."""
    usage = {"input_tokens": 0, "output_tokens": 0}
    parts = {"cache_read_tokens": 0, "cache_write_tokens": 0, "cache_write_1h_tokens": 0}
    duration = 0.0
    cost: float | None = 0.0
    for segment in segments:
        used = segment.get("usage") or {}
        for counts in (usage, parts):
            for key in counts:
                counts[key] += int(used.get(key) or 0)
        duration += float(segment.get("duration_seconds") or 0)
        spent = segment.get("cost_usd")
        cost = cost + spent if cost is not None and isinstance(spent, int | float) else None
    if any(parts.values()):
        usage.update(parts)
    return {
        "usage": usage,
        "cost_usd": cost if segments else None,
        "duration_seconds": round(duration, 3),
        "segments": len(segments),
    }


def audit_check(run: Path) -> tuple[bytes | None, AuditHead | None]:
    """The key and the anchored head to verify a run's audit log against: ``head.json``
    (it follows every record), else the summary's head (the last segment's end) when
    ``head.json`` is gone, else an empty log's head when the run has a key. Raises
    ``OSError`` or ``ValueError`` when the key or head cannot be read."""
    record = RunRecord(run)
    key = read_key(record.key) if record.key.exists() else None
    if record.head.exists():
        return key, read_head(record.head)
    try:
        summary = json.loads(record.summary.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        summary = None
    if isinstance(summary, dict) and isinstance(summary.get("audit"), dict):
        return key, AuditHead.from_dict(summary["audit"])
    return key, AuditHead(0, "", "") if key is not None else None


class Journal:
    """The crash journal of a run: appended with one ``write`` per line, so a process
    killed at any instant leaves whole lines (and, at worst, a cut last line that readers
    skip). A ``CallObserver``: it records each call decided (with its arguments as the
    model sent them) and finished (with its result), so a resumed run can give every call
    that a crash cut short a result, in the history the model sees.
    """

    def __init__(self, path: Path, *, idempotent: Mapping[str, bool] | None = None) -> None:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(path, flags, 0o600)
        self._idempotent = idempotent if idempotent is not None else {}

    def _line(self, data: dict[str, Any]) -> None:
        data["t"] = round(time.time(), 3)
        os.write(self._fd, (json.dumps(data, default=str) + "\n").encode())

    def segment(self, number: int) -> None:
        """A segment (the first run, or a resume) starts."""
        self._line({"segment": number})

    def agent(self, path: str, session: str) -> None:
        """The agent at ``path`` keeps its history in ``session``."""
        self._line({"agent": path, "session": session})

    def turn(self, path: str, role: str, index: int, calls: int) -> None:
        """A scripted model handed the agent at ``path`` turn ``index`` of ``role``'s
        script, which makes ``calls`` calls."""
        self._line({"turn": role, "index": index, "path": path, "calls": calls})

    async def on_decision(self, call: CallRecord) -> None:
        """Record the call, as the model made it, before its handler runs."""
        self._line(
            {
                "decided": call.call_id,
                "path": call.path,
                "tool": call.tool,
                "input": call.input,
                "idempotent": self._idempotent.get(call.tool, False),
            }
        )

    def held(self, path: str, call_id: str | None, tool: str, arguments: dict[str, Any]) -> None:
        """Record a call held for approval as decided, so a resume after a crash puts it
        in its agent's history (with a result once it is answered)."""
        self._line(
            {
                "decided": call_id,
                "path": path,
                "tool": tool,
                "input": arguments,
                "idempotent": self._idempotent.get(tool, False),
                "held": True,
            }
        )

    async def on_finish(self, call: CallRecord, result: ToolResultBlock, duration: float) -> None:
        """Record the call's result (what the model will see)."""
        self._line(
            {
                "finished": call.call_id,
                "path": call.path,
                "text": result.text,
                "error": result.is_error,
            }
        )

    def close(self) -> None:
        """Close the file."""
        os.close(self._fd)


@dataclass(slots=True)
class JournalState:
    """What a journal says: agents' sessions, calls decided (in order) and finished,
    scripted turns taken per role (and the last one each agent took: role, index, calls),
    and segments (their start times)."""

    sessions: dict[str, str] = field(default_factory=dict)
    decided: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    finished: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    turns: dict[str, int] = field(default_factory=dict)
    last_turn: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    segments: list[float] = field(default_factory=list)
    last_time: float | None = None

    def unfinished(self) -> Iterable[dict[str, Any]]:
        """Calls decided that never finished."""
        return (entry for key, entry in self.decided.items() if key not in self.finished)


def read_journal(path: Path) -> JournalState:
    """Read a journal (a missing one is empty); lines a crash cut short are skipped."""
    state = JournalState()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return state
    for line in raw.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        state.last_time = data.get("t", state.last_time)
        if "segment" in data:
            state.segments.append(float(data.get("t", 0)))
        elif "agent" in data:
            state.sessions[str(data["agent"])] = str(data["session"])
        elif "turn" in data:
            role = str(data["turn"])
            state.turns[role] = max(state.turns.get(role, 0), int(data["index"]) + 1)
            if "path" in data:
                state.last_turn[str(data["path"])] = (role, int(data["index"]), int(data["calls"]))
        elif "decided" in data:
            state.decided[(str(data["path"]), str(data["decided"]))] = data
        elif "finished" in data:
            state.finished[(str(data["path"]), str(data["finished"]))] = data
    return state
