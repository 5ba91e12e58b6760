"""What a path of the workspace holds, read without following links, and the store of
file contents (pre-images) kept by hash in the run record.

Every directory is opened relative to its parent's descriptor with ``O_NOFOLLOW``, every
file with ``O_NOFOLLOW | O_NONBLOCK``: a link planted anywhere, or a directory swapped
for a link meanwhile, is read as a link (its target text), never followed; a named pipe
is recorded as ``other`` and never opened for reading, so nothing a command leaves
behind can make swarm read outside the workspace or hang.

A walk (``walk``) costs one ``lstat`` per entry; file contents are read only for files
whose identity (device, inode, size, modification and change times) the ``BlobStore``
has not seen, so a file a call does not touch is read once per run, not once per call.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ABSENT",
    "BlobStore",
    "Entry",
    "PathState",
    "open_parent",
    "state_at",
    "walk",
    "walk_below",
]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
LEAF_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
CHUNK = 1024 * 1024
Key = tuple[int, int, int, int, int]


@dataclass(frozen=True, slots=True)
class PathState:
    """What one path holds: ``kind`` is ``file``, ``link``, ``dir``, ``other`` (a pipe,
    socket or device) or ``absent``; ``mode`` its permission bits; ``blob`` the SHA-256
    of a file's bytes (its pre-image in the ``BlobStore``); ``target`` a link's target;
    ``size`` a file's size in bytes."""

    kind: str
    mode: int = 0
    blob: str = ""
    target: str = ""
    size: int = 0

    def same(self, other: PathState) -> bool:
        """Whether both hold the same thing (a file's bytes and mode, a link's target, a
        directory's mode); times are not compared."""
        return (self.kind, self.mode, self.blob, self.target) == (
            other.kind,
            other.mode,
            other.blob,
            other.target,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form kept in the run record."""
        data: dict[str, Any] = {"kind": self.kind}
        if self.kind != "absent":
            data["mode"] = f"{self.mode:04o}"
        if self.kind == "file":
            data["blob"], data["size"] = self.blob, self.size
        if self.kind == "link":
            data["target"] = self.target
        return data

    @classmethod
    def from_dict(cls, data: Any) -> PathState:
        """Read the JSON form back (anything malformed reads as ``absent``)."""
        if not isinstance(data, dict):
            return ABSENT
        try:
            mode = int(str(data.get("mode", "0")), 8)
        except ValueError:
            mode = 0
        return cls(
            str(data.get("kind", "absent")),
            mode,
            str(data.get("blob", "")),
            str(data.get("target", "")),
            int(data.get("size", 0) or 0),
        )

    def describe(self) -> str:
        """A few words for people: ``file (0644, 12 bytes)``, ``link -> x``."""
        if self.kind == "file":
            return f"file ({self.mode:04o}, {self.size:,} bytes)"
        if self.kind == "link":
            return f"link -> {self.target}"
        if self.kind == "absent":
            return "absent"
        return f"{self.kind} ({self.mode:04o})"


ABSENT = PathState("absent")


@dataclass(frozen=True, slots=True)
class Entry:
    """One path as a walk saw it: its ``lstat`` and, for a link, its target."""

    info: os.stat_result
    target: str = ""

    @property
    def key(self) -> Key:
        """What identifies a file's content without reading it."""
        i = self.info
        return (i.st_dev, i.st_ino, i.st_size, i.st_mtime_ns, i.st_ctime_ns)


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "other"


def walk(root: Path, *, skip: frozenset[str] = frozenset()) -> dict[str, Entry]:
    """Every path under ``root`` (relative, ``/``-separated) with its ``lstat``; links
    are not followed, ``skip`` names relative paths left out with all below them.
    Raises ``OSError`` when ``root`` itself cannot be opened as a directory."""
    found: dict[str, Entry] = {}
    fd = os.open(root, DIR_FLAGS)
    try:
        _walk(fd, "", found, skip)
    finally:
        os.close(fd)
    return found


def _walk(fd: int, prefix: str, found: dict[str, Entry], skip: frozenset[str]) -> None:
    with os.scandir(fd) as listing:
        names = [entry.name for entry in listing]
    for name in names:
        rel = prefix + name
        if rel in skip:
            continue
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue  # gone meanwhile
        target = ""
        if stat.S_ISLNK(info.st_mode):
            try:
                target = os.readlink(name, dir_fd=fd)
            except OSError:
                continue
        found[rel] = Entry(info, target)
        if stat.S_ISDIR(info.st_mode):
            try:
                sub = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError:
                continue  # swapped for a link, or unreadable: listed, not entered
            try:
                _walk(sub, rel + "/", found, skip)
            finally:
                os.close(sub)


def walk_below(parent: int, name: str, prefix: str) -> dict[str, Entry]:
    """Every path under the directory ``name`` of the directory open as ``parent``,
    each named ``prefix/...``, as ``walk`` finds them (``name`` is opened with
    ``O_NOFOLLOW``: a link raises ``OSError``)."""
    found: dict[str, Entry] = {}
    fd = os.open(name, DIR_FLAGS, dir_fd=parent)
    try:
        _walk(fd, prefix + "/", found, frozenset())
    finally:
        os.close(fd)
    return found


@contextmanager
def open_parent(root: Path, rel: str, *, create: bool = False) -> Iterator[int]:
    """A descriptor of the directory holding ``rel`` under ``root``, each component
    opened with ``O_NOFOLLOW`` (``create``: missing directories are made ``0755``).
    Raises ``OSError`` (``ELOOP``/``ENOTDIR``) when a component is a link or a file."""
    fd = os.open(root, DIR_FLAGS)
    try:
        for part in rel.split("/")[:-1]:
            if part in ("", ".", ".."):
                raise OSError(errno.EINVAL, "not a plain relative path", rel)
            try:
                sub = os.open(part, DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o755, dir_fd=fd)
                sub = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = sub
        yield fd
    finally:
        os.close(fd)


def state_at(root: Path, rel: str, store: BlobStore) -> PathState:
    """What ``rel`` holds now (its content stored in ``store`` when it is a file);
    ``absent`` also when a directory on the way is missing, a link or a file."""
    name = rel.rsplit("/", 1)[-1]
    try:
        with open_parent(root, rel) as parent:
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
            target = os.readlink(name, dir_fd=parent) if stat.S_ISLNK(info.st_mode) else ""
            return store.state(parent, name, Entry(info, target))
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            return ABSENT
        raise


class BlobStore:
    """File contents by SHA-256 in ``directory`` (``0700``; each blob ``0600``, written
    once, renamed into place whole). ``used`` is the bytes it holds; ``known`` maps the
    identity of a file seen before to its hash, so an untouched file is never read
    twice."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.used = sum(p.stat().st_size for p in directory.iterdir() if len(p.name) == 64)
        self.known: dict[Key, str] = {}

    def path(self, digest: str) -> Path:
        """Where the blob ``digest`` is."""
        return self.directory / digest

    def has(self, digest: str) -> bool:
        """Whether the blob ``digest`` is stored."""
        return len(digest) == 64 and self.path(digest).is_file()

    def unread(self, entries: dict[str, Entry]) -> int:
        """The bytes storing the files of ``entries`` would read (those not seen before)."""
        return sum(
            e.info.st_size
            for e in entries.values()
            if stat.S_ISREG(e.info.st_mode) and e.key not in self.known
        )

    def state(self, parent: int, name: str, entry: Entry) -> PathState:
        """The state of ``name`` in directory ``parent``, as ``entry`` saw it; a file's
        content is stored (read through ``O_NOFOLLOW``: what was swapped in since the
        walk is read as what it is now)."""
        mode = stat.S_IMODE(entry.info.st_mode)
        kind = _kind(entry.info.st_mode)
        if kind == "link":
            return PathState("link", mode, target=entry.target)
        if kind != "file":
            return PathState(kind, mode)
        digest = self.known.get(entry.key)
        if digest is not None and self.has(digest):
            return PathState("file", mode, digest, size=entry.info.st_size)
        try:
            fd = os.open(name, LEAF_FLAGS, dir_fd=parent)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK):  # became a link meanwhile
                return PathState("link", 0o777, target=os.readlink(name, dir_fd=parent))
            raise
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return PathState(_kind(info.st_mode), stat.S_IMODE(info.st_mode))
            digest, size = self._copy(fd)
        finally:
            os.close(fd)
        now = Entry(info)
        self.known[now.key] = digest
        return PathState("file", stat.S_IMODE(info.st_mode), digest, size=size)

    def _copy(self, fd: int) -> tuple[str, int]:
        """Copy the open file into the store while hashing it."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC
        partial = self.directory / f"partial-{os.getpid()}-{id(self)}-{fd}"
        out = os.open(partial, flags, 0o600)
        digest, size = hashlib.sha256(), 0
        try:
            while chunk := os.read(fd, CHUNK):
                digest.update(chunk)
                size += len(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view) :]
        finally:
            os.close(out)
        name = digest.hexdigest()
        if self.has(name):
            partial.unlink()
        else:
            os.replace(partial, self.path(name))
            self.used += size
        return name, size

    def read(self, digest: str) -> bytes:
        """A blob's bytes. Raises ``FileNotFoundError`` when it is not stored."""
        return self.path(digest).read_bytes()

    def clear_partial(self) -> None:
        """Remove copies a crash left half-written."""
        for partial in self.directory.glob("partial-*"):
            partial.unlink(missing_ok=True)
