"""What a run did to its workspace: the files added, changed and deleted, with diffs.

``snapshot`` reads the workspace before the run (a hash per file, and the text of small
text files so a diff can be shown); ``workspace_changes`` compares it with the workspace
after the run. The result goes into the run record as ``changes.json`` and into the end
summary and the HTML report. Symbolic links are listed, never followed; ``.git``
directories are left out (their churn is not the work); files over ``HASH_LIMIT`` are
compared by size and modification time rather than read.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swarm._visible import visible

__all__ = ["FileChange", "WorkspaceChanges", "WorkspaceSnapshot", "snapshot", "workspace_changes"]

MAX_FILES = 20_000
TEXT_LIMIT = 256 * 1024  # bytes of one file kept for a diff
HASH_LIMIT = 32 * 1024 * 1024  # bytes of one file read to hash it
DIFF_LINES = 400  # lines of one diff kept
DIFF_CHARS = 64 * 1024  # characters of one diff kept
SKIPPED_DIRS = frozenset({".git"})


@dataclass(frozen=True, slots=True)
class WorkspaceSnapshot:
    """A workspace at one moment: a digest per relative path, the text of small text
    files, and whether the walk stopped at ``MAX_FILES``."""

    digests: dict[str, str]
    texts: dict[str, str]
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file the run added, changed or deleted; ``diff`` is a unified diff when both
    sides are small text files (empty otherwise)."""

    path: str
    kind: str  # "added" | "changed" | "deleted"
    diff: str = ""


@dataclass(frozen=True, slots=True)
class WorkspaceChanges:
    """Every file the run added, changed or deleted, sorted by path."""

    files: tuple[FileChange, ...] = ()
    truncated: bool = False

    def of_kind(self, kind: str) -> list[str]:
        """The paths of one kind of change (``added``, ``changed``, ``deleted``)."""
        return [change.path for change in self.files if change.kind == kind]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written as ``changes.json``."""
        return {
            "truncated": self.truncated,
            "files": [{"path": c.path, "kind": c.kind, "diff": c.diff} for c in self.files],
        }

    @classmethod
    def from_dict(cls, data: Any) -> WorkspaceChanges:
        """Read the JSON form back; anything malformed is left out."""
        if not isinstance(data, dict):
            return cls()
        files = []
        for item in data.get("files") or ():
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                kind = str(item.get("kind", "changed"))
                files.append(FileChange(item["path"], kind, str(item.get("diff") or "")))
        return cls(tuple(files), bool(data.get("truncated")))


def snapshot(workspace: Path) -> WorkspaceSnapshot:
    """Hash every file under ``workspace`` (symbolic links by their target text); keeps
    the text of UTF-8 files up to ``TEXT_LIMIT`` bytes. Unreadable files are skipped."""
    digests: dict[str, str] = {}
    texts: dict[str, str] = {}
    truncated = False
    for top, dirs, files in os.walk(workspace, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files) + sorted(d for d in dirs if os.path.islink(Path(top, d))):
            if len(digests) >= MAX_FILES:
                truncated = True
                break
            path = Path(top, name)
            rel = path.relative_to(workspace).as_posix()
            try:
                digest, data = _read(path)
            except OSError:
                continue
            if data is None:
                digests[rel] = digest
                continue
            digests[rel] = digest
            if len(data) <= TEXT_LIMIT:
                with contextlib.suppress(UnicodeDecodeError):
                    texts[rel] = data.decode("utf-8")
        if truncated:
            break
    return WorkspaceSnapshot(digests, texts, truncated)


def _read(path: Path) -> tuple[str, bytes | None]:
    """A file's digest and bytes; for a link, a large file or anything not a regular file,
    a digest without the bytes. Opened without following links and without blocking, so
    a named pipe an agent left behind cannot hang the run's end."""
    if path.is_symlink():
        return "link:" + os.readlink(path), None
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return f"special:{stat.S_IFMT(info.st_mode):o}", None
        if info.st_size > HASH_LIMIT:
            return f"stat:{info.st_size}:{info.st_mtime_ns}", None
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read()
    finally:
        os.close(fd)
    return hashlib.sha256(data).hexdigest(), data


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


def workspace_changes(before: WorkspaceSnapshot, after: WorkspaceSnapshot) -> WorkspaceChanges:
    """The files added, changed and deleted between two snapshots, with diffs."""
    changes = []
    for path in sorted(set(before.digests) | set(after.digests)):
        old, new = before.digests.get(path), after.digests.get(path)
        if old == new:
            continue
        kind = "added" if old is None else "deleted" if new is None else "changed"
        old_text = before.texts.get(path) if old is not None else None
        new_text = after.texts.get(path) if new is not None else None
        known = (old is None or old_text is not None) and (new is None or new_text is not None)
        changes.append(FileChange(path, kind, _diff(path, old_text, new_text) if known else ""))
    return WorkspaceChanges(tuple(changes), before.truncated or after.truncated)
