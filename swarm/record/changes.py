"""What a run did to its workspace: the files added, changed and deleted, with diffs.

``snapshot`` reads the workspace before the run (a hash per file, and the text of small
text files so a diff can be shown); ``workspace_changes`` compares it with the workspace
after the run. The result goes into the run record as ``changes.json`` and into the end
summary and the HTML report. Symbolic links are listed, never followed.

``.git`` is compared too: what runs later outside the sandbox lives there (``config``,
``hooks/``, ``info/``), so each of its files is listed like any other, except the object
store, whose churn is summed up per repository as one entry (``.git/objects``: "12
objects added"). Files are hashed by reading them a chunk at a time; files over
``HASH_LIMIT``, and every file once a snapshot has read ``SnapshotBudget.read_bytes``,
are compared by size and modification time instead. The texts kept for diffs are
bounded by ``SnapshotBudget.text_bytes``. Whenever a bound was reached the changes say
so (``truncated`` and ``reason``).

Python's compiled caches (a ``__pycache__`` folder's files, ``*.pyc``/``*.pyo`` files) are
made by running the code, not written by anyone: they are counted (``caches``), never
listed one by one.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import os
import stat
import sys
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarm._visible import visible
from swarm.undo import CallChanges

__all__ = [
    "FileChange",
    "SnapshotBudget",
    "WorkspaceChanges",
    "WorkspaceSnapshot",
    "attributed",
    "is_cache",
    "snapshot",
    "workspace_changes",
]

MAX_FILES = 20_000  # files of the work tree (and .git outside its objects)
MAX_OBJECTS = 50_000  # entries of .git object stores
TEXT_LIMIT = 256 * 1024  # bytes of one file kept for a diff
HASH_LIMIT = 32 * 1024 * 1024  # bytes of one file read to hash it
CHUNK = 1024 * 1024  # bytes read at a time
DIFF_LINES = 400  # lines of one diff kept
DIFF_CHARS = 64 * 1024  # characters of one diff kept
OBJECTS = ".git/objects"


@dataclass(frozen=True, slots=True)
class SnapshotBudget:
    """What one snapshot may spend: ``read_bytes`` read to hash files, in all, and
    ``text_bytes`` of memory for the texts kept for diffs, in all."""

    read_bytes: int = 256 * 1024 * 1024
    text_bytes: int = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class WorkspaceSnapshot:
    """A workspace at one moment: a digest per relative path (a hash, or ``stat:`` size
    and modification time for a file that was not read), the size and modification time
    of each regular file, the text of small text files, and what bound, if any, the
    snapshot reached (``reasons``)."""

    digests: dict[str, str]
    texts: dict[str, str]
    truncated: bool = False
    stats: dict[str, str] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file the run added, changed or deleted; ``diff`` is a unified diff when both
    sides are small text files (empty otherwise); ``detail`` sums up an entry that
    stands for many files (a ``.git/objects`` store: "3 objects added"); ``by`` the
    calls that changed it, as (call id, agent path) pairs, in order."""

    path: str
    kind: str  # "added" | "changed" | "deleted"
    diff: str = ""
    detail: str = ""
    by: tuple[tuple[str, str], ...] = ()

    @property
    def agents(self) -> tuple[str, ...]:
        """The agents that changed the file, each once, in order."""
        return tuple(dict.fromkeys(agent for _, agent in self.by))


