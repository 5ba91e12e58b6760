"""Taking calls back: the workspace put back as it was before them, from their
pre-images, byte for byte and mode for mode, other calls' changes to other paths kept.

``plan_undo`` decides, path by path, what to put back and refuses (``UndoRefused``,
naming each path) when a path changed since the run left it (someone edited it), when a
later call that is not undone changed it too, or when a pre-image is missing; ``force``
overrides the first two. A path is deleted only when the record saw a call create it,
and a directory only when everything left in it is also deleted. ``apply_undo`` then
makes the changes: removals deepest first, directories shallowest first, then files and
links, each written beside its place and renamed over it (so a crash leaves every path
either as it was or as restored, and running the undo again finishes it). Every path
is reached through directory descriptors opened with ``O_NOFOLLOW``.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from swarm.errors import SwarmError
from swarm.undo.log import CallChanges, Change
from swarm.undo.state import DIR_FLAGS, BlobStore, PathState, open_parent, state_at, walk

__all__ = [
    "Step",
    "UndoRefused",
    "apply_undo",
    "make_dir",
    "partial_name",
    "plan_undo",
    "put_link",
    "remove_entry",
    "select_calls",
]

UNDO_TOOL = "undo"
UNDO_AGENT = "(undo)"


class UndoRefused(SwarmError):
    """An undo that would lose work or cannot be done; ``problems`` name each path (or
    call) and why."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("undo refused:\n" + "\n".join(f"  {p}" for p in problems))


@dataclass(frozen=True, slots=True)
class Step:
    """One path to put back: what it holds ``now`` and what it will hold (``want``)."""

    path: str
    now: PathState
    want: PathState


def select_calls(
    calls: Sequence[CallChanges],
    *,
    call: str | None = None,
    agent: str | None = None,
    since: str | None = None,
) -> list[CallChanges]:
    """The calls an undo takes back: the one with id ``call``, those of the agent at
    ``agent`` (and its sub-agents), those from ``since`` on; all of them when nothing is
    given. Undos themselves are never selected. Raises ``UndoRefused`` when an id or
    agent names no call, or no call changed anything."""
    made = [c for c in calls if c.tool != UNDO_TOOL]
    chosen = made
    if call is not None:
        chosen = [c for c in chosen if c.call == call]
        if not chosen:
            raise UndoRefused([f"no call '{call}' changed the workspace in this run"])
    if agent is not None:
        chosen = [c for c in chosen if c.agent == agent or c.agent.startswith(agent + "/")]
        if not chosen:
            raise UndoRefused([f"no call of agent '{agent}' changed the workspace in this run"])
    if since is not None:
        first = next((c.seq for c in made if c.call == since), None)
        if first is None:
            raise UndoRefused([f"no call '{since}' changed the workspace in this run"])
        chosen = [c for c in chosen if c.seq >= first]
    chosen = [c for c in chosen if c.changes or not c.undoable]
    if not chosen:
        raise UndoRefused(["nothing to undo: no call of this run changed the workspace"])
    return chosen


def plan_undo(
    workspace: Path,
    calls: Sequence[CallChanges],
    chosen: Sequence[CallChanges],
    store: BlobStore,
    *,
    force: bool = False,
) -> list[Step]:
    """What to put back to take ``chosen`` (of the run's ``calls``) back; raises
    ``UndoRefused`` naming every path that stops it (see the module's docstring)."""
    problems: list[str] = []
    seqs = {c.seq for c in chosen}
    for c in chosen:
        if not c.undoable:
            problems.append(f"call {c.call} of {c.agent} ran without undo: {c.reason}")
    first: dict[str, Change] = {}
    last_chosen: dict[str, int] = {}
    for c in sorted(chosen, key=lambda c: c.seq):
        for change in c.changes:
            first.setdefault(change.path, change)
            last_chosen[change.path] = c.seq
    last: dict[str, tuple[CallChanges, Change]] = {}
    later: dict[str, CallChanges] = {}
    for c in calls:
        for change in c.changes:
            if change.path not in first:
                continue
            last[change.path] = (c, change)
            if c.seq > last_chosen[change.path] and c.seq not in seqs and c.tool != UNDO_TOOL:
                later.setdefault(change.path, c)
    steps: list[Step] = []
    for path in sorted(first):
        want = first[path].before
        now = _now(workspace, path, store)
        if now.same(want):
            continue  # put back already (an undo run again after a crash)
        left = last[path][1].after
        if not now.same(left) and not force:
            problems.append(
                f"{path}: changed since the run (now {now.describe()}, the run left"
                f" {left.describe()}); --force puts it back anyway"
            )
            continue
        if path in later and not force:
            c = later[path]
            problems.append(
                f"{path}: changed again later by call {c.call} of {c.agent}, which is not"
                " undone; --force puts it back anyway"
            )
            continue
        if want.kind == "file" and not store.has(want.blob):
            problems.append(f"{path}: its pre-image is missing from the run record")
            continue
        if want.kind == "other":
            problems.append(f"{path}: was a {want.describe()}, which undo cannot make again")
            continue
        steps.append(Step(path, now, want))
    made = {s.path for s in steps if s.want.kind == "dir" and s.now.kind != "dir"}
    for step in steps:
        blocked = _blocked(workspace, step.path, made)
        if blocked:
            problems.append(f"{step.path}: {blocked}; nothing is written through it")
    problems += _not_emptied(workspace, steps)
    if problems:
        raise UndoRefused(problems)
    return steps


