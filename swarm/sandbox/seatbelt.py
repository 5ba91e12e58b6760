"""The macOS tier: ``sandbox-exec -p PROFILE`` with a Seatbelt (SBPL) profile made per launch.

UNTESTED ON A REAL MAC: the profile and the argv are checked by unit tests on Linux only;
the first run on macOS must confirm that common tools (bash, git, python) work under it and
that the denials hold.

The profile denies by default, then allows: exec and fork; signals and process information
only within the same sandbox (the command and its descendants, not swarm); reading the whole
filesystem except the real home, where only the workspace, ``PATH`` directories and the
Python installation are readable; writing only in the workspace, the extra writable
directories and a private ``HOME`` and ``TMPDIR`` (made per launch, removed after); writes to
``/dev/null``-like devices; the network only for network ``host``. Later SBPL rules win, so
the read-only paths inside the workspace (``.swarm/``) really are read-only here, and hidden
paths and the home's secrets (``~/.ssh``, ``~/.aws``...) are denied last, whatever allowed
them before.

Paths reach the profile as ``-D`` parameters, never spliced into its text, so a directory
named with quotes or parentheses cannot change the policy.

What this tier cannot do: Seatbelt has no subreaper, so a process that leaves the process
group (``setsid cmd &``) can outlive the call; other processes stay visible (``ps``); and
``sandbox-exec`` is deprecated by Apple, though still shipped.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from swarm.sandbox._paths import HOME_SECRETS, is_within
from swarm.sandbox.base import Confinement, Launch, Network

__all__ = ["SeatbeltSandbox"]

_DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/dtracehelper",
)
# Services that libSystem needs for users, logging and notifications.
_MACH_SERVICES = (
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.system.logger",
    "com.apple.logd",
    "com.apple.system.notification_center",
    "com.apple.bsd.dirhelper",
)
# With network host: name resolution and certificate checks.
_NETWORK_MACH_SERVICES = (
    "com.apple.dnssd.service",
    "com.apple.trustd",
    "com.apple.trustd.agent",
    "com.apple.SecurityServer",
)
_BASE = """(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow process-info* (target same-sandbox))
(allow signal (target same-sandbox))
(allow sysctl-read)
(allow user-preference-read)
(allow ipc-posix-sem)
(allow ipc-posix-shm)
(allow pseudo-tty)
"""


class _Profile:
    """An SBPL profile under construction, with its parameters."""

    def __init__(self) -> None:
        self.lines: list[str] = [_BASE.rstrip("\n")]
        self.params: dict[str, str] = {}
        self._counts: dict[str, int] = {}

    def param(self, prefix: str, path: Path) -> str:
        """A filter naming ``path`` through a new ``-D`` parameter."""
        number = self._counts.get(prefix, 0)
        self._counts[prefix] = number + 1
        key = f"{prefix}_{number}"
        self.params[key] = str(path)
        return f'(param "{key}")'

    def rule(self, action: str, operations: str, prefix: str, paths: list[Path], kind: str) -> None:
        if paths:
            filters = " ".join(f"({kind} {self.param(prefix, p)})" for p in paths)
            self.lines.append(f"({action} {operations} {filters})")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def probe() -> SeatbeltSandbox | None:
    """The macOS tier where ``/usr/bin/sandbox-exec`` exists, else ``None`` (for
    ``swarm.sandbox.find_sandbox``)."""
    if sys.platform != "darwin" or not Path("/usr/bin/sandbox-exec").exists():
        return None
    return SeatbeltSandbox()


class SeatbeltSandbox:
    """The macOS tier (``tier`` is ``sandbox-exec``); see the module docstring, including
    that it is untested on a real Mac.

    ``hide_home`` is the home the command must not read (default: the real one);
    ``executable`` is the ``sandbox-exec`` to run.
    """

    def __init__(
        self, *, hide_home: Path | None = None, executable: str = "/usr/bin/sandbox-exec"
    ) -> None:
        self._home = (hide_home or Path.home()).resolve()
        self._executable = executable

    @property
    def tier(self) -> str:
        """Always ``sandbox-exec``."""
        return "sandbox-exec"

    def describe(self, network: Network) -> str:
        """E.g. ``sandbox-exec, network none; setsid orphans may outlive the call``."""
        return f"sandbox-exec, network {network}; setsid orphans may outlive the call"

    @contextmanager
    def launch(self, argv: tuple[str, ...], confinement: Confinement) -> Iterator[Launch]:
        """``sandbox-exec -p PROFILE -D ... argv``; leaving the context removes the private
        home and tmp."""
        base = Path(tempfile.mkdtemp(prefix="swarm-seatbelt-")).resolve()
        try:
            home, tmp = base / "home", base / "tmp"
            home.mkdir(mode=0o700)
            tmp.mkdir(mode=0o700)
            env = {**confinement.env, "HOME": str(home), "TMPDIR": str(tmp)}
            profile = self._profile(confinement, env.get("PATH", os.defpath), [home, tmp])
            params = [arg for k, v in profile.params.items() for arg in ("-D", f"{k}={v}")]
            yield Launch(
                argv=(
                    *confinement.limits.launcher(),
                    self._executable,
                    "-p",
                    profile.text(),
                    *params,
                    *argv,
                ),
                env=env,
                cwd=confinement.workspace,
            )
        finally:
            shutil.rmtree(base, ignore_errors=True)

    def _profile(self, confinement: Confinement, path: str, private: list[Path]) -> _Profile:
        profile = _Profile()
        workspace = confinement.workspace.resolve()
        writable = [workspace, *(p.resolve() for p in confinement.writable), *private]
        hidden = [p.resolve() for p in confinement.hidden]
        secrets = [self._home / s for s in HOME_SECRETS]
        mach = _MACH_SERVICES + (_NETWORK_MACH_SERVICES if confinement.network == "host" else ())
        names = " ".join(f'(global-name "{name}")' for name in mach)
        profile.lines.append(f"(allow mach-lookup {names})")

        profile.lines.append("(allow file-read*)")
        profile.rule("deny", "file-read*", "HOME", [self._home], "subpath")
        readable = [Path(sys.base_prefix), Path(sys.prefix)]
        readable += [Path(p) for p in path.split(os.pathsep) if os.path.isabs(p)]
        in_home = []
        for entry in readable:
            resolved = entry.resolve()
            if is_within(resolved, self._home) and resolved != self._home:
                in_home.append(resolved)
        profile.rule("allow", "file-read*", "READ", in_home, "subpath")
        # Path lookups stat each directory on the way (getcwd, realpath).
        ancestors = {a for p in [*in_home, *writable] for a in p.parents}
        profile.rule("allow", "file-read-metadata", "UP", sorted(ancestors), "literal")
        profile.rule("allow", "file-read* file-write*", "WRITE", writable, "subpath")
        devices = [Path(d) for d in _DEVICES]
        profile.rule("allow", "file-read* file-write-data file-ioctl", "DEV", devices, "literal")
        readonly = [p.resolve() for p in confinement.readonly]
        profile.rule("deny", "file-write*", "READONLY", readonly, "subpath")
        profile.rule("deny", "file-read* file-write*", "HIDDEN", hidden + secrets, "subpath")
        if confinement.network == "host":
            profile.lines.append("(allow network*)")
            profile.lines.append("(allow system-socket)")
        return profile
