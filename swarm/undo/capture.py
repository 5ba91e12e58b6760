"""Capturing each call's effect on the workspace, so it can be shown and undone.

``UndoCapture`` is a run's ``swarm.scope.CallCapture``: the loop asks it to ``admit`` a call
that can write (after the guards allowed it) and runs the call inside ``capturing``.

- ``write_file`` and ``edit_file`` capture their own path (and the directories they
  create): one ``lstat`` and, for a file, its bytes.
- ``shell``, in a tier that mounts a workspace overlay (bubblewrap, where overlays
  can be mounted: ``swarm.sandbox.overlay``), is captured by its overlay
  (``OverlayCall``): the command's changes land in the overlay's upper directory, and
  only the paths there are read, kept and moved into the workspace afterwards; a call
  costs what it changed.
- Every other tool that can write (one that is not idempotent: ``shell`` in another
  tier, MCP tools not marked read-only, Python tools declared ``idempotent=False``; not a
  sub-agent, whose own calls are captured) is captured by
  walking the workspace before and after: one ``lstat`` per entry, ``.git`` included,
  and the bytes of the files not seen before (each file's content is read and stored
  once per run, then known by its identity: device, inode, size, modification and
  change times). So a call costs a walk of the workspace plus what it changes; a large
  file the call does not touch is read once per run.

The pre-images go into the run record's ``undo/blobs`` (see ``swarm.undo.log``), within
the run's budget (policy ``undo: {max_bytes}``): a call whose pre-images do not fit is
denied before it runs (rule ``undo-budget``; over an overlay, where what it changes is
known only once it ran, its changes are not applied), or, with ``over_budget: run``,
runs with its changes listed but not undoable. Captured calls run one at a time, so each change
is put down to the call that made it. Before a walked call runs, its pre-scan is
written to the record: after a ``kill -9`` the next segment, or ``swarm runs undo``,
finds what the call changed (``recover``).
"""

from __future__ import annotations

import json
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.to_thread

from swarm.errors import GuardError
from swarm.sandbox.base import Overlay
from swarm.sandbox.overlay import overlay_works
from swarm.sandbox.select import ToolSandbox
from swarm.scope import CallRecord
from swarm.tools import Tool
from swarm.undo.log import UNDO_DIR, CallChanges, Change, UndoLog
from swarm.undo.overlay import apply_upper, discard, lower_touched, read_upper
from swarm.undo.state import ABSENT, BlobStore, Entry, PathState, open_parent, state_at, walk

__all__ = ["DEFAULT_MAX_BYTES", "PATH_TOOLS", "UNDO_RULE", "UndoCapture", "UndoSettings"]

UNDO_RULE = "undo-budget"
PATH_TOOLS = frozenset({"write_file", "edit_file"})
"""Tools that change only the file their ``path`` argument names."""
GiB = 1024**3
DEFAULT_MAX_BYTES = 2 * GiB
OUTSIDE_WORKSPACE = frozenset(
    {"agents", "ask_user", "final_answer", "load_skill", "notes", "read_output", "todo"}
)
"""Built-in tools that are not idempotent but never write the workspace (or only in
``.swarm``, which is never captured). Captured calls run one at a time: the ``agents``
tool waiting for background sub-agents, or ``ask_user`` waiting for a person, would hold
every other agent's writes, and a sub-agent's write waited on would never come."""


@dataclass(frozen=True, slots=True)
class UndoSettings:
    """A policy's ``undo:``: ``max_bytes`` of pre-images a run may keep (default 2 GiB);
    ``over_budget`` says what happens to a call whose pre-images do not fit: ``deny``
    (rule ``undo-budget``) or ``run`` (its changes are listed, not undoable)."""

    max_bytes: int = DEFAULT_MAX_BYTES
    over_budget: Literal["deny", "run"] = "deny"


Scope = Literal["path", "workspace", "overlay"]
OVERLAY_DIR = "overlay"
"""Where, in the record's ``undo/``, each overlay call's upper and work directories are."""


