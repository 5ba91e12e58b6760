"""AuditLog: every tool call of a run as hash-chained JSON lines.

Attach it to the root run scope (``RunScope(observers=(audit,))``) and every call of every
agent in the run, delegation included, writes two records: a ``decision`` before the
handler runs (written and fsynced first, so a crash mid-call leaves it on disk) and a
``finish`` when the call ends. A record holds::

    time, event, seq, run_id, path, role, call_id, tool,
    decision:   arguments (secrets redacted), args_hash, decision, guard, rule, policy,
              policy_hash, reason, sandbox (the sandbox confining the processes
              the call starts, e.g. "bubblewrap 0.8.0, network none"; null for other tools)
    finish:     outcome (ok, error, denied, invalid, interrupted), duration (seconds), error;
                rule "protected-path" and undone (lines) when a command's change to a
                protected path was taken away after it
    connection: (a command's connection through the egress proxy; no call_id nor tool)
                host, port, address, method, decision (allow or deny), rule
                "network-allow-list", reason, sent, received (bytes), duration
    approval:   (written just before the decision of a call that was asked about, whose
                record then says ``asked: true``) approved, who, via, at, arguments (as
                approved), args_hash, reason, rule: the receipt of the answer
    prev, hash, mac (with a key)

``hash`` is the SHA-256 of the record's canonical JSON (sorted keys, no spaces, without
``hash`` and ``mac``), and ``prev`` the hash of the record before it (64 zeros for the
first), so ``verify_log`` finds any record edited, removed, inserted or reordered. With a
``key``, each record also carries ``mac`` (see ``swarm.audit.anchor``): without the key,
nobody can recompute the chain after changing it. With an ``anchor`` file, the head (count,
last hash and MAC) is rewritten in place after each record, so cutting records from the
end is seen as well. A call that a crash cut short gets a ``finish`` record with outcome
``interrupted`` when the run is resumed (``record_interrupted``); a ``resume`` record
says a resume went on although files that define the run had changed
(``record_resume``). Records are rendered by a structlog processor chain and written
with one ``write`` under a lock, so concurrent agents never interleave lines. One
process should append to a log at a time.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import MutableMapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, Self

import anyio.to_thread
import structlog

from swarm.audit.anchor import AuditHead, canonical_json, open_head, record_mac, write_head
from swarm.audit.redact import redact, redact_text
from swarm.messages import ToolResultBlock
from swarm.scope import CallRecord, current_scope, role_of

if TYPE_CHECKING:
    from swarm.sandbox.proxy import ConnectionRecord

__all__ = [
    "GENESIS",
    "NETWORK_RULE",
    "AuditLog",
    "args_hash",
    "canonical_json",
    "record_hash",
    "torn_at",
]

GENESIS = "0" * 64
"""The ``prev`` of a log's first record."""
NETWORK_RULE = "network-allow-list"
"""The rule of a ``connection`` record: a policy's network allow-list decided it."""

_ORDER = ("time", "event", "seq", "run_id", "path", "role", "call_id", "tool")
_TEXT_FIELDS = ("reason", "error")
_BLOCK = 1 << 16
"""How much of a log is read at a time when it is read backwards from its end."""


def record_hash(record: dict[str, Any]) -> str:
    """The hash a record must carry: SHA-256 of its canonical JSON without ``hash`` and
    ``mac``."""
    body = {k: v for k, v in record.items() if k not in ("hash", "mac")}
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()


def args_hash(arguments: Any) -> str:
    """``sha256:`` and the hash of the canonical JSON of (unredacted) arguments."""
    return "sha256:" + hashlib.sha256(canonical_json(arguments).encode()).hexdigest()


def _outcome(call: CallRecord, result: ToolResultBlock) -> str:
    if call.decision == "deny":
        return "denied"
    if call.decision == "invalid":
        return "invalid"
    return "error" if result.is_error else "ok"


def _last_record(path: Path) -> tuple[str, int, str]:
    """The hash, sequence number and MAC to continue from (``GENESIS``, 0, "" for a new
    log)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return GENESIS, 0, ""
    if size == 0:
        return GENESIS, 0, ""
    with path.open("rb") as file:
        file.seek(size - 1)
        if file.read(1) != b"\n":
            raise ValueError(
                f"audit log {path} ends with an incomplete record (a crash during a write, or"
                " an edit): verify it and move it aside before writing to it again"
            )
        start = _line_start(file, size - 1)
        file.seek(start)
        last = file.read(size - 1 - start)
    try:
        record = json.loads(last)
        return str(record["hash"]), int(record["seq"]) + 1, str(record.get("mac", ""))
    except (ValueError, KeyError, TypeError):
        raise ValueError(
            f"audit log {path} ends with a damaged record: verify it and move it aside"
            " before writing to it again"
        ) from None


def torn_at(path: Path) -> int | None:
    """Where the last line of the log at ``path`` starts when it has no newline (a write
    cut short), else ``None``."""
    with path.open("rb") as file:
        end = file.seek(0, os.SEEK_END)
        if end == 0:
            return None
        file.seek(end - 1)
        if file.read(1) == b"\n":
            return None
        return _line_start(file, end)


def _line_start(file: BinaryIO, end: int) -> int:
    """Where the line holding the byte before ``end`` starts: just past the last newline
    before ``end``, 0 when there is none. Read backwards a block at a time, each byte
    once: only that line is read, however long the log."""
    while end > 0:
        start = max(0, end - _BLOCK)
        file.seek(start)
        newline = file.read(end - start).rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        end = start
    return 0


class _Writer:
    """structlog's final logger: one ``write`` per line on an ``O_APPEND`` descriptor."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def msg(self, message: str) -> None:
        data = (message + "\n").encode()
        while data:
            data = data[os.write(self.fd, data) :]


