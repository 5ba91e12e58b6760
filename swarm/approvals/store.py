"""The pending requests of a run, on disk: ``approvals.jsonl`` in its run record.

One JSON object a line, appended under an exclusive ``flock`` and fsynced before the
writer goes on, so a request survives ``kill -9`` and two processes (the run, and
``swarm approve`` in another shell) never interleave a line:

    {"event": "request", "id": "1", "path", "call_id", "tool", "arguments", "reason",
     "rule", "policy", "guard", "time"}
    {"event": "answer", "id": "1", "approved", "reason", "arguments", "who", "via", "time"}
    {"event": "used", "id": "1", "time"}       # the call ran (or was refused) on it

The first answer to a request counts; later ones are ignored (``swarm approve`` and the
terminal may race). A line a crash cut short is skipped.
"""

from __future__ import annotations

import fcntl
import getpass
import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from swarm.scope import ApprovalRequest

__all__ = ["APPROVALS_FILE", "ApprovalStore", "Pending", "os_user"]

APPROVALS_FILE = "approvals.jsonl"
"""The file in a run record that holds its approval requests and answers."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def os_user() -> str:
    """The name of the person running this process, as the OS knows them."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"


@dataclass(slots=True)
class Pending:
    """One request as the store knows it: what was asked, and its answer once given
    (``answer``), and whether the call has gone on with it (``used``)."""

    id: str
    path: str
    call_id: str | None
    tool: str
    arguments: dict[str, Any]
    reason: str
    rule: str | None
    policy: str | None
    guard: str
    time: str
    answer: dict[str, Any] | None = None
    used: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def state(self) -> str:
        """``pending``, ``approved`` or ``denied``."""
        if self.answer is None:
            return "pending"
        return "approved" if self.answer.get("approved") else "denied"

    def to_dict(self) -> dict[str, Any]:
        """The request and its answer as JSON data."""
        return {
            "id": self.id,
            "state": self.state,
            "path": self.path,
            "call_id": self.call_id,
            "tool": self.tool,
            "arguments": self.arguments,
            "reason": self.reason,
            "rule": self.rule,
            "policy": self.policy,
            "time": self.time,
            "answer": self.answer,
            "used": self.used,
        }


class ApprovalStore:
    """The approval requests of one run, kept in ``path`` (``approvals.jsonl``).

    Every method reads the file afresh: another process may have answered since.
    Raises ``OSError`` when the file cannot be written.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    @contextmanager
    def _locked(self) -> Iterator[Callable[[Mapping[str, Any]], None]]:
        """Hold the file's lock; yields a function that appends one line (fsynced)."""
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)

            def write(data: Mapping[str, Any]) -> None:
                line = json.dumps(dict(data), default=str, ensure_ascii=False) + "\n"
                os.write(fd, line.encode())
                os.fsync(fd)

            yield write
        finally:
            os.close(fd)

    def requests(self) -> list[Pending]:
        """Every request, in the order asked, with its answer (the first given)."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        found: dict[str, Pending] = {}
        for line in raw.splitlines():
            try:
                data = json.loads(line)
            except ValueError:
                continue  # a line a crash cut short
            if not isinstance(data, dict):
                continue
            key = str(data.get("id"))
            match data.get("event"):
                case "request":
                    found.setdefault(
                        key,
                        Pending(
                            key,
                            str(data.get("path", "")),
                            data.get("call_id"),
                            str(data.get("tool", "")),
                            dict(data.get("arguments") or {}),
                            str(data.get("reason", "")),
                            data.get("rule"),
                            data.get("policy"),
                            str(data.get("guard", "")),
                            str(data.get("time", "")),
                        ),
                    )
                case "answer" if key in found and found[key].answer is None:
                    found[key].answer = data
                case "used" if key in found:
                    found[key].used = True
                case _:
                    pass
        return list(found.values())

    def pending(self) -> list[Pending]:
        """The requests nobody has answered yet."""
        return [p for p in self.requests() if p.answer is None]

    def find(self, path: str, call_id: str | None) -> Pending | None:
        """The request about the call ``call_id`` of the agent at ``path``, if asked."""
        if call_id is None:
            return None
        return next((p for p in self.requests() if p.path == path and p.call_id == call_id), None)

    def get(self, request_id: str) -> Pending | None:
        """The request with id ``request_id``."""
        return next((p for p in self.requests() if p.id == request_id), None)

    def add(self, request: ApprovalRequest) -> Pending:
        """Write ``request`` as pending (once per call: an earlier one is returned)."""
        known = self.find(request.path, request.call_id)
        if known is not None:
            return known
        with self._locked() as write:  # numbering and writing under one lock
            number = 1 + len(self.requests())
            write(
                {
                    "event": "request",
                    "id": str(number),
                    "path": request.path,
                    "call_id": request.call_id,
                    "tool": request.tool,
                    "arguments": dict(request.arguments),
                    "reason": request.reason,
                    "rule": request.rule,
                    "policy": request.policy,
                    "guard": request.guard,
                    "time": _now(),
                }
            )
        found = self.get(str(number))
        assert found is not None
        return found

    def answer(
        self,
        request_id: str,
        *,
        approved: bool,
        who: str,
        via: str,
        reason: str = "",
        arguments: Mapping[str, Any] | None = None,
    ) -> bool:
        """Answer request ``request_id``; False when it was answered already (the first
        answer counts). Raises ``KeyError`` for an id the run never asked."""
        with self._locked() as write:  # the check and the answer under one lock
            known = self.get(request_id)
            if known is None:
                raise KeyError(request_id)
            if known.answer is not None:
                return False
            write(
                {
                    "event": "answer",
                    "id": request_id,
                    "approved": approved,
                    "reason": reason,
                    "arguments": dict(arguments) if arguments is not None else None,
                    "who": who,
                    "via": via,
                    "time": _now(),
                }
            )
        return True

    def mark_used(self, request_id: str) -> None:
        """Say that the call went on with the answer to ``request_id``."""
        with self._locked() as write:
            write({"event": "used", "id": request_id, "time": _now()})
