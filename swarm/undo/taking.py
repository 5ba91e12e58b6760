"""Undo and diff over a run record's undo log: the functions behind ``RunRecord.undo``,
``RunRecord.diff``, ``swarm runs undo`` and ``swarm runs diff``."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from swarm._visible import visible
from swarm.undo.capture import UndoCapture, _row
from swarm.undo.log import UNDO_DIR, CallChanges, Change, read_undo_log
from swarm.undo.restore import UNDO_AGENT, UNDO_TOOL, apply_undo, plan_undo, select_calls
from swarm.undo.state import BlobStore, PathState

__all__ = ["UndoResult", "call_diff", "run_calls", "undo_calls"]

TEXT_LIMIT = 256 * 1024


@dataclass(frozen=True, slots=True)
class UndoResult:
    """What an undo did: the calls it took back (``undone``) and each path it put back
    (``restored``: what the path held before the undo, and holds now)."""

    undone: tuple[CallChanges, ...]
    restored: tuple[Change, ...]

    def lines(self) -> list[str]:
        """One line per path put back, for people."""
        return [
            f"{visible(c.path)}: {c.before.describe()} -> {c.after.describe()}"
            for c in self.restored
        ]


def run_calls(record_dir: Path) -> list[CallChanges]:
    """Every captured call of the run recorded in ``record_dir``, in order."""
    return read_undo_log(record_dir / UNDO_DIR).calls


def undo_calls(
    record_dir: Path,
    workspace: Path,
    *,
    call: str | None = None,
    agent: str | None = None,
    since: str | None = None,
    force: bool = False,
) -> UndoResult:
    """Put ``workspace`` back as it was before the chosen calls (see ``select_calls``);
    the undo is itself recorded in the undo log as a call of agent ``(undo)``, so it can
    be undone in turn. Raises ``UndoRefused`` naming each path that stops it."""
    capture = UndoCapture(workspace, record_dir)
    try:
        capture.recover()  # a run (or an undo) killed mid-call: its changes first
        calls = capture.log.state.calls
        chosen = select_calls(calls, call=call, agent=agent, since=since)
        steps = plan_undo(workspace, calls, chosen, capture.store, force=force)
        seq = capture.log.take_seq()
        name = f"undo-{seq}"
        scan = {s.path: _row(s.now) for s in steps}
        capture.log.pending(seq, name, UNDO_AGENT, UNDO_TOOL, scan, only=True)
        restored = apply_undo(workspace, steps, capture.store)
        capture.log.finished(CallChanges(seq, name, UNDO_AGENT, UNDO_TOOL, tuple(restored)))
        return UndoResult(tuple(chosen), tuple(restored))
    finally:
        capture.close()


def _text(store: BlobStore, state: PathState) -> str | None:
    """A file's text when it is small UTF-8 without NUL bytes (else ``None``)."""
    if state.kind != "file" or state.size > TEXT_LIMIT or not store.has(state.blob):
        return None
    data = store.read(state.blob)
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def call_diff(record_dir: Path, calls: list[CallChanges]) -> str:
    """What ``calls`` did, as a text people read: for each call its id, agent and tool,
    then each path with a unified diff (text files) or what it held before and after."""
    store = BlobStore(record_dir / UNDO_DIR / "blobs")
    out: list[str] = []
    for c in calls:
        said = "" if c.undoable else f"  (cannot be undone: {c.reason})"
        out.append(f"call {visible(c.call)}  agent {visible(c.agent)}  tool {c.tool}{said}")
        for change in c.changes:
            path = visible(change.path)
            out.append(
                f"  {change.kind} {path}: {change.before.describe()} -> {change.after.describe()}"
            )
            old, new = _text(store, change.before), _text(store, change.after)
            if (old is None and change.before.kind == "file") or (
                new is None and change.after.kind == "file"
            ):
                continue
            if old is None and new is None:
                continue
            for line in difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                fromfile=f"a/{path}" if old is not None else "/dev/null",
                tofile=f"b/{path}" if new is not None else "/dev/null",
            ):
                out.append("    " + visible(line.rstrip("\n")))
    return "\n".join(out) + ("\n" if out else "")
