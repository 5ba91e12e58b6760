"""Protected paths: what controls a run, and what runs later outside the sandbox, no tool
may change.

A run's team directory, its policies, its scenario, the MCP declarations (``mcp.json``,
``.mcp.json``), the workspace's ``.claude/`` (and other agents' ``.cursor/``, ``.gemini/``,
``.vscode/mcp.json``) and the workspace repository's
``.git/config``, ``.git/hooks/`` and ``.git/info/`` (also where a ``.git`` file points),
swarm's own code when the workspace holds it, and every path a policy lists under
``protect:`` (globs relative to the workspace) are read-only to every tool:

- ``ProtectGuard`` denies a call whose path argument names one (rule ``protected-path``),
  before the tool runs, and notes on the call the globs in force (its role's policy and
  every ancestor's: a sub-agent's set is only ever wider than its parent's);
- the file tools' ``Workspace`` refuses them as well;
- processes see them read-only (``Confinement.readonly``), and ``ProtectedPaths.sweep``
  takes away, after a command, whatever appeared at or replaced a protected path.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import stat
import struct
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import pydantic

from swarm._dist import models_cache
from swarm.errors import GuardError
from swarm.guards.base import PermissionGuard
from swarm.guards.limits import role_of
from swarm.guards.paths import path_arguments
from swarm.guards.rules import path_glob
from swarm.scope import current_call

if TYPE_CHECKING:
    from swarm.tools import Tool

__all__ = [
    "PROTECTED_RULE",
    "Fingerprint",
    "ProtectGlob",
    "ProtectGuard",
    "ProtectedPaths",
    "Swept",
    "git_controls",
    "imported_code",
    "swarm_code",
]

PROTECTED_RULE = "protected-path"
"""The rule id of a denial, or a removal, because a path is protected."""

WORKSPACE_CONTROLS = (
    "mcp.json",
    ".mcp.json",
    ".claude",
    ".cursor",
    ".gemini",
    ".vscode/mcp.json",
)
"""Entries of the workspace that configure agents (Claude Code's, Cursor's, Gemini CLI's,
VS Code's MCP servers and MCP's files): each names commands another tool starts, outside
any sandbox, when the user opens the workspace in it."""

GIT_CONTROLS = ("config", "config.worktree", "commondir", "hooks", "info", "modules")
"""What in a git directory runs code, or says what runs, at the user's next git command
(``commondir`` would point git at another directory's config and hooks; ``modules`` holds
the git directories of submodules, whose config and hooks git uses when it recurses)."""

_GITLINK = 0o160000  # the mode of a submodule's entry in git's index
_MAX_INDEX = 64 << 20  # bytes of an index read to find its submodules

READING_TOOLS = frozenset({"read_file", "list_files", "search"})
"""Built-in tools that only read: their path arguments may name protected paths."""

_WILD = frozenset("*?[")
_MAX_SAVED = 1 << 20  # bytes of one protected file kept to put back
_MAX_KEPT = 32 << 20  # bytes of originals kept in all
_MAX_ENTRIES = 4000  # entries of one protected directory looked at after each command


def _glob(value: str) -> str:
    text = value.strip().removeprefix("./")
    if not text or text.startswith("/") or ".." in text.split("/") or "\x00" in text:
        raise ValueError("give a glob relative to the workspace, without '..' (e.g. deploy/**)")
    return text.rstrip("/") or text


ProtectGlob = Annotated[str, pydantic.AfterValidator(_glob)]
"""A ``protect:`` entry: a path glob relative to the workspace (``**`` spans directories)."""


def git_controls(workspace: Path) -> tuple[Path, ...]:
    """``config``, ``hooks`` and ``info`` of the workspace's repository: in ``.git``, or
    where a ``.git`` file points (``gitdir:``) and its ``commondir``; the ``.git`` file
    too, since changing it points git at other hooks. Whether or not they exist."""
    dot = workspace / ".git"
    dirs = [dot]
    extra: list[Path] = []
    if dot.is_file() and not dot.is_symlink():
        extra.append(dot)
        try:
            text = dot.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        for line in text.splitlines():
            if line.startswith("gitdir:"):
                gitdir = Path(os.path.normpath(workspace / line.removeprefix("gitdir:").strip()))
                dirs = [gitdir]
                common = gitdir / "commondir"
                if common.is_file():
                    where = common.read_text(encoding="utf-8", errors="replace").strip()
                    dirs.append(Path(os.path.normpath(gitdir / where)))
    return (*extra, *(d / name for d in dirs for name in GIT_CONTROLS))


def _git_dir(workspace: Path) -> Path | None:
    """The workspace repository's git directory: ``.git``, or where a ``.git`` file
    points; ``None`` when there is none."""
    dot = workspace / ".git"
    if dot.is_dir() and not dot.is_symlink():
        return dot
    if dot.is_file() and not dot.is_symlink():
        with contextlib.suppress(OSError):
            for line in dot.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("gitdir:"):
                    return Path(os.path.normpath(workspace / line.removeprefix("gitdir:").strip()))
    return None


def gitlinks(index: bytes) -> list[str]:
    """The paths of the submodules (entries of mode 160000) in a git index (versions 2 to
    4); ``[]`` for what is not an index, and as far as it could be read for a damaged one
    (git refuses to read a damaged index, so it recurses into none of it)."""
    if index[:4] != b"DIRC" or len(index) < 12:
        return []
    version, count = struct.unpack(">II", index[4:12])
    if version not in (2, 3, 4):
        return []
    found: list[str] = []
    pos, previous = 12, b""
    try:
        for _ in range(count):
            start = pos
            mode, flags = struct.unpack(">I", index[pos + 24 : pos + 28])[0], index[pos + 60]
            pos += 62 + (2 if version >= 3 and flags & 0x40 else 0)
            if version == 4:  # the name is the previous one less N bytes, plus a suffix
                strip, pos = _offset(index, pos)
                end = index.index(b"\0", pos)
                name = previous[: len(previous) - strip] + index[pos:end]
                pos = end + 1
            else:
                end = index.index(b"\0", pos)
                name = index[pos:end]
                pos = start + ((end - start + 8) & ~7)  # one to eight NULs after the name
            previous = name
            if mode & 0o170000 == _GITLINK:
                found.append(os.fsdecode(name))
    except (IndexError, ValueError, struct.error):
        pass
    return found


def _offset(data: bytes, pos: int) -> tuple[int, int]:
    """git's variable-length offset encoding at ``pos``: the value, and where it ends."""
    byte = data[pos]
    pos += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[pos]
        pos += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, pos