@dataclass(frozen=True, slots=True)
class WorkspaceChanges:
    """Every file the run added, changed or deleted, sorted by path; ``truncated`` when
    a bound of the snapshots was reached, and ``reason`` says which; ``caches`` the
    compiled Python cache files (``__pycache__/``, ``*.pyc``) added, changed or deleted,
    which are counted here, not listed in ``files``."""

    files: tuple[FileChange, ...] = ()
    truncated: bool = False
    reason: str = ""
    caches: int = 0

    def of_kind(self, kind: str) -> list[str]:
        """The paths of one kind of change (``added``, ``changed``, ``deleted``)."""
        return [change.path for change in self.files if change.kind == kind]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written as ``changes.json``."""
        files = []
        for c in self.files:
            item: dict[str, Any] = {"path": c.path, "kind": c.kind, "diff": c.diff}
            if c.detail:
                item["detail"] = c.detail
            if c.by:
                item["calls"] = [{"call": call, "agent": agent} for call, agent in c.by]
                item["agents"] = list(c.agents)
            files.append(item)
        data: dict[str, Any] = {"truncated": self.truncated, "reason": self.reason}
        if self.caches:
            data["caches"] = self.caches
        return {**data, "files": files}

    @classmethod
    def from_dict(cls, data: Any) -> WorkspaceChanges:
        """Read the JSON form back; anything malformed is left out."""
        if not isinstance(data, dict):
            return cls()
        files = []
        for item in data.get("files") or ():
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                kind = str(item.get("kind", "changed"))
                diff, detail = str(item.get("diff") or ""), str(item.get("detail") or "")
                by = tuple(
                    (str(c.get("call", "")), str(c.get("agent", "")))
                    for c in item.get("calls") or ()
                    if isinstance(c, dict)
                )
                files.append(FileChange(item["path"], kind, diff, detail, by))
        caches = data.get("caches")
        return cls(
            tuple(files),
            bool(data.get("truncated")),
            str(data.get("reason") or ""),
            caches if isinstance(caches, int) and not isinstance(caches, bool) else 0,
        )


@dataclass(slots=True)
class _Taking:
    """A snapshot being taken: what it found and what it has left to spend."""

    budget: SnapshotBudget
    digests: dict[str, str] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    stats: dict[str, str] = field(default_factory=dict)
    files: int = 0
    objects: int = 0
    read: int = 0
    kept: int = 0
    unread: int = 0
    untexted: int = 0
    cut: list[str] = field(default_factory=list)

    def reasons(self) -> tuple[str, ...]:
        reasons = list(self.cut)
        if self.unread:
            reasons.append(
                f"{self.unread} file(s) compared by size and modification time only: the"
                f" snapshot's read budget of {self.budget.read_bytes // 2**20} MiB was spent"
            )
        if self.untexted:
            reasons.append(
                f"{self.untexted} text file(s) without a diff: the snapshot's text budget of"
                f" {self.budget.text_bytes // 2**20} MiB was spent"
            )
        return tuple(reasons)


def _store(rel: str) -> str | None:
    """The ``.git/objects`` store that ``rel`` is in, if it is in one."""
    if rel.startswith(f"{OBJECTS}/"):
        return OBJECTS
    at = rel.find(f"/{OBJECTS}/")
    return None if at < 0 else rel[: at + 1 + len(OBJECTS)]


def is_cache(rel: str) -> bool:
    """Whether the workspace path ``rel`` is a compiled Python cache: a file in a
    ``__pycache__`` folder, or a ``.pyc``/``.pyo`` file."""
    return rel.endswith((".pyc", ".pyo")) or "__pycache__" in rel.split("/")[:-1]


def snapshot(workspace: Path, *, budget: SnapshotBudget | None = None) -> WorkspaceSnapshot:
    """Hash every file under ``workspace`` (symbolic links by their target text); keeps
    the text of UTF-8 files up to ``TEXT_LIMIT`` bytes. Unreadable files are skipped.
    Spends at most ``budget`` (see ``SnapshotBudget``), ``MAX_FILES`` files and
    ``MAX_OBJECTS`` git objects, and says in its ``reasons`` which it reached."""
    taking = _Taking(budget or SnapshotBudget())
    for top, dirs, files in os.walk(workspace, followlinks=False):
        dirs.sort()
        links = [d for d in dirs if os.path.islink(Path(top, d))]
        full = False
        for name in sorted(files) + links:
            path = Path(top, name)
            rel = path.relative_to(workspace).as_posix()
            if _store(rel) is not None:
                if taking.objects >= MAX_OBJECTS:
                    _cut(taking, f"more than {MAX_OBJECTS:,} git objects: the rest not compared")
                    dirs.clear()
                    break
                taking.objects += 1
                with suppress(OSError):
                    info = os.lstat(path)
                    taking.digests[rel] = f"stat:{info.st_size}:{info.st_mtime_ns}"
                continue
            if taking.files >= MAX_FILES:
                _cut(taking, f"more than {MAX_FILES:,} files: the rest not compared")
                full = True
                break
            taking.files += 1
            with suppress(OSError):
                _take(taking, path, rel)
        if full:
            break
    reasons = taking.reasons()
    return WorkspaceSnapshot(taking.digests, taking.texts, bool(reasons), taking.stats, reasons)


def _cut(taking: _Taking, reason: str) -> None:
    if reason not in taking.cut:
        taking.cut.append(reason)


def _take(taking: _Taking, path: Path, rel: str) -> None:
    """Record ``path``'s digest (and its text, when small and there is budget left).

    Opened without following links and without blocking, so a named pipe an agent left
    behind cannot hang the run's end; read a ``CHUNK`` at a time, so a huge or sparse
    file costs no more memory than a small one."""
    if path.is_symlink():
        taking.digests[rel] = "link:" + os.readlink(path)
        return
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            taking.digests[rel] = f"special:{stat.S_IFMT(info.st_mode):o}"
            return
        taking.stats[rel] = f"{info.st_size}:{info.st_mtime_ns}"
        unread = f"stat:{info.st_size}:{info.st_mtime_ns}"
        if info.st_size > HASH_LIMIT:
            taking.digests[rel] = unread
            return
        if taking.read + info.st_size > taking.budget.read_bytes:
            taking.unread += 1
            taking.digests[rel] = unread
            return
        digest, head, size = hashlib.sha256(), bytearray(), 0
        while size <= HASH_LIMIT and (chunk := os.read(fd, CHUNK)):
            size += len(chunk)
            taking.read += len(chunk)
            digest.update(chunk)
            if len(head) <= TEXT_LIMIT:
                head += chunk[: TEXT_LIMIT + 1 - len(head)]
    finally:
        os.close(fd)
    if size > HASH_LIMIT:  # it grew while it was read
        taking.digests[rel] = unread
        return
    taking.digests[rel] = digest.hexdigest()
    if size <= TEXT_LIMIT and b"\x00" not in head:
        _keep_text(taking, rel, bytes(head))


def _keep_text(taking: _Taking, rel: str, data: bytes) -> None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    cost = sys.getsizeof(text)  # a str takes 1, 2 or 4 bytes a character
    if taking.kept + cost > taking.budget.text_bytes:
        taking.untexted += 1
        return
    taking.kept += cost
    taking.texts[rel] = text


def _diff(path: str, before: str | None, after: str | None) -> str:
    if before is None and after is None:
        return ""
    lines = list(
        difflib.unified_diff(
            (before or "").splitlines(keepends=True),
            (after or "").splitlines(keepends=True),
            # a name with a newline must not add lines to the diff's header
            fromfile=f"a/{visible(path)}" if before is not None else "/dev/null",
            tofile=f"b/{visible(path)}" if after is not None else "/dev/null",
        )
    )
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"... {len(lines) - DIFF_LINES} more lines\n"]
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    if len(text) > DIFF_CHARS:
        text = text[:DIFF_CHARS] + f"\n... {len(text) - DIFF_CHARS} more characters\n"
    return text


def _same(path: str, before: WorkspaceSnapshot, after: WorkspaceSnapshot) -> bool:
    """Whether ``path`` is unchanged: by hash when both sides were read, else by size and
    modification time (one side may have been past a read budget)."""
    old, new = before.digests[path], after.digests[path]
    if old == new:
        return True
    if old.startswith("stat:") != new.startswith("stat:"):
        return before.stats.get(path) == after.stats.get(path)
    return False


def _objects_change(store: str, counts: dict[str, int]) -> FileChange:
    """The one entry that stands for the churn of the object store ``store``."""
    said = [f"{n} object{'s' if n != 1 else ''} {kind}" for kind, n in counts.items() if n]
    added, deleted = counts["added"], counts["deleted"]
    kind = "added" if added and not deleted else "deleted" if deleted and not added else "changed"
    return FileChange(store, kind, detail=", ".join(said))


def workspace_changes(before: WorkspaceSnapshot, after: WorkspaceSnapshot) -> WorkspaceChanges:
    """The files added, changed and deleted between two snapshots, with diffs; the
    files of each ``.git`` object store summed up as one entry; compiled Python caches
    (``is_cache``) only counted."""
    changes: list[FileChange] = []
    objects: dict[str, dict[str, int]] = {}
    caches = 0
    for path in sorted(set(before.digests) | set(after.digests)):
        old, new = before.digests.get(path), after.digests.get(path)
        if old is not None and new is not None and _same(path, before, after):
            continue
        if is_cache(path):
            caches += 1
            continue
        kind = "added" if old is None else "deleted" if new is None else "changed"
        store = _store(path)
        if store is not None:
            counts = objects.setdefault(store, {"added": 0, "changed": 0, "deleted": 0})
            counts[kind] += 1
            continue
        old_text = before.texts.get(path) if old is not None else None
        new_text = after.texts.get(path) if new is not None else None
        known = (old is None or old_text is not None) and (new is None or new_text is not None)
        changes.append(FileChange(path, kind, _diff(path, old_text, new_text) if known else ""))
    changes.extend(_objects_change(store, counts) for store, counts in objects.items())
    changes.sort(key=lambda change: change.path)
    reasons = [r for r in before.reasons if r in after.reasons]
    reasons += [f"before the run, {r}" for r in before.reasons if r not in after.reasons]
    reasons += [f"after the run, {r}" for r in after.reasons if r not in before.reasons]
    truncated = before.truncated or after.truncated
    return WorkspaceChanges(tuple(changes), truncated, "; ".join(reasons), caches)


def attributed(changes: WorkspaceChanges, calls: Sequence[CallChanges]) -> WorkspaceChanges:
    """``changes`` with each file's ``by`` filled in from the calls' captured changes
    (``swarm.undo.CallChanges``): a ``.git`` object store's entry by the calls that
    changed any object in it."""
    by: dict[str, list[tuple[str, str]]] = {}
    for call in calls:
        for change in call.changes:
            store = _store(change.path)
            for key in (change.path,) if store is None else (change.path, store):
                pairs = by.setdefault(key, [])
                if (call.call, call.agent) not in pairs:
                    pairs.append((call.call, call.agent))
    files = tuple(
        dataclasses.replace(f, by=tuple(by.get(f.path, ()))) if f.path in by else f
        for f in changes.files
    )
    return dataclasses.replace(changes, files=files)
