"""Paths every tier treats alike: the home's and the machine's secrets, and what lies
within what."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

HOME_SECRETS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".password-store",
    ".pki",
)
"""Paths below the home never granted, even through a ``PATH`` directory at or above them."""

ROOT_SECRETS = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
)
"""The machine's secrets that only root reads (password hashes, sudo rules, SSH host keys,
TLS private keys): hidden from a command run as root, which keeps uid 0 in every tier."""


TOOLCHAIN_SECRETS = ("credentials", "credentials.toml", ".credentials.toml")
"""Files hidden inside a toolchain directory of the home (cargo keeps its token there)."""


def is_within(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or lies below it (both already resolved, so comparing
    their text is exact: ``root in path.parents`` built a path per ancestor, and a
    command's launch asks this hundreds of times)."""
    inner, outer = str(path), str(root)
    return inner == outer or inner.startswith(outer if outer.endswith("/") else outer + "/")


SYSTEM_ROOTS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""The system's program and library directories, readable by every command (with ``/etc``
less its secrets, ``/proc``, ``SYS_VISIBLE`` and a minimal ``/dev``), when reads are confined."""

SYS_VISIBLE = ("/sys/devices/system/cpu", "/sys/devices/system/node")
"""All of ``/sys`` a command sees when reads are confined: the processors and memory nodes,
which ``nproc``, ``lscpu``, BLAS libraries and language runtimes read to size themselves.
Not the rest: devices and their serial numbers, firmware tables, kernel tracing, the host's
cgroups (a root command reads files there whatever their mode)."""

_etc_cache: tuple[tuple[tuple[str, int, int], ...], tuple[str, ...]] | None = None
_etc_checked = 0.0
ETC_RECHECK = 1.0
"""Seconds during which the scan of ``/etc`` is reused without looking at it again."""


def _world_readable(mode: int) -> bool:
    if stat.S_ISDIR(mode):
        return mode & (stat.S_IROTH | stat.S_IXOTH) == stat.S_IROTH | stat.S_IXOTH
    return bool(mode & stat.S_IROTH)


def _scan_etc(root: str) -> tuple[tuple[tuple[str, int, int], ...], tuple[str, ...]]:
    """The directories of ``root`` (with their times, the cache's key) and the entries that
    are not readable by everyone (a directory: also not searchable), outermost only."""
    dirs: list[tuple[str, int, int]] = []
    hidden: list[str] = []
    pending = [root]
    while pending:
        directory = pending.pop()
        try:
            info = os.lstat(directory)
            entries = os.scandir(directory)
        except OSError:
            continue
        dirs.append((directory, info.st_mtime_ns, info.st_ctime_ns))
        with entries:
            for entry in entries:
                try:
                    mode = entry.stat(follow_symlinks=False).st_mode
                except OSError:
                    continue
                if stat.S_ISLNK(mode):
                    continue  # its target is judged where it lies
                if not _world_readable(mode):
                    hidden.append(entry.path)
                elif stat.S_ISDIR(mode):
                    pending.append(entry.path)
    return tuple(sorted(dirs)), tuple(sorted(hidden))


def _unchanged(dirs: tuple[tuple[str, int, int], ...]) -> bool:
    for path, mtime, ctime in dirs:
        try:
            info = os.lstat(path)
        except OSError:
            return False
        if info.st_mtime_ns != mtime or info.st_ctime_ns != ctime:
            return False
    return True


def etc_secrets(root: str = "/etc") -> tuple[str, ...]:
    """The entries of ``/etc`` that not everyone may read, found by their mode (not by a
    list): hidden from every command when reads are confined, since a command run as root
    would read them regardless of the mode. Scanned once per process, and again when a
    directory of ``/etc`` has changed (an entry added, removed, renamed, or the
    directory's own mode), looked at at every call for ``/etc`` itself and no more than
    once per ``ETC_RECHECK`` seconds for the directories below it: a file's mode changed
    in place is seen at the next change of its directory, or by a new swarm process."""
    global _etc_cache, _etc_checked
    cached = _etc_cache
    now = time.monotonic()
    if cached is not None and cached[0] and cached[0][0][0] == root:
        # /etc itself at every call (one stat): a file added at its top is seen at once.
        if now - _etc_checked < ETC_RECHECK and _unchanged(cached[0][:1]):
            return cached[1]
        if _unchanged(cached[0]):
            _etc_checked = now
            return cached[1]
    cached = _etc_cache = _scan_etc(root)
    _etc_checked = now
    return cached[1]