def submodule_controls(workspace: Path) -> tuple[Path, ...]:
    """The git controls of the submodules the workspace repository's index names (their
    ``.git``, file or directory, and its ``config``, ``hooks`` and ``info``): the user's
    ``git status`` recurses into them and runs what their config says."""
    gitdir = _git_dir(workspace)
    if gitdir is None:
        return ()
    try:
        # A command may have left a link, a FIFO or a device there: read only a file.
        fd = os.open(gitdir / "index", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ()
    with os.fdopen(fd, "rb") as handle:
        try:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return ()
            index = handle.read(_MAX_INDEX)
        except OSError:
            return ()
    found: list[Path] = []
    for name in gitlinks(index):
        parts = Path(name).parts
        if not parts or ".." in parts or Path(name).is_absolute():
            continue
        dot = workspace.joinpath(*parts, ".git")
        found.append(dot)
        found += [dot / control for control in GIT_CONTROLS]
    return tuple(found)


def swarm_code(workspace: Path) -> tuple[Path, ...]:
    """swarm's own code that lies in ``workspace`` (an editable checkout): the directory
    of the imported ``swarm`` package, swarm's interpreter's environment, and the models
    ``swarm local install`` wrote (a cache the workspace holds, as ``XDG_CACHE_HOME=.cache``
    makes it: the local server loads them later, unconfined). ``()`` when it holds none."""
    import swarm

    root = Path(os.path.realpath(workspace))
    package = Path(os.path.realpath(Path(swarm.__file__).parent))
    found = [package] if package.is_relative_to(root) else []
    for place in (sys.prefix, models_cache()):
        real = Path(os.path.realpath(place))
        if real != root and real.is_relative_to(root):
            found.append(real)
    return tuple(found)


def imported_code(workspace: Path) -> tuple[Path, ...]:
    """The files of the Python modules this process imported from ``workspace`` (a
    team's or scenario's Python tools kept there): swarm runs them, unconfined, at the
    next run."""
    root = os.path.realpath(workspace)
    inside = root.rstrip(os.sep) + os.sep
    found: list[Path] = []
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str):
            real = _imported_from(file)
            if real == root or real.startswith(inside):
                found.append(Path(real))
    return tuple(found)


