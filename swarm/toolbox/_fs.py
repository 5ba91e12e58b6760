"""Descriptor-based file access that a concurrent process cannot race out of the workspace.

Every path is walked from a descriptor of the workspace root one component at a time, each
opened relative to its parent's descriptor with ``O_NOFOLLOW``: a symlink anywhere on the
path is refused, and what was checked is what is used, whatever another process renames
or swaps meanwhile. Files are opened with ``O_NONBLOCK`` (a FIFO cannot block the call)
and judged by ``fstat`` on the open descriptor. A regular file with more than one hard
link may be the same file as one outside the workspace, so it is not read; its link count
is taken from four looks (``open_leaf``), because one can be fooled by a link removed
while it is read. Writes never go through an existing file: a new one is renamed over it.
"""

from __future__ import annotations

import errno
import itertools
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import anyio.from_thread

from swarm.errors import ToolError
from swarm.toolbox._paths import SKIPPED_DIRS, Parts, glob_matcher

__all__ = [
    "MAX_DEPTH",
    "MAX_DIR_ENTRIES",
    "Entry",
    "append_at",
    "open_dir",
    "open_entry",
    "open_leaf",
    "require_single_file",
    "stop_if_cancelled",
    "walk",
    "walk_files",
    "write_file_at",
]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
_LEAF_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
# Linux and macOS say ELOOP for a final symlink under O_NOFOLLOW; FreeBSD says EMLINK.
_LINK_ERRNOS = frozenset({errno.ELOOP, errno.EMLINK})

MAX_DEPTH = 64
"""How many directories deep ``walk`` goes; each level holds one descriptor open."""
MAX_DIR_ENTRIES = 20_000
"""How many entries of one directory ``walk`` looks at (it holds their names at once)."""


def _symlink(parts: Parts) -> ToolError:
    return ToolError(f"'{'/'.join(parts)}' is a symbolic link; the file tools do not follow links")


def _open_component(parent: int, parts: Parts, flags: int) -> int:
    """``parts[-1]`` opened in ``parent``; a symlink there is a ``ToolError``."""
    try:
        return os.open(parts[-1], flags, dir_fd=parent)
    except OSError as exc:
        if exc.errno in _LINK_ERRNOS or (
            exc.errno == errno.ENOTDIR and _is_link(parent, parts[-1])
        ):
            raise _symlink(parts) from None
        raise


