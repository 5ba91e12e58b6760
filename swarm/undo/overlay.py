"""A command's changes, read from the upper directory of its workspace overlay
(``swarm.sandbox.overlay``) and moved into the workspace.

``read_upper`` reads what the command left: each path it wrote (a file, a link, a
directory, a pipe), each it deleted (a whiteout: a ``0/0`` character device), each
directory whose content it replaced (marked opaque). ``lower_touched`` lists what
the workspace holds at those paths, and below every path whose content was replaced,
so their pre-images can be kept first. ``apply_upper`` then makes the workspace what the
overlay showed the command: removals deepest first, directories shallowest first, then
files moved (renamed, so a large file is not copied again), links and pipes, each
reached through directory descriptors opened with ``O_NOFOLLOW``.

The cost is what the call changed: nothing here reads a path the command did not write.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from swarm.sandbox.overlay import private_attributes
from swarm.undo.restore import Step, make_dir, partial_name, put_link, remove_entry
from swarm.undo.state import (
    ABSENT,
    LEAF_FLAGS,
    Entry,
    PathState,
    open_parent,
    walk,
    walk_below,
)

__all__ = ["Upper", "apply_upper", "discard", "lower_touched", "read_upper"]


@dataclass(slots=True)
class Upper:
    """What a command left in its overlay's ``upper`` directory: ``written`` paths with
    their entries there, ``deleted`` paths (whiteouts), and ``replaced`` paths: those
    whose content in the workspace goes (a whiteout, an opaque directory, anything
    that is not a directory)."""

    root: Path
    written: dict[str, Entry] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    replaced: set[str] = field(default_factory=set)

    def want(self, rel: str) -> PathState:
        """What ``rel`` is to hold once applied (a file's ``blob`` is left empty: its
        content is what the upper directory holds)."""
        entry = self.written.get(rel)
        return ABSENT if entry is None else _state(entry)


def _opaque(path: Path, private: str) -> bool:
    """Whether overlayfs marked the directory opaque (only its own mark counts: a
    command may set a ``user.`` attribute of that name where root mounted)."""
    try:
        return os.getxattr(path, private + "opaque", follow_symlinks=False) == b"y"
    except OSError:
        return False


def read_upper(upper: Path, *, skip: frozenset[str] = frozenset()) -> Upper:
    """Read ``upper`` (see ``Upper``); ``skip`` paths (with all below them) are left
    out. Sockets are left out: nothing can be made of them again."""
    found = Upper(upper)
    private = private_attributes()
    for rel, entry in walk(upper, skip=skip).items():
        mode = entry.info.st_mode
        if stat.S_ISCHR(mode) and entry.info.st_rdev == 0:
            found.deleted.add(rel)
            found.replaced.add(rel)
        elif stat.S_ISDIR(mode):
            found.written[rel] = entry
            if _opaque(upper / rel, private):
                found.replaced.add(rel)
        elif stat.S_ISREG(mode) or stat.S_ISLNK(mode) or stat.S_ISFIFO(mode):
            found.written[rel] = entry
            found.replaced.add(rel)
    return found


def lower_touched(workspace: Path, upper: Upper) -> dict[str, Entry]:
    """What the workspace holds at every path ``upper`` changes: the path itself, and
    everything below a replaced one (never following a link)."""
    touched: dict[str, Entry] = {}
    for rel in sorted({*upper.written, *upper.deleted}):
        name = rel.rsplit("/", 1)[-1]
        try:
            with open_parent(workspace, rel) as parent:
                info = os.stat(name, dir_fd=parent, follow_symlinks=False)
                target = os.readlink(name, dir_fd=parent) if stat.S_ISLNK(info.st_mode) else ""
                touched[rel] = Entry(info, target)
                if rel in upper.replaced and stat.S_ISDIR(info.st_mode):
                    touched.update(walk_below(parent, name, rel))
        except OSError:
            continue  # absent, or below something that is not a directory
    return touched


def apply_upper(workspace: Path, upper: Upper, lower: dict[str, Entry]) -> None:
    """Make the workspace hold what ``upper`` says (see the module's docstring);
    ``lower`` is what ``lower_touched`` found. Raises ``OSError`` when a path cannot be
    reached without following a link."""
    depth = lambda rel: rel.count("/")  # noqa: E731
    wanted = {rel: upper.want(rel) for rel in {*upper.written, *upper.deleted, *lower}}
    now = {rel: _state(entry) for rel, entry in lower.items()}
    going = [rel for rel, state in now.items() if state.kind != wanted[rel].kind]
    for rel in sorted(going, key=depth, reverse=True):
        remove_entry(workspace, Step(rel, now[rel], ABSENT))
    for rel in sorted((r for r, w in wanted.items() if w.kind == "dir"), key=depth):
        if not now.get(rel, ABSENT).same(wanted[rel]):
            make_dir(workspace, Step(rel, now.get(rel, ABSENT), wanted[rel]))
    for rel, want in wanted.items():
        if want.kind == "file":
            _move_file(workspace, upper.root, rel)
        elif want.kind == "link":
            put_link(workspace, Step(rel, now.get(rel, ABSENT), want))
        elif want.kind == "other" and stat.S_ISFIFO(upper.written[rel].info.st_mode):
            _make_fifo(workspace, rel, want.mode)


def _state(entry: Entry) -> PathState:
    mode = entry.info.st_mode
    if stat.S_ISDIR(mode):
        return PathState("dir", stat.S_IMODE(mode))
    if stat.S_ISLNK(mode):
        return PathState("link", stat.S_IMODE(mode), target=entry.target)
    if stat.S_ISREG(mode):
        return PathState("file", stat.S_IMODE(mode))
    return PathState("other", stat.S_IMODE(mode))


def _move_file(workspace: Path, root: Path, rel: str) -> None:
    """Rename the upper directory's file over the workspace's (a copy when they are on
    different filesystems), without overlayfs's own attributes."""
    name = rel.rsplit("/", 1)[-1]
    with open_parent(root, rel) as source, open_parent(workspace, rel, create=True) as parent:
        try:
            os.replace(name, name, src_dir_fd=source, dst_dir_fd=parent)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            _copy_file(source, parent, name)
        fd = os.open(name, LEAF_FLAGS, dir_fd=parent)
        private = private_attributes()
        try:
            for attribute in os.listxattr(fd):
                if attribute.startswith(private):
                    os.removexattr(fd, attribute)
        except OSError:
            pass  # a filesystem without extended attributes has none to remove
        finally:
            os.close(fd)


def _copy_file(source: int, parent: int, name: str) -> None:
    partial = partial_name(parent, name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    src = os.open(name, LEAF_FLAGS, dir_fd=source)
    try:
        out = os.open(partial, flags, 0o600, dir_fd=parent)
        try:
            while chunk := os.read(src, 1024 * 1024):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view) :]
            os.fchmod(out, stat.S_IMODE(os.fstat(src).st_mode))
        finally:
            os.close(out)
    finally:
        os.close(src)
    os.replace(partial, name, src_dir_fd=parent, dst_dir_fd=parent)


def _make_fifo(workspace: Path, rel: str, mode: int) -> None:
    name = rel.rsplit("/", 1)[-1]
    with open_parent(workspace, rel, create=True) as parent:
        partial = partial_name(parent, name)
        os.mkfifo(partial, mode, dir_fd=parent)
        os.replace(partial, name, src_dir_fd=parent, dst_dir_fd=parent)


def discard(directory: Path) -> None:
    """Remove an overlay's directories, whatever their modes (overlayfs leaves its work
    directories without permissions; a command may leave its own so)."""
    _open_up(str(directory))
    shutil.rmtree(directory, ignore_errors=True)


def _open_up(path: str) -> None:
    """Give the owner every permission on ``path`` and each directory below it (links
    are never followed)."""
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    try:
        listing = list(os.scandir(path))
    except OSError:
        return
    for entry in listing:
        if entry.is_dir(follow_symlinks=False):
            _open_up(entry.path)