@functools.cache
def _imported_from(file: str) -> str:
    """Where a module's file is, links resolved, as the first run to ask found it. The
    module was read from there when it was imported, which is earlier, so nothing a
    later link changes alters what ran; and the hundreds of modules of a process are
    resolved once, not at every run."""
    return os.path.realpath(file)


Fingerprint = tuple[int, ...]
"""What a protected path is at one moment: its identity and state, and its contents'."""


@dataclass(frozen=True, slots=True)
class Swept:
    """What ``ProtectedPaths.sweep`` did about one protected path a command changed:
    ``path`` (relative to the workspace), ``what`` happened (``appeared``, ``changed``,
    ``removed``, ``linked``: a directory on the way to one became a link), where the
    command's version went (``kept``, ``None``: deleted) and whether the original was put
    back."""

    path: str
    what: str
    kept: Path | None = None
    restored: bool = False

    def describe(self) -> str:
        """One line for the tool result and the audit log."""
        where = f" (kept as evidence in {self.kept})" if self.kept else ""
        if self.what == "linked":
            return (
                f"'{self.path}' leads to a protected path and was made a link or a file; it"
                f" was taken away{where}"
            )
        if self.what == "appeared":
            return (
                f"'{self.path}' is protected; what the command created there was taken away{where}"
            )
        back = "; the original was put back" if self.restored else ""
        return f"'{self.path}' is protected; the command's change was undone{where}{back}"