def _row(state: PathState) -> list[Any]:
    return [state.kind, state.mode, state.blob, state.target, state.size]


def _from_row(row: list[Any]) -> PathState:
    return PathState(str(row[0]), int(row[1]), str(row[2]), str(row[3]), int(row[4]))


def _unhashed(entry: Entry) -> PathState:
    """A file's state by its identity only (a call running without undo)."""
    size, mtime, ctime = entry.info.st_size, entry.info.st_mtime_ns, entry.info.st_ctime_ns
    mode = stat.S_IMODE(entry.info.st_mode)
    return PathState("file", mode, f"stat:{entry.info.st_ino}:{size}:{mtime}:{ctime}", size=size)


class UndoCapture:
    """Captures the calls of one run in ``workspace`` into the record at ``record_dir``
    (see the module's docstring); ``skip`` are paths relative to the workspace never
    captured (``.swarm``, read-only to every tool, where run records may be kept)."""

    def __init__(
        self,
        workspace: Path,
        record_dir: Path,
        *,
        settings: UndoSettings | None = None,
        skip: frozenset[str] = frozenset({".swarm"}),
    ) -> None:
        self.workspace = workspace
        self.settings = settings or UndoSettings()
        self.skip = skip
        self.log = UndoLog(record_dir / UNDO_DIR)
        self.store = BlobStore(record_dir / UNDO_DIR / "blobs")
        self.store.clear_partial()
        self._lock = anyio.Lock()
        self._without: dict[tuple[str, str], str] = {}
        # the walk ``admit`` made, reused by ``capturing`` when no captured call ran since
        self._walked: dict[tuple[str, str], tuple[int, dict[str, Entry]]] = {}
        self._generation = 0
        self._mounts: bool | None = None  # whether an overlay can be mounted here
        self._tiers: dict[object, bool] = {}  # sandbox settings: its tier mounts one

    def scope_of(
        self, tool: Tool[Any], arguments: dict[str, Any], call: CallRecord | None = None
    ) -> Scope | None:
        """How a call of ``tool`` is captured: its ``path`` only, its command's overlay
        (the ``shell`` tool in a tier that mounts one, see ``swarm.sandbox.overlay``),
        the whole workspace, or not at all (a tool that only reads)."""
        if tool.name in PATH_TOOLS and isinstance(arguments.get("path"), str):
            return "path"
        if tool.name in OUTSIDE_WORKSPACE:
            return None
        # a tool that streams runs a sub-agent, whose own calls are captured one by one
        if tool.idempotent or tool.streams:
            return None
        return "overlay" if self._overlays(tool, call) else "workspace"

    def _overlays(self, tool: Tool[Any], call: CallRecord | None) -> bool:
        """Whether ``tool`` is the shell tool and the tier it will find for the call's
        sandbox settings mounts an overlay, which works here (known once per settings)."""
        bound = tool.context
        if tool.name != "shell" or not isinstance(bound, ToolSandbox):
            return False  # another tool's context is its own (an MCP tool's: its info)
        settings = bound.in_force(call.network_ceiling if call is not None else None)
        key: tuple[int, object] | None = (id(tool), settings)
        try:
            known = self._tiers.get(key)
        except TypeError:  # settings that cannot be a key: found each time
            key, known = None, None
        if known is None:
            try:
                tier = bound.find(settings)
            except Exception:  # no tier: the call will say so itself
                return False
            known = bool(getattr(tier, "overlays", False))
            if key is not None:
                self._tiers[key] = known
        if known and self._mounts is None:
            base = self.log.directory / OVERLAY_DIR
            self._mounts = overlay_works(self.workspace.resolve(), base)
        return known and bool(self._mounts)

    async def admit(self, call: CallRecord, tool: Tool[Any], arguments: dict[str, Any]) -> None:
        """Check the call's pre-images fit the budget. Raises ``GuardError`` (rule
        ``undo-budget``) when they do not and the policy says ``deny``."""
        scope = self.scope_of(tool, arguments, call)
        if scope is None or scope == "overlay":  # an overlay's budget is kept on apply
            return
        need = await anyio.to_thread.run_sync(self._need, scope, arguments, call)
        left = self.settings.max_bytes - self.store.used
        if need <= left:
            return
        why = (
            f"its pre-images need {need:,} bytes and the run's undo budget has"
            f" {max(left, 0):,} of {self.settings.max_bytes:,} left (policy undo.max_bytes)"
        )
        if self.settings.over_budget == "deny":
            raise GuardError(f"the call could not be undone: {why}", guard="undo", rule=UNDO_RULE)
        self._without[(call.path, call.call_id)] = why

    def _need(self, scope: Scope, arguments: dict[str, Any], call: CallRecord) -> int:
        if scope == "path":
            rel = str(arguments["path"]).strip("/")
            try:
                info = (self.workspace / rel).lstat()
            except OSError:
                return 0
            return info.st_size if stat.S_ISREG(info.st_mode) else 0
        entries = walk(self.workspace, skip=self.skip)
        self._walked[(call.path, call.call_id)] = (self._generation, entries)
        return self.store.unread(entries)

    @asynccontextmanager
    async def capturing(
        self, call: CallRecord, tool: Tool[Any], arguments: dict[str, Any]
    ) -> AsyncIterator[None]:
        """Run the call inside: its pre-images are kept before, its changes recorded
        after (also when it fails or is cancelled)."""
        scope = self.scope_of(tool, arguments, call)
        if scope is None:
            yield
            return
        if scope == "overlay":
            async with self._lock:
                job = OverlayCall(self, self.log.take_seq(), call, tool.name)
                await anyio.to_thread.run_sync(job.start)
                call.overlay = job
                try:
                    yield
                finally:
                    call.overlay = None
                    with anyio.CancelScope(shield=True):
                        await anyio.to_thread.run_sync(job.finish)
                        self._generation += 1
            return
        async with self._lock:
            why = self._without.pop((call.path, call.call_id), "")
            walked = self._walked.pop((call.path, call.call_id), None)
            fresh = walked[1] if walked is not None and walked[0] == self._generation else None
            seq = self.log.take_seq()
            before = await anyio.to_thread.run_sync(
                self._before, scope, arguments, seq, call, tool.name, not why, fresh
            )
            try:
                yield
            finally:
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(
                        self._after, scope, arguments, seq, call, tool.name, before, why
                    )
                    self._generation += 1

    def _paths(self, arguments: dict[str, Any]) -> list[str]:
        """The path a path tool writes, and the directories on the way to it."""
        parts = [p for p in str(arguments["path"]).split("/") if p not in ("", ".")]
        return ["/".join(parts[: i + 1]) for i in range(len(parts))]

    def _before(
        self,
        scope: Scope,
        arguments: dict[str, Any],
        seq: int,
        call: CallRecord,
        tool: str,
        hashing: bool,
        walked: dict[str, Entry] | None = None,
    ) -> tuple[dict[str, PathState], dict[str, Entry]]:
        entries: dict[str, Entry] = {}
        if scope == "path":
            states = {rel: self._state_at(rel, hashing) for rel in self._paths(arguments)}
        else:
            entries = walked if walked is not None else walk(self.workspace, skip=self.skip)
            states = self._states(entries, hashing)
        scan = {rel: _row(s) for rel, s in states.items()}
        self.log.pending(seq, call.call_id, call.path, tool, scan, only=scope == "path")
        return states, entries

    def _state_at(self, rel: str, hashing: bool) -> PathState:
        if ".." in rel.split("/"):
            return ABSENT
        if hashing:
            return state_at(self.workspace, rel, self.store)
        try:
            info = (self.workspace / rel).lstat()
        except OSError:
            return ABSENT
        return _unhashed(Entry(info)) if stat.S_ISREG(info.st_mode) else ABSENT

    def _states(self, entries: dict[str, Entry], hashing: bool) -> dict[str, PathState]:
        """Each entry's state: files hashed (and stored) unless the store has seen the
        same identity in this run, or ``hashing`` is off."""
        states: dict[str, PathState] = {}
        for rel, entry in entries.items():
            mode = entry.info.st_mode
            if stat.S_ISREG(mode):
                if not hashing:
                    states[rel] = _unhashed(entry)
                elif (digest := self.store.known.get(entry.key)) is not None:
                    # seen, and stored, before in this run: blobs are never removed
                    size = entry.info.st_size
                    states[rel] = PathState("file", stat.S_IMODE(mode), digest, size=size)
                else:
                    states[rel] = self._stored(rel, entry)
            elif stat.S_ISLNK(mode):
                states[rel] = PathState("link", stat.S_IMODE(mode), target=entry.target)
            else:
                kind = "dir" if stat.S_ISDIR(mode) else "other"
                states[rel] = PathState(kind, stat.S_IMODE(mode))
        return states

    def _stored(self, rel: str, entry: Entry) -> PathState:
        try:
            with open_parent(self.workspace, rel) as parent:
                return self.store.state(parent, rel.rsplit("/", 1)[-1], entry)
        except OSError:
            return ABSENT  # gone, or a directory on the way swapped for a link

    def _after(
        self,
        scope: Scope,
        arguments: dict[str, Any],
        seq: int,
        call: CallRecord,
        tool: str,
        before: tuple[dict[str, PathState], dict[str, Entry]],
        why: str,
    ) -> None:
        states, entries = before
        if scope == "path":
            after = {rel: self._state_at(rel, not why) for rel in states}
            self.log.finished(_changes(seq, call.call_id, call.path, tool, states, after, why))
            return
        now = walk(self.workspace, skip=self.skip)
        # only what a stat says may have changed is looked at again: the cost of a call
        # past its walk is what it changed
        moved = {rel: e for rel, e in now.items() if not _unmoved(entries.get(rel), e)}
        after = self._states(moved, not why)
        before_moved = {rel: states.get(rel, ABSENT) for rel in moved}
        before_moved.update((rel, states[rel]) for rel in entries if rel not in now)
        self.log.finished(_changes(seq, call.call_id, call.path, tool, before_moved, after, why))

    def recover(self) -> list[CallChanges]:
        """Find what the calls a crash cut short changed (their pre-scans are in the
        record) and record it; returns what it recorded."""
        found = []
        for seq, entry in sorted(self.log.state.pending.items()):
            try:
                scan = json.loads(self.log.pending_path(seq).read_text())
                states = {rel: _from_row(row) for rel, row in scan.items()}
            except (OSError, ValueError, TypeError, IndexError):
                states = None
            if states is None:
                changes = CallChanges(
                    seq,
                    str(entry.get("pending")),
                    str(entry.get("agent", "")),
                    str(entry.get("tool", "")),
                    undoable=False,
                    reason="the run died before the call's pre-scan was written whole",
                    interrupted=True,
                )
            else:
                if entry.get("only"):
                    now = {rel: self._state_at(rel, True) for rel in states}
                else:
                    now = self._states(walk(self.workspace, skip=self.skip), True)
                changes = _changes(
                    seq,
                    str(entry.get("pending")),
                    str(entry.get("agent", "")),
                    str(entry.get("tool", "")),
                    states,
                    now,
                    "",
                    interrupted=True,
                )
            self.log.finished(changes)
            found.append(changes)
        overlays = self.log.directory / OVERLAY_DIR
        if overlays.is_dir():  # what commands cut short by the crash wrote: never applied
            for directory in overlays.iterdir():
                discard(directory)
        return found

    def close(self) -> None:
        """Close the log."""
        self.log.close()