class AuditLog:
    """A ``CallObserver`` writing a tamper-evident audit log to ``path`` (appending, and
    continuing the chain of an existing log).

    ``secrets`` are values redacted wherever they appear (``environment_secrets()``);
    ``key`` (bytes) adds a MAC to each record; ``anchor`` is a file that holds the head
    (``AuditHead``), rewritten after each record. Each record is appended with one
    ``write`` before ``on_decision``/``on_finish`` returns; ``fsync`` (default on) also
    makes it durable first, concurrent writers sharing each fsync (run in a worker
    thread). Use it from one event loop. Raises
    ``ValueError`` when an existing log ends with a damaged record, ``OSError`` when the
    file cannot be opened. Use it as a context manager, or ``close()`` it.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        fsync: bool = True,
        key: bytes | None = None,
        anchor: str | os.PathLike[str] | None = None,
        secrets: tuple[str, ...] = (),
    ) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self._key = key
        self._secrets = secrets
        self._anchor = Path(anchor) if anchor is not None else None
        self._prev, self._seq, self._mac = _last_record(self.path)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(self.path, flags, 0o600)
        self._lock = threading.Lock()
        self._synced = self._seq
        self._syncing: anyio.Event | None = None
        self._closed = False
        self._head_fd = open_head(self._anchor) if self._anchor is not None else None
        if self._head_fd is not None:
            write_head(self._head_fd, self.anchor_head)
        self._logger = structlog.wrap_logger(
            _Writer(self._fd),
            processors=[
                structlog.processors.TimeStamper(fmt="iso", utc=True, key="time"),
                self._redact,
                self._chain,
                structlog.processors.JSONRenderer(serializer=self._serialize),
            ],
            context_class=dict,
            wrapper_class=structlog.BoundLogger,
        )

    @property
    def closed(self) -> bool:
        """True once ``close()`` was called."""
        return self._closed

    @property
    def head(self) -> str:
        """The hash of the last record written (``GENESIS`` for an empty log)."""
        return self._prev

    @property
    def anchor_head(self) -> AuditHead:
        """Where the log ends now: count, last hash and MAC, sealed with the key."""
        head = AuditHead(self._seq, self._prev if self._seq else "", self._mac)
        return head.sealed(self._key) if self._key is not None else head

    @property
    def records(self) -> int:
        """How many records the log holds."""
        return self._seq

    def _redact(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> Any:
        if "arguments" in event:
            event["arguments"] = redact(event["arguments"], secrets=self._secrets)
        for name in _TEXT_FIELDS:
            if isinstance(event.get(name), str):
                event[name] = redact_text(event[name], secrets=self._secrets)
        return event

    def _chain(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> Any:
        event["seq"] = self._seq
        record = {k: event[k] for k in _ORDER if k in event}
        record.update((k, v) for k, v in event.items() if k not in record)
        record["prev"] = self._prev
        record["hash"] = record_hash(record)
        if self._key is not None:
            record["mac"] = self._mac = record_mac(record, self._key)
        self._prev = record["hash"]
        self._seq += 1
        return record

    @staticmethod
    def _serialize(value: Any, **options: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)

    def _write(
        self,
        event: Literal["approval", "decision", "finish", "resume", "connection", "undo"],
        fields: dict[str, Any],
    ) -> tuple[int, str]:
        """Render and append one record; return how many records the log then holds,
        and the record's hash.

        Rendering, chaining and the ``write`` happen under one lock, so the file's order
        is the chain's order. The write is a small append (microseconds, into the page
        cache), cheaper in the loop than a hop to a worker thread; fsync is not.
        """
        with self._lock:
            if self._closed:
                raise ValueError(f"audit log {self.path} is closed")
            prev, seq, mac = self._prev, self._seq, self._mac
            try:
                self._logger.msg(event, **fields)
            except BaseException:  # not written: the next record must not chain from it
                self._prev, self._seq, self._mac = prev, seq, mac
                raise
            if self._head_fd is not None:  # after the record: a crash leaves head <= log
                write_head(self._head_fd, self.anchor_head)
            return self._seq, self._prev

    async def _sync(self, records: int) -> None:
        """Return once the first ``records`` records are fsynced. One task fsyncs in a
        worker thread for everyone who waits meanwhile (a group commit)."""
        while self._synced < records:
            if self._syncing is not None:
                await self._syncing.wait()
                continue
            done = self._syncing = anyio.Event()
            try:
                with self._lock:
                    if self._closed:
                        raise ValueError(f"audit log {self.path} is closed")
                    upto = self._seq
                await anyio.to_thread.run_sync(os.fsync, self._fd)
                self._synced = max(self._synced, upto)
            finally:
                self._syncing = None
                done.set()

    async def _append(
        self,
        event: Literal["approval", "decision", "finish", "resume", "undo"],
        fields: dict[str, Any],
    ) -> str:
        records, digest = self._write(event, fields)
        if self.fsync:
            await self._sync(records)
        return digest

    def _common(self, call: CallRecord) -> dict[str, Any]:
        return {
            "run_id": current_scope().run_id,
            "path": call.path,
            "role": role_of(call.path),
            "call_id": call.call_id,
            "tool": call.tool,
        }

    async def on_decision(self, call: CallRecord) -> None:
        """Write the decision record; it is on disk when this returns. The record's hash
        goes on the call (``audit_hash``) for observers after this one."""
        arguments = call.arguments if call.arguments is not None else call.input
        receipt = call.approval
        if receipt is not None:  # the answer to an ask: its receipt comes first
            approved = receipt.get("arguments")
            await self._append(
                "approval",
                {
                    **self._common(call),
                    **receipt,
                    "args_hash": args_hash(approved) if approved is not None else None,
                },
            )
        call.audit_hash = await self._append(
            "decision",
            {
                **self._common(call),
                **({"asked": True} if receipt is not None else {}),
                "arguments": arguments,
                "args_hash": args_hash(arguments),
                "decision": call.decision,
                "guard": call.guard,
                "rule": call.rule,
                "policy": call.policy,
                "policy_hash": call.policy_hash,
                "reason": call.reason,
                "sandbox": call.sandbox,
            },
        )

    async def on_finish(self, call: CallRecord, result: ToolResultBlock, duration: float) -> None:
        """Write the finish record: outcome, duration and the error text of a failure
        (its hash goes on the call's ``audit_hash``)."""
        call.audit_hash = await self._append(
            "finish",
            {
                **self._common(call),
                "outcome": _outcome(call, result),
                "duration": round(duration, 6),
                "error": result.text if result.is_error else None,
                **({"after": list(call.after)} if call.after else {}),
                **({"saved_output": call.saved_output} if call.saved_output else {}),
                **(
                    {"rule": "protected-path", "undone": list(call.protected)}
                    if call.protected
                    else {}
                ),
            },
        )

    def on_connection(self, connection: ConnectionRecord) -> None:
        """Write a ``connection`` record: one connection a command made, or tried to
        make, through the egress proxy (written at once; fsynced with the next call's
        records)."""
        self._write(
            "connection",
            {
                "run_id": current_scope().run_id,
                "path": connection.path,
                "role": role_of(connection.path) if connection.path else None,
                "host": connection.host,
                "port": connection.port,
                "address": connection.address,
                "method": connection.method,
                "decision": "allow" if connection.allowed else "deny",
                "rule": NETWORK_RULE,
                "reason": connection.reason,
                "sent": connection.sent,
                "received": connection.received,
                "duration": connection.duration,
            },
        )

    async def record_interrupted(self, decision: dict[str, Any]) -> None:
        """Write the finish record of a call whose ``decision`` record has no finish
        because the run died mid-call: outcome ``interrupted``."""
        await self._append(
            "finish",
            {
                "run_id": decision.get("run_id"),
                "path": decision.get("path"),
                "role": decision.get("role"),
                "call_id": decision.get("call_id"),
                "tool": decision.get("tool"),
                "outcome": "interrupted",
                "duration": None,
                "error": "the run stopped before this call's end was recorded",
            },
        )

    async def record_resume(self, run_id: str, accepted_changes: list[dict[str, str]]) -> None:
        """Write a ``resume`` record saying the run went on although the files that
        define it changed since it started (``accepted_changes``: path and how, as
        ``swarm.record.pinning.ChangedFile`` gives them), as the person resuming
        accepted (``--accept-changed-team``); rule ``accept-changed-team``."""
        await self._append(
            "resume",
            {
                "run_id": run_id,
                "rule": "accept-changed-team",
                "changed": accepted_changes,
            },
        )

    def record_undo(
        self, run_id: str, undone: list[dict[str, str]], restored: list[str], *, forced: bool
    ) -> None:
        """Write (and fsync) an ``undo`` record: the calls taken back (``undone``: call id
        and agent path), the paths put back, and whether ``--force`` overrode a refusal.
        Synchronous: an undo runs outside any event loop's hot path."""
        self._write(
            "undo",
            {
                "run_id": run_id,
                "rule": "undo",
                "undone": undone,
                "restored": restored,
                "forced": forced,
            },
        )
        if self.fsync:
            os.fsync(self._fd)

    def close(self) -> None:
        """Close the file; later writes raise ``ValueError``."""
        with self._lock:
            if not self._closed:
                self._closed = True
                os.close(self._fd)
                if self._head_fd is not None:
                    os.close(self._head_fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