@dataclass(frozen=True, slots=True)
class ProtectedPaths:
    """The protected paths of a run: ``paths`` (absolute, fixed when the run starts) and
    ``globs`` (relative to ``workspace``, expanded on disk when a command starts).

    ``originals`` keeps the bytes and mode of the protected files inside the workspace as
    the run found them (up to 1 MiB each), so a change that got past the sandbox (or was
    made with no sandbox) can be undone. Only files unchanged ``since`` the run began (the
    ``ctime``, which no program sets, before it) are kept: one a command planted, seen
    while another command launched, is not an original to put back.
    """

    workspace: Path
    paths: tuple[Path, ...] = ()
    globs: tuple[str, ...] = ()
    originals: dict[Path, tuple[bytes, int]] = field(
        default_factory=dict, compare=False, repr=False
    )
    since: int = field(default_factory=time.time_ns, compare=False, repr=False)

    @classmethod
    def of_run(
        cls,
        workspace: Path,
        controls: Iterable[Path] = (),
        *,
        globs: Iterable[str] = (),
        protect_swarm: bool = True,
    ) -> ProtectedPaths:
        """A run's protected paths: ``controls`` (its team directory, policy files,
        scenario), the workspace's MCP and Claude files, its repository's git controls,
        swarm's code in it unless ``protect_swarm`` is false, the Python modules swarm
        imported from it (``imported_code``), and ``globs``."""
        root = Path(os.path.realpath(workspace))
        found = [Path(os.path.abspath(p)) for p in controls]
        found += [root / name for name in WORKSPACE_CONTROLS]
        found += git_controls(root)
        found += submodule_controls(root)
        if protect_swarm:
            found += swarm_code(root)
        found += imported_code(root)
        real = [Path(os.path.realpath(p)) for p in found]
        paths = tuple(dict.fromkeys(p for p in (*found, *real)))
        made = cls(root, paths, tuple(dict.fromkeys(globs)))
        made.save()
        return made

    def widened(self, globs: Iterable[str]) -> ProtectedPaths:
        """These paths with ``globs`` added (the same saved originals)."""
        more = tuple(dict.fromkeys((*self.globs, *globs)))
        return self if more == self.globs else replace(self, globs=more, originals=self.originals)

    def covers(self, path: str | os.PathLike[str]) -> bool:
        """Whether the absolute ``path`` (normalised, and with symlinks resolved) is a
        protected path or lies below one."""
        given = Path(os.path.normpath(os.path.abspath(path)))
        for candidate in dict.fromkeys((given, Path(os.path.realpath(given)))):
            if any(candidate == p or candidate.is_relative_to(p) for p in self.paths):
                return True
            if self.globs and candidate.is_relative_to(self.workspace):
                parts = candidate.relative_to(self.workspace).parts
                for end in range(1, len(parts) + 1):
                    if self._matches("/".join(parts[:end])):
                        return True
        return False

    def _matches(self, relative: str) -> bool:
        return any(path_glob(glob).match(relative) for glob in self.globs)

    def present(self) -> tuple[Path, ...]:
        """The protected paths that exist now (the globs expanded on disk)."""
        found = [p for p in self.paths if os.path.lexists(p)]
        for glob in self.globs:
            found += self._expand(glob)
        return tuple(dict.fromkeys(found))

    def _expand(self, glob: str) -> Iterator[Path]:
        parts = glob.split("/")
        fixed = 0
        while fixed < len(parts) and not _WILD & set(parts[fixed]):
            fixed += 1
        start = self.workspace.joinpath(*parts[:fixed])
        if fixed == len(parts):
            if os.path.lexists(start):
                yield start
            return
        if not start.is_dir() or start.is_symlink():
            return
        pattern = path_glob(glob)
        for top, dirs, files in os.walk(start):
            for name in (*dirs, *files):
                full = Path(top) / name
                if pattern.match(full.relative_to(self.workspace).as_posix()):
                    yield full
            dirs[:] = [d for d in dirs if not pattern.match(_rel(Path(top) / d, self.workspace))]

    def mounts(self) -> tuple[Path, ...]:
        """The present protected paths inside the workspace: what a sandbox binds
        read-only (one outside is not writable there anyway, and binding it could show
        what the sandbox hides, such as a file in the home)."""
        return tuple(p for p in self.present() if p.is_relative_to(self.workspace))

    def before_command(self) -> tuple[dict[Path, Fingerprint], tuple[Path, ...]]:
        """What a command's launch needs: the ``fingerprints`` to ``sweep`` against after
        it, and the ``mounts`` to bind read-only; saves the originals of files a glob
        protects that were not saved yet."""
        self.save()
        return self.fingerprints(), self.mounts()

    def fingerprints(self) -> dict[Path, Fingerprint]:
        """What each present protected path inside the workspace is now (for ``sweep``);
        a path below another one is part of that one's fingerprint."""
        inside = [p for p in self.present() if p.is_relative_to(self.workspace)]
        tops = [p for p in inside if not any(p != q and p.is_relative_to(q) for q in inside)]
        return {path: _fingerprint(path) for path in tops}

    def save(self) -> None:
        """Keep the bytes of the protected files inside the workspace as they are now
        (once per path; up to 1 MiB a file and 32 MiB in all), of those not created or
        changed since the run began."""
        kept = sum(len(data) for data, _mode in self.originals.values())
        for path in self.present():
            if not path.is_relative_to(self.workspace):
                continue
            for file in _files(path):
                if file in self.originals:
                    continue
                try:
                    read = _read_below(self.workspace, file, _MAX_SAVED)
                except OSError:
                    continue
                if read is None:
                    continue
                data, info = read
                if kept + len(data) > _MAX_KEPT or info.st_ctime_ns > self.since:
                    continue  # over the budget, or made by a command meanwhile
                self.originals[file] = (data, info.st_mode & 0o777)
                kept += len(data)

    def sweep(self, before: Mapping[Path, Fingerprint], evidence: Path | None) -> list[Swept]:
        """Undo what a command did to protected paths, given their ``fingerprints`` at
        its start: what appeared at one, or replaced or changed one, is moved into
        ``evidence`` (deleted when ``None``) and the saved originals below it are put
        back; a protected path the command removed is put back from them."""
        swept = self._unlink(evidence)
        swept += self._new_submodules(evidence)
        now = self.fingerprints()
        for path, mark in now.items():
            if before.get(path) == mark:
                continue
            what = "appeared" if path not in before else "changed"
            kept = _take_away(path, self.workspace, evidence)
            swept.append(Swept(_rel(path, self.workspace), what, kept, self._restore(path)))
        for path in before:
            if path not in now and self._restore(path):
                swept.append(Swept(_rel(path, self.workspace), "removed", None, True))
        return swept

    def _new_submodules(self, evidence: Path | None) -> list[Swept]:
        """Take away the git controls of a submodule a command added to the index (``git
        update-index --add --cacheinfo 160000,...``), or made where the index names one:
        the user's ``git status`` would run what their config says (``core.fsmonitor``).
        A submodule the run started with is protected like the repository itself."""
        swept: list[Swept] = []
        known = set(self.paths)
        for path in submodule_controls(self.workspace):
            if path in known or not os.path.lexists(path):
                continue
            if path.name == ".git" and (path.is_dir() and not path.is_symlink()):
                continue  # its controls are looked at one by one; a `.git` file goes
            if _link_on_the_way(path, self.workspace) is not None:
                continue
            kept = _take_away(path, self.workspace, evidence)
            swept.append(Swept(_rel(path, self.workspace), "appeared", kept))
        return swept

    def _unlink(self, evidence: Path | None) -> list[Swept]:
        """Take away every symbolic link, or file, a command left where a directory on the
        way to a protected path was (``mv .git .git-old && ln -s /etc .git``, or a ``.git``
        file saying ``gitdir: evil``), so that nothing ``sweep`` then does (fingerprint,
        take away, put back) follows one out of the workspace, and git is not pointed at
        a config nobody protects. The protected paths inside the workspace were real (only
        directories on the way) when the run started, so any other entry on the way now is
        the command's."""
        swept: list[Swept] = []
        for path in self._inside():
            link = _link_on_the_way(path, self.workspace)
            # A file there counts too: a `.git` file (``gitdir: elsewhere``) in place of
            # the `.git` directory points git at a config and hooks nobody protects.
            if link is not None and os.path.lexists(link):
                kept = _take_away(link, self.workspace, evidence)
                swept.append(Swept(_rel(link, self.workspace), "linked", kept))
        return swept

    def _inside(self) -> list[Path]:
        """The protected paths inside the workspace, and the fixed directories of the
        globs (``deploy`` for ``deploy/**``)."""
        found = [p for p in self.paths if p.is_relative_to(self.workspace)]
        for glob in self.globs:
            fixed = []
            for part in glob.split("/"):
                if _WILD & set(part):
                    break
                fixed.append(part)
            if fixed:
                found.append(self.workspace.joinpath(*fixed))
        return found

    def _restore(self, path: Path) -> bool:
        """Put back the saved files at and below ``path`` (making the directories
        between, never through a symbolic link: each directory is opened relative to the
        one before with ``O_NOFOLLOW``, so a command swapping one for a link meanwhile
        cannot point this root process outside the workspace); whether any was."""
        back = False
        if not path.parent.is_dir():
            return False
        for file, (data, mode) in self.originals.items():
            if (file == path or file.is_relative_to(path)) and not os.path.lexists(file):
                try:
                    parent = _open_below(self.workspace, file.parent, make=True)
                except OSError:
                    continue
                try:
                    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                    fd = os.open(file.name, flags, mode, dir_fd=parent)
                    with os.fdopen(fd, "wb") as handle:
                        handle.write(data)
                        os.fchmod(handle.fileno(), mode)
                except OSError:
                    continue
                finally:
                    os.close(parent)
                back = True
        return back


