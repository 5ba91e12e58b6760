"""The undo log of a run: for every call that could write, what it changed, path by
path, with the state before (its pre-image) and after.

It lives in the run record, ``undo/`` beside the other files, out of every tool's
reach::

    undo/log.jsonl       one line per event: a call about to run (``pending``, with its
                         pre-scan in ``undo/pending/<seq>.json``), a call's changes
                         (``call``), an undo begun (``undo``)
    undo/blobs/<sha256>  file contents, each stored once

Each line is appended with one ``write``, so a process killed at any instant leaves
whole lines (a cut last line is skipped when read).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarm.undo.state import PathState

__all__ = ["CallChanges", "Change", "UndoLog", "read_undo_log"]

UNDO_DIR = "undo"


@dataclass(frozen=True, slots=True)
class Change:
    """One path a call changed: its state ``before`` and ``after`` the call."""

    path: str
    before: PathState
    after: PathState

    @property
    def kind(self) -> str:
        """``added``, ``deleted`` or ``changed``."""
        if self.before.kind == "absent":
            return "added"
        return "deleted" if self.after.kind == "absent" else "changed"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"path": self.path, "before": self.before.to_dict(), "after": self.after.to_dict()}


@dataclass(frozen=True, slots=True)
class CallChanges:
    """What one call changed: its ``seq`` in the log, ``call`` id, ``agent`` path and
    ``tool``; ``undoable`` is false when its pre-images were not kept (``reason`` says
    why); ``interrupted`` when the run died during the call and the change was found
    afterwards."""

    seq: int
    call: str
    agent: str
    tool: str
    changes: tuple[Change, ...] = ()
    undoable: bool = True
    reason: str = ""
    interrupted: bool = False
    time: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (a line of the log)."""
        data: dict[str, Any] = {
            "call": self.call,
            "seq": self.seq,
            "agent": self.agent,
            "tool": self.tool,
            "changes": [c.to_dict() for c in self.changes],
            "undoable": self.undoable,
        }
        if self.reason:
            data["reason"] = self.reason
        if self.interrupted:
            data["interrupted"] = True
        return data


@dataclass(slots=True)
class UndoState:
    """What an undo log says: calls' changes in order, calls begun and not finished
    (``pending``: seq to call, agent, tool), undos begun."""

    calls: list[CallChanges] = field(default_factory=list)
    pending: dict[int, dict[str, Any]] = field(default_factory=dict)
    next_seq: int = 1


def _change(item: Any) -> Change | None:
    if not isinstance(item, dict) or not isinstance(item.get("path"), str):
        return None
    return Change(
        item["path"],
        PathState.from_dict(item.get("before")),
        PathState.from_dict(item.get("after")),
    )


def read_undo_log(directory: Path) -> UndoState:
    """Read ``directory``'s ``log.jsonl`` (missing: empty)."""
    state = UndoState()
    try:
        raw = (directory / "log.jsonl").read_bytes()
    except FileNotFoundError:
        return state
    for line in raw.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if not isinstance(data, dict) or not isinstance(data.get("seq"), int):
            continue
        seq = data["seq"]
        state.next_seq = max(state.next_seq, seq + 1)
        if "pending" in data:
            state.pending[seq] = data
        elif "call" in data:
            state.pending.pop(seq, None)
            changes = tuple(c for c in map(_change, data.get("changes") or ()) if c is not None)
            state.calls.append(
                CallChanges(
                    seq,
                    str(data["call"]),
                    str(data.get("agent", "")),
                    str(data.get("tool", "")),
                    changes,
                    bool(data.get("undoable", True)),
                    str(data.get("reason", "")),
                    bool(data.get("interrupted", False)),
                    float(data.get("t", 0.0)),
                )
            )
    state.calls.sort(key=lambda c: c.seq)
    return state


class UndoLog:
    """Appends to a run's undo log (``directory``, made ``0700``)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        (directory / "pending").mkdir(mode=0o700, exist_ok=True)
        self.state = read_undo_log(directory)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(directory / "log.jsonl", flags, 0o600)

    def _line(self, data: dict[str, Any]) -> None:
        data["t"] = round(time.time(), 3)
        os.write(self._fd, (json.dumps(data) + "\n").encode())

    def take_seq(self) -> int:
        """A new sequence number for a call."""
        seq = self.state.next_seq
        self.state.next_seq += 1
        return seq

    def pending(
        self,
        seq: int,
        call: str,
        agent: str,
        tool: str,
        scan: dict[str, Any],
        *,
        only: bool = False,
    ) -> None:
        """A call is about to run: its pre-scan ``scan`` (path to state, JSON form) is
        written first, then the line; ``only`` says the scan holds the only paths the
        call can change (else: the whole workspace)."""
        path = self.pending_path(seq)
        partial = path.with_suffix(".partial")
        partial.write_text(json.dumps(scan))
        os.replace(partial, path)
        entry = {"pending": call, "seq": seq, "agent": agent, "tool": tool, "only": only}
        self._line(entry)
        self.state.pending[seq] = entry

    def pending_path(self, seq: int) -> Path:
        """Where the pre-scan of pending call ``seq`` is."""
        return self.directory / "pending" / f"{seq}.json"

    def finished(self, changes: CallChanges) -> None:
        """A call's changes (its pending pre-scan, if any, is dropped afterwards)."""
        self._line(changes.to_dict())
        self.state.calls.append(changes)
        self.state.pending.pop(changes.seq, None)
        self.pending_path(changes.seq).unlink(missing_ok=True)

    def close(self) -> None:
        """Close the file."""
        os.close(self._fd)