class OverlayCall:
    """A shell call captured by its overlay (``swarm.scope.OverlayCapture``): its command
    writes to ``overlay``; ``apply`` keeps the pre-image of each path the command
    changed, then moves its changes into the workspace; ``finish`` records them."""

    def __init__(self, capture: UndoCapture, seq: int, call: CallRecord, tool: str) -> None:
        self.capture, self.seq, self.call, self.tool = capture, seq, call, tool
        self.directory = capture.log.directory / OVERLAY_DIR / str(seq)
        self.overlay = Overlay(self.directory / "upper", self.directory / "work")
        self._answer: str | None = None
        self._before: dict[str, PathState] = {}
        self._why = ""

    def start(self) -> None:
        """Make the overlay's directories; the call is pending with nothing to undo yet
        (killed before ``apply``, it changed nothing: its changes are never applied)."""
        if self.directory.exists():
            discard(self.directory)
        self.overlay.upper.mkdir(mode=0o700, parents=True)
        self.overlay.work.mkdir(mode=0o700)
        self.capture.log.pending(
            self.seq, self.call.call_id, self.call.path, self.tool, {}, only=True
        )

    def apply(self) -> str:
        """Keep the pre-images, then move the changes into the workspace; "" or why they
        were dropped or not all applied. Runs once."""
        if self._answer is None:
            try:
                self._answer = self._apply()
            except OSError as exc:  # the upper directory or the record cannot be read
                self._answer = f"the command's changes were not kept: {exc}"
        return self._answer

    def _apply(self) -> str:
        capture = self.capture
        upper = read_upper(self.overlay.upper, skip=capture.skip)
        lower = lower_touched(capture.workspace, upper)
        need = capture.store.unread(lower)
        left = capture.settings.max_bytes - capture.store.used
        if need > left:
            why = (
                f"its pre-images need {need:,} bytes and the run's undo budget has"
                f" {max(left, 0):,} of {capture.settings.max_bytes:,} left (policy"
                " undo.max_bytes)"
            )
            if capture.settings.over_budget == "deny":
                return f"[{UNDO_RULE}] the command's changes to the workspace were not kept: {why}"
            self._why = why
        before = capture._states(lower, not self._why)
        before.update((rel, ABSENT) for rel in (*upper.written, *upper.deleted) if rel not in lower)
        self._before = before
        scan = {rel: _row(state) for rel, state in before.items()}
        capture.log.pending(self.seq, self.call.call_id, self.call.path, self.tool, scan, only=True)
        try:
            apply_upper(capture.workspace, upper, lower)
        except OSError as exc:
            return (
                f"the command's changes were applied only in part: {exc.filename or ''}:"
                f" {exc.strerror or exc}"
            )
        return ""

    def finish(self) -> None:
        """Apply (when the tool did not), record what the call changed as the
        workspace holds it now (after the protected paths' sweep), and remove the
        overlay's directories."""
        self.apply()
        capture = self.capture
        after = {rel: capture._state_at(rel, not self._why) for rel in self._before}
        call = self.call
        capture.log.finished(
            _changes(self.seq, call.call_id, call.path, self.tool, self._before, after, self._why)
        )
        discard(self.directory)


def _unmoved(old: Entry | None, new: Entry) -> bool:
    """Whether a path's ``lstat`` (and link target) are the same in both walks."""
    return (
        old is not None
        and old.key == new.key
        and old.info.st_mode == new.info.st_mode
        and old.target == new.target
    )


def _changes(
    seq: int,
    call: str,
    agent: str,
    tool: str,
    before: dict[str, PathState],
    after: dict[str, PathState],
    why: str,
    *,
    interrupted: bool = False,
) -> CallChanges:
    changed = []
    for rel in sorted(set(before) | set(after)):
        old, new = before.get(rel, ABSENT), after.get(rel, ABSENT)
        if not old.same(new):
            changed.append(Change(rel, old, new))
    return CallChanges(
        seq, call, agent, tool, tuple(changed), not why, why, interrupted=interrupted
    )