def _now(workspace: Path, path: str, store: BlobStore) -> PathState:
    try:
        return state_at(workspace, path, store)
    except OSError:
        return PathState("other")


def _blocked(workspace: Path, path: str, made: set[str]) -> str:
    """Why ``path`` cannot be reached without following a link ("" when it can): a
    directory on the way that is a link or a file (a missing one, or one in ``made``,
    which the undo makes a directory first, is fine)."""
    parts = path.split("/")[:-1]
    for i in range(len(parts)):
        here = "/".join(parts[: i + 1])
        if here in made:
            return ""
        try:
            with open_parent(workspace, here + "/x"):
                pass
        except FileNotFoundError:
            return ""
        except OSError:
            return f"the directory {here} on the way is a link or a file"
    return ""


def _not_emptied(workspace: Path, steps: Sequence[Step]) -> list[str]:
    """Directories to delete that hold something the undo does not delete."""
    going = {s.path for s in steps if s.want.kind != s.now.kind}
    problems = []
    for step in steps:
        if step.now.kind != "dir" or step.want.kind == "dir":
            continue
        try:
            inside = walk(workspace / step.path)
        except OSError:
            continue
        kept = sorted(f"{step.path}/{rel}" for rel in inside if f"{step.path}/{rel}" not in going)
        if kept:
            problems.append(
                f"{step.path}: holds {kept[0]}, which the run did not see created; the"
                " directory is not deleted"
            )
    return problems


def apply_undo(workspace: Path, steps: Iterable[Step], store: BlobStore) -> list[Change]:
    """Make ``steps`` (see the module's docstring); returns each path's change (before:
    what it held, after: what it holds now). Raises ``UndoRefused`` naming the path
    when one cannot be reached without following a link (swapped since the plan)."""
    steps = list(steps)
    at = ""
    depth = lambda s: s.path.count("/")  # noqa: E731
    removals = [s for s in steps if s.now.kind != "absent" and s.now.kind != s.want.kind]
    try:
        for step in sorted(removals, key=depth, reverse=True):
            at = step.path
            remove_entry(workspace, step)
        for step in sorted((s for s in steps if s.want.kind == "dir"), key=depth):
            at = step.path
            make_dir(workspace, step)
        for step in steps:
            at = step.path
            if step.want.kind == "file":
                _put_file(workspace, step, store)
            elif step.want.kind == "link":
                put_link(workspace, step)
    except OSError as exc:  # swapped under the undo: stop, never follow
        raise UndoRefused(
            [
                f"{at}: {exc.strerror or exc}; the undo stopped there"
                " (what it put back so far stays; run it again to finish)"
            ]
        ) from None
    return [Change(s.path, s.now, s.want) for s in steps]


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def remove_entry(workspace: Path, step: Step) -> None:
    """Remove what ``step.path`` holds (an empty directory, or anything else)."""
    with open_parent(workspace, step.path) as parent:
        try:
            if step.now.kind == "dir":
                os.rmdir(_name(step.path), dir_fd=parent)
            else:
                os.unlink(_name(step.path), dir_fd=parent)
        except FileNotFoundError:
            pass


def make_dir(workspace: Path, step: Step) -> None:
    """Make ``step.path`` a directory with the wanted mode (missing parents ``0755``)."""
    with open_parent(workspace, step.path, create=True) as parent:
        name = _name(step.path)
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, step.want.mode, dir_fd=parent)
        fd = os.open(name, DIR_FLAGS, dir_fd=parent)
        try:
            os.fchmod(fd, step.want.mode)
        finally:
            os.close(fd)


def partial_name(parent: int, name: str) -> str:
    """A free name in ``parent`` beside ``name`` to write before renaming over it."""
    partial = f".{name}.swarm-undo"
    try:
        os.unlink(partial, dir_fd=parent)
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        raise OSError(errno.EEXIST, "in the way of the undo", partial) from None
    return partial


def _put_file(workspace: Path, step: Step, store: BlobStore) -> None:
    with open_parent(workspace, step.path, create=True) as parent:
        name = _name(step.path)
        partial = partial_name(parent, name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        out = os.open(partial, flags, 0o600, dir_fd=parent)
        try:
            with open(store.path(step.want.blob), "rb") as source:
                while chunk := source.read(1024 * 1024):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(out, view) :]
            os.fchmod(out, step.want.mode)
            os.fsync(out)
        finally:
            os.close(out)
        os.replace(partial, name, src_dir_fd=parent, dst_dir_fd=parent)


def put_link(workspace: Path, step: Step) -> None:
    """Make ``step.path`` the wanted link, written beside it and renamed over it."""
    with open_parent(workspace, step.path, create=True) as parent:
        name = _name(step.path)
        partial = partial_name(parent, name)
        os.symlink(step.want.target, partial, dir_fd=parent)
        os.replace(partial, name, src_dir_fd=parent, dst_dir_fd=parent)
