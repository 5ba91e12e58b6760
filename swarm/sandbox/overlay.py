"""The workspace as an overlay, so a command's changes land in a directory of their own.

A tier that takes a ``Confinement.overlay`` starts the command behind ``overlay_argv``:
``unshare`` gives it a mount namespace (and, for a user other than root, a user
namespace in which it may mount), the kernel's overlayfs is mounted over the workspace
with the workspace as its lower layer, and the launch goes on from there. Everything
the command writes then goes to the overlay's upper directory: a changed file is copied
up whole, a deleted one leaves a whiteout (a ``0/0`` character device), a directory
whose content was replaced is marked opaque (``overlay.opaque`` extended attribute).
The workspace itself is untouched until swarm applies the upper directory
(``swarm.undo.overlay``), so what the call changed costs what it changed to find, not
what the workspace holds.

The layout is kept plain: no redirects, no index, no metadata-only copies. A directory
that existed before cannot be renamed (``EXDEV``; ``mv`` copies instead). The overlay is
``volatile``: its end does not flush the upper directory's whole filesystem to disk (an
unmount otherwise waits for every dirty page of that filesystem, the host's included);
an upper directory a crash cut short is never applied anyway.

``overlay_works`` tries the mount once per filesystem of the upper directory and user:
where it fails (no user namespaces, an upper directory on a filesystem without extended
attributes, an old kernel) captures fall back to walking the workspace. ``unshare`` and
``mount`` run outside the sandbox, so they are found in the system's directories only,
never through the command's ``PATH``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from swarm._log import logger
from swarm.sandbox.base import Overlay

__all__ = [
    "MOUNT_FAILED",
    "SYSTEM_PATH",
    "emptied",
    "overlay_argv",
    "overlay_options",
    "overlay_works",
    "private_attributes",
    "userns_ids",
]

_log = logger("swarm.sandbox")

MOUNT_FAILED = 126
"""The exit code of a launch whose overlay could not be mounted (nothing ran)."""

_WHY = "the workspace overlay could not be mounted; nothing ran"
_MOUNT = (
    f'"$1" -t overlay swarm-undo -o "$2" -- "$3" || {{ echo "swarm: {_WHY}" >&2;'
    f' exit {MOUNT_FAILED}; }}; shift 3; exec "$@"'
)
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
"""Where ``unshare`` and ``mount`` are looked for: they run outside the sandbox, so
never through the command's ``PATH`` (a directory of the workspace may be on it)."""
_UNSAFE = frozenset(",:\\\n\"'")


def _as_root() -> bool:
    return os.geteuid() == 0


def _program(name: str) -> str | None:
    return shutil.which(name, path=SYSTEM_PATH)


def private_attributes() -> str:
    """The prefix of the extended attributes overlayfs keeps its own marks in (an
    opaque directory, a copied file's origin) for the overlays this user mounts:
    ``trusted.overlay.`` for root, ``user.overlay.`` in a user namespace. Attributes of
    the other namespace are the command's own."""
    return "trusted.overlay." if _as_root() else "user.overlay."


def overlay_options(workspace: Path, overlay: Overlay) -> str | None:
    """The mount options of ``overlay`` over ``workspace``; ``None`` when a path holds a
    character the option string cannot carry (a comma, a colon, a backslash)."""
    paths = (str(workspace), str(overlay.upper), str(overlay.work))
    if any(_UNSAFE.intersection(p) for p in paths):
        return None
    options = f"lowerdir={paths[0]},upperdir={paths[1]},workdir={paths[2]}"
    options += ",redirect_dir=nofollow,index=off,metacopy=off,volatile"
    return options if _as_root() else options + ",userxattr"


def overlay_argv(workspace: Path, overlay: Overlay) -> tuple[str, ...]:
    """The words put in front of a launch so it runs with ``overlay`` mounted over
    ``workspace`` (a real path); the launch's own words follow them. Every program is
    named by its full path. Raises ``ValueError`` when the paths cannot be given to
    ``mount``, or ``unshare`` or ``mount`` is missing."""
    options = overlay_options(workspace, overlay)
    if options is None:
        raise ValueError(f"an overlay cannot be mounted over {workspace}: its path has a comma")
    unshare, mount = _program("unshare"), _program("mount")
    if unshare is None or mount is None:
        raise ValueError(f"an overlay needs unshare and mount (util-linux) in {SYSTEM_PATH}")
    namespaces = ("--mount",) if _as_root() else ("--user", "--map-root-user", "--mount")
    return (
        unshare,
        *namespaces,
        "--propagation",
        "private",
        "--",
        "/bin/sh",
        "-c",
        _MOUNT,
        "swarm-overlay",
        mount,
        options,
        str(workspace),
    )


def userns_ids() -> tuple[str, ...]:
    """bubblewrap's options that give the command back its own uid and gid inside the
    user namespace ``overlay_argv`` made for a user other than root (where it is root
    so that it may mount); nothing for root."""
    if _as_root():
        return ()
    return ("--unshare-user", "--uid", str(os.getuid()), "--gid", str(os.getgid()))


def overlay_works(workspace: Path, base: Path) -> bool:
    """Whether an overlay can be mounted over ``workspace`` with its upper directory
    under ``base``: tried once per filesystem of ``base`` and user (a probe mounts an
    overlay of its own there and checks the copy and the whiteout it must leave)."""
    if _program("unshare") is None or _program("mount") is None:
        return False
    if overlay_options(workspace, Overlay(base, base)) is None:
        return False
    base.mkdir(parents=True, exist_ok=True)
    key = (base.stat().st_dev, os.geteuid())
    found = _probed.get(key)
    if found is None:
        found = _probed[key] = _probe(base)
    return found


_probed: dict[tuple[int, int], bool] = {}


def _probe(base: Path) -> bool:
    with tempfile.TemporaryDirectory(prefix="overlay-probe-", dir=base) as scratch:
        lower, upper, work = (Path(scratch, name) for name in ("lower", "upper", "work"))
        for directory in (lower, upper, work):
            directory.mkdir()
        (lower / "probe").write_bytes(b"lower")
        overlay = Overlay(upper, work)
        if overlay_options(lower, overlay) is None:
            return False
        # write then delete a lower file: the upper directory must hold a whiteout
        script = "echo upper > probe && rm -f probe"
        argv = (*overlay_argv(lower, overlay), "sh", "-c", f"cd {lower} && {script}")
        try:
            done = subprocess.run(argv, capture_output=True, timeout=20, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            _log.debug("workspace overlay unavailable", why=str(exc))
            return False
        try:
            whiteout = (upper / "probe").lstat().st_rdev == 0
        except OSError:
            whiteout = False
        works = done.returncode == 0 and whiteout
        works = works and (lower / "probe").read_bytes() == b"lower"
        if not works:
            said = done.stderr.decode(errors="replace").strip()
            _log.debug("workspace overlay unavailable", why=said or f"exit {done.returncode}")
        _make_removable(work)
    return works


def emptied(overlay: Overlay) -> None:
    """Empty ``overlay``'s directories after a launch whose command never began (its
    sandbox's set-up failed), so the next launch can mount it: a ``volatile`` overlay
    leaves a mark in its work directory that refuses a second mount, and what the upper
    directory holds was made by the set-up, not by the command."""
    _make_removable(overlay.work)
    for directory in (overlay.upper, overlay.work):
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)


def _make_removable(work: Path) -> None:
    """overlayfs leaves a ``work/work`` directory without permissions."""
    for top, dirs, _files in os.walk(work):
        for name in dirs:
            with contextlib.suppress(OSError):
                os.chmod(Path(top, name), 0o700)