def _is_link(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


@contextmanager
def open_dir(root: Path, parts: Parts, *, create: bool = False) -> Iterator[int]:
    """A descriptor of the directory ``parts`` below ``root``, closed on leaving.

    Walked a component at a time, never following a symlink (``ToolError`` naming the
    link). With ``create``, missing directories are made one at a time. Raises
    ``FileNotFoundError`` for a missing component, ``NotADirectoryError`` for one that is
    a file, and other ``OSError``.
    """
    fd = os.open(root, _DIR_FLAGS)
    try:
        for depth in range(1, len(parts) + 1):
            try:
                child = _open_component(fd, parts[:depth], _DIR_FLAGS)
            except FileNotFoundError:
                if not create:
                    raise
                # Made meanwhile by someone else: it is opened (and judged) like any other.
                with suppress(FileExistsError):
                    os.mkdir(parts[depth - 1], 0o777, dir_fd=fd)
                child = _open_component(fd, parts[:depth], _DIR_FLAGS)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def open_leaf(parent: int, parts: Parts) -> tuple[int, os.stat_result]:
    """The entry ``parts[-1]`` of directory ``parent`` opened for reading, and its
    ``fstat``: a file, a directory or anything else (a FIFO does not block). The caller
    closes the descriptor. Raises ``ToolError`` for a symlink, or when the name was
    changed to another file while it was opened; ``OSError`` otherwise.

    For a regular file, ``st_nlink`` is the most links seen in four looks: the name
    before opening, the open file, the name again, the open file again. A hard link to
    an outside file can be opened and then unlinked, leaving a descriptor whose one link
    is outside; and a ``stat`` of a name racing its unlink can find it and then count
    the links left. To pass, a link made and removed by another process must fall
    inside both name lookups' own instants; nothing narrower is possible without a
    lock on the directory, which the system does not offer.
    """
    before = _lstat(parent, parts[-1])
    fd = _open_component(parent, parts, _LEAF_FLAGS)
    try:
        return fd, _judged(fd, parent, parts, before)
    except BaseException:
        os.close(fd)
        raise


def _lstat(parent: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError:
        return None  # opening it says why


def _judged(
    fd: int, parent: int, parts: Parts, before: os.stat_result | None, *, created: bool = False
) -> os.stat_result:
    """The ``fstat`` of ``fd``, opened as ``parts[-1]`` in ``parent``; for a regular file
    with the most links of the four looks (see ``open_leaf``). ``created``: nothing
    may have been there before (``O_CREAT`` made it)."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        return info
    looks = [before, info, _lstat(parent, parts[-1]), os.fstat(fd)]
    if created and before is None:
        looks[0] = info
    if any(look is None or _inode(look) != _inode(info) for look in looks):
        raise ToolError(f"'{'/'.join(parts)}' changed while it was being opened; try again")
    return max((look for look in looks if look is not None), key=lambda look: look.st_nlink)


def _inode(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


@contextmanager
def open_entry(root: Path, parts: Parts) -> Iterator[tuple[int, os.stat_result]]:
    """``open_leaf`` of the entry ``parts`` below ``root`` (the root itself for ``()``),
    closed on leaving."""
    if parts:
        with open_dir(root, parts[:-1]) as parent:
            fd, info = open_leaf(parent, parts)
    else:
        fd = os.open(root, _DIR_FLAGS)
        info = os.fstat(fd)
    try:
        yield fd, info
    finally:
        os.close(fd)


def stop_if_cancelled() -> None:
    """Raise the cancellation of this worker thread's call once it was cancelled (its
    timeout, the run's limit): a tool's thread is abandoned then, and a built-in tool
    calls this between files or chunks so it stops instead of running on unseen. Does
    nothing outside a worker thread (a handler called directly)."""
    with suppress(RuntimeError):  # anyio's NoEventLoopError: not in a worker thread
        anyio.from_thread.check_cancelled()


def require_single_file(info: os.stat_result, shown: str, use: str) -> None:
    """Raise ``ToolError`` unless ``info`` is a regular file with one link.

    ``use`` completes the hard-link refusal, e.g. "read_file does not read it".
    """
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"'{shown}' is not a regular file (a FIFO, socket or device)")
    if info.st_nlink > 1:
        raise ToolError(
            f"'{shown}' has {info.st_nlink} hard links, so it may be a file outside the"
            f" workspace; {use}"
        )


def write_file_at(parent: int, parts: Parts, data: bytes) -> bool:
    """Replace the file ``parts[-1]`` of directory ``parent`` with ``data`` at once;
    whether it existed.

    A temporary file is created beside it (``O_EXCL|O_NOFOLLOW``), synced and renamed over
    it, so nothing outside ``parent`` is ever written: a hard link is replaced, not written
    through. A replaced file keeps its permissions. Raises ``ToolError`` when the name is
    a symlink, ``IsADirectoryError`` when it is a directory, other ``OSError``; never
    leaves the temporary file behind.
    """
    name = parts[-1]
    try:
        old: os.stat_result | None = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        old = None
    if old is not None and stat.S_ISLNK(old.st_mode):
        raise _symlink(parts)
    if old is not None and stat.S_ISDIR(old.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    temp = f".{name[:200]}.{secrets.token_hex(4)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC
    fd = os.open(temp, flags, 0o666, dir_fd=parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if old is not None and stat.S_ISREG(old.st_mode):
                os.fchmod(handle.fileno(), stat.S_IMODE(old.st_mode))
            os.fsync(handle.fileno())
        os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=parent)
        raise
    return old is not None


def append_at(parent: int, parts: Parts, data: bytes) -> None:
    """Append ``data`` to the file ``parts[-1]`` of directory ``parent``, created if
    missing. Raises ``ToolError`` for a symlink, a FIFO or device, or a file with several
    hard links (appending would write through the link); ``OSError`` otherwise."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
    before = _lstat(parent, parts[-1])
    try:
        fd = os.open(parts[-1], flags, 0o666, dir_fd=parent)
    except OSError as exc:
        if exc.errno in _LINK_ERRNOS:
            raise _symlink(parts) from None
        raise
    try:
        info = _judged(fd, parent, parts, before, created=True)
        require_single_file(info, "/".join(parts), "nothing is appended to it")
        os.write(fd, data)
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry met by ``walk``: its components below the walked directory, the open
    descriptor of the directory holding it (valid until the walk moves on), its name and
    its ``lstat``."""

    below: Parts
    parent: int
    name: str
    info: os.stat_result

    @property
    def is_dir(self) -> bool:
        """Whether the entry is a directory (never a symlink to one)."""
        return stat.S_ISDIR(self.info.st_mode)


def walk(
    directory: int,
    *,
    recursive: bool = True,
    skip: Callable[[Parts], bool] = lambda _: False,
    cut: list[Parts] | None = None,
) -> Iterator[Entry]:
    """The directories and single-link regular files below the open ``directory``.

    Each directory's entries come sorted by name, then the walk enters its subdirectories
    in order (with ``recursive``; at most ``MAX_DEPTH`` deep). Symlinks, FIFOs, devices,
    hard-linked files, ``SKIPPED_DIRS`` and entries for which ``skip(below)`` is true are
    left out. Directories are opened relative to their parent with ``O_NOFOLLOW``; one
    swapped for a symlink meanwhile is passed over. ``OSError`` from the top directory
    propagates; unreadable directories below it are passed over. Of a directory with
    more than ``MAX_DIR_ENTRIES`` entries only that many are looked at (which ones is up
    to the file system), and its components below ``directory`` are added to ``cut``.
    """
    yield from _walk(directory, (), recursive, skip, cut)


def _walk(
    fd: int,
    below: Parts,
    recursive: bool,
    skip: Callable[[Parts], bool],
    cut: list[Parts] | None,
) -> Iterator[Entry]:
    stop_if_cancelled()
    with os.scandir(fd) as found:
        names = [entry.name for entry in itertools.islice(found, MAX_DIR_ENTRIES + 1)]
    if len(names) > MAX_DIR_ENTRIES:
        del names[MAX_DIR_ENTRIES:]
        if cut is not None:
            cut.append(below)
    names.sort()
    subdirs: list[str] = []
    for name in names:
        parts = (*below, name)
        if skip(parts):
            continue
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):
            if name in SKIPPED_DIRS:
                continue
            subdirs.append(name)
        elif not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
            continue
        yield Entry(parts, fd, name, info)
    if not recursive or len(below) >= MAX_DEPTH:
        return
    for name in subdirs:
        try:
            child = os.open(name, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            continue  # gone, or swapped for a symlink or a file since it was listed
        try:
            yield from _walk(child, (*below, name), recursive, skip, cut)
        except OSError:
            continue
        finally:
            os.close(child)


def walk_files(
    directory: int,
    pattern: str,
    *,
    skip: Callable[[Parts], bool],
    cut: list[Parts] | None = None,
) -> Iterator[Entry]:
    """The files ``walk`` finds below the open ``directory`` whose names match ``pattern``
    (see ``glob_matcher``; a pattern with ``/`` matches the path below ``directory``);
    directories cut short are added to ``cut``."""
    matches = glob_matcher(pattern)
    by_path = "/" in pattern
    for entry in walk(directory, skip=skip, cut=cut):
        if not entry.is_dir and matches("/".join(entry.below) if by_path else entry.name):
            yield entry