def _read_below(root: Path, file: Path, limit: int) -> tuple[bytes, os.stat_result] | None:
    """The bytes and status of the regular file ``file`` (below ``root``), opened through
    ``_open_below`` and with ``O_NOFOLLOW``: never through a link a command swapped in,
    never a FIFO; ``None`` when it is not a regular file or is over ``limit`` bytes."""
    parent = _open_below(root, file.parent)
    try:
        fd = os.open(file.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent)
    finally:
        os.close(parent)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        return handle.read(limit + 1)[:limit], info


def _open_below(root: Path, directory: Path, *, make: bool = False) -> int:
    """A descriptor of ``directory`` (at or below ``root``), reached from ``root`` one
    component at a time with ``O_NOFOLLOW``: never through a symbolic link, whatever a
    command running meanwhile does. With ``make``, missing directories are made (there,
    not through a link). Raises ``OSError``."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    fd = os.open(root, flags)
    try:
        for part in directory.relative_to(root).parts:
            if make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
            inner = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _link_on_the_way(path: Path, root: Path) -> Path | None:
    """The first entry between ``root`` (excluded) and ``path`` (excluded) that is not a
    real directory (a symbolic link, or a file), ``None`` when every one is, or is
    missing."""
    current = root
    for part in path.relative_to(root).parts[:-1]:
        current = current / part
        try:
            info = os.lstat(current)
        except OSError:
            return None
        if not stat.S_ISDIR(info.st_mode):
            return current
    return None


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def _files(path: Path) -> Iterator[Path]:
    """The regular files at and below ``path`` (the first ``_MAX_ENTRIES`` of a tree)."""
    if path.is_symlink() or not path.is_dir():
        if path.is_file() and not path.is_symlink():
            yield path
        return
    seen = 0
    for top, _dirs, files in os.walk(path):
        for name in files:
            seen += 1
            if seen > _MAX_ENTRIES:
                return
            full = Path(top) / name
            if full.is_file() and not full.is_symlink():
                yield full


def _fingerprint(path: Path) -> Fingerprint:
    """The identity and state of ``path`` and, for a directory, of the first
    ``_MAX_ENTRIES`` entries below it (``ctime`` included: a program cannot set it)."""
    marks: list[int] = []
    try:
        info = os.lstat(path)
    except OSError:
        return ()
    marks += [info.st_dev, info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns]
    marks.append(info.st_ctime_ns)
    if not stat.S_ISDIR(info.st_mode):
        return tuple(marks)
    seen = 0
    for top, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted((*dirs, *files)):
            seen += 1
            if seen > _MAX_ENTRIES:
                return tuple(marks)
            try:
                entry = os.lstat(os.path.join(top, name))
            except OSError:
                continue
            marks += [hash(name), entry.st_ino, entry.st_mode, entry.st_size]
            marks += [entry.st_mtime_ns, entry.st_ctime_ns]
    return tuple(marks)


def _take_away(path: Path, root: Path, evidence: Path | None) -> Path | None:
    """Move ``path`` into ``evidence`` (or delete it); where it went (``None``: deleted).
    Only ``path`` itself is moved: a symbolic link is moved as the link. Its directory is
    opened without following links (``_open_below``), so a command swapping one on the
    way for a link meanwhile cannot make this move or delete anything outside."""
    try:
        parent = _open_below(root, path.parent)
    except OSError:
        return None  # its directory is a link now (a command running meanwhile): leave it
    try:
        if evidence is not None:
            try:
                evidence.mkdir(mode=0o700, parents=True, exist_ok=True)
                name = _rel(path, root).replace("/", "__").lstrip(".") or "entry"
                target = evidence / f"{len(list(evidence.iterdir())) + 1}-{name}"
                os.rename(path.name, target, src_dir_fd=parent)
                return target
            except OSError:
                pass
        try:
            info = os.lstat(path.name, dir_fd=parent)
        except OSError:
            return None
        if stat.S_ISDIR(info.st_mode):
            shutil.rmtree(path.name, dir_fd=parent, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(path.name, dir_fd=parent)
        return None
    finally:
        os.close(parent)


class ProtectGuard(PermissionGuard):
    """Denies a call whose path argument names a protected path (rule ``protected-path``).

    ``protected`` are the run's fixed protected paths; ``policies`` map each role to its
    policy (``protect`` globs), and the globs in force for a call are the calling role's
    and those of every role above it in the call's path. The guard notes them on the
    call (``CallRecord.protect``) for the tools that start processes. Tools that only read
    (``READING_TOOLS``) are not refused.
    """

    def __init__(
        self, protected: ProtectedPaths, policies: Mapping[str, Any], *, role: str | None = None
    ) -> None:
        self.protected = protected
        self.policies = policies
        self.role = role

    @property
    def name(self) -> str:
        """``protect``: how denials and audit records name this guard."""
        return "protect"

    def globs_for(self, path: str | None) -> tuple[str, ...]:
        """The ``protect`` globs in force for a call by the agent at ``path``."""
        roles = [role_of(s) for s in path.split("/")] if path else []
        if self.role is not None and self.role not in roles:
            roles.append(self.role)
        globs: list[str] = []
        for role in roles:
            policy = self.policies.get(role)
            if policy is not None:
                globs += policy.protect
        return tuple(dict.fromkeys(globs))

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        call = current_call()
        globs = self.globs_for(call.path if call is not None else None)
        if call is not None:
            call.protect = globs
        if tool.name in READING_TOOLS:
            return kwargs
        paths = self.protected.widened(globs)
        for name in path_arguments(tool):
            values = kwargs.get(name)
            for value in values if isinstance(values, list | tuple) else (values,):
                if not isinstance(value, str | os.PathLike):
                    continue
                if paths.covers(os.path.join(paths.workspace, os.fspath(value))):
                    if call is not None:
                        call.guard, call.rule = self.name, PROTECTED_RULE
                    raise GuardError(
                        f"'{os.fspath(value)}' is protected: it controls this run or runs"
                        " later outside the sandbox (team, policies, scenario, MCP and"
                        " Claude settings, git config and hooks, or a policy's protect:"
                        " list), and no tool may change it",
                        guard=self.name,
                        rule=PROTECTED_RULE,
                    )
        return kwargs
