"""What a sandbox is: the settings a policy gives, the confinement of one command, and the
protocol every tier (bubblewrap, Landlock, sandbox-exec) implements.

The policy decides early, on parsed arguments; the sandbox enforces what the policy means
whatever the program turns out to do. A tier turns an argv and a ``Confinement`` into a
``Launch``: the argv and environment to start instead (the sandbox's own launcher around
the command), plus what must be cleaned up afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from swarm.sandbox.limits import ResourceLimits

if TYPE_CHECKING:
    from swarm.sandbox.egress import Egress
    from swarm.sandbox.proxy_door import ProxyDoor

__all__ = [
    "Confinement",
    "Launch",
    "Mode",
    "Network",
    "Overlay",
    "Reads",
    "TMPFS_SIZE",
    "Sandbox",
    "SandboxSettings",
    "SandboxUnavailable",
]

Mode = Literal["required", "auto", "off"]
"""``required``: no working sandbox, no command; ``auto``: sandbox when one works, else run
unconfined and warn once per run; ``off``: never sandbox."""

Network = Literal["none", "host"]
"""``none``: no network at all (TCP, UDP, DNS); ``host``: the machine's network."""

Reads = tuple[Path, ...] | Literal["host"]
"""What a command may read besides the workspace: a tuple of extra paths (reads confined:
the system's programs and libraries, ``/etc`` less what is not world-readable, a minimal
``/dev``, its own ``/proc``, ``/sys``, swarm's Python and the ``PATH``'s toolchains, and
these paths), or ``"host"`` (the whole machine, less the homes and the root-only secrets
every tier hides)."""

MiB = 1024**2
TMPFS_SIZE = 256 * MiB
"""The default size of each private tmpfs (``/tmp``, ``/var/tmp``, ``/dev/shm``, ``/run``)."""


class SandboxUnavailable(Exception):
    """No sandbox tier works here; the message says how to get one."""


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """What a policy says about sandboxing the processes its tools start.

    ``env`` names the variables of swarm's own environment passed into the sandbox (the
    rest of the environment is built from scratch: PATH, HOME, LANG, TERM, TMPDIR).
    ``limits`` are the resource limits on each command (see ``ResourceLimits``).
    ``read`` is what a command may read (see ``Reads``; confined by default);
    ``tmpfs_size`` the size in bytes of each private tmpfs (``None``: the kernel's
    default, half of the machine's memory). ``egress``, with network ``none``, is the
    way out through swarm's egress proxy: the allow-lists every connection must pass
    (see ``swarm.sandbox.egress``).
    """

    mode: Mode = "auto"
    network: Network = "none"
    env: tuple[str, ...] = ()
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    read: Reads = ()
    tmpfs_size: int | None = TMPFS_SIZE
    egress: Egress | None = None


@dataclass(frozen=True, slots=True)
class Overlay:
    """Where a command's changes to the workspace go instead of the workspace: the
    workspace is mounted as the lower layer of an overlay whose ``upper`` directory
    receives every file the command writes (and a whiteout for each it deletes);
    ``work`` is the overlay's scratch directory, on the same filesystem as ``upper``.
    swarm applies the upper layer to the workspace once the command has ended
    (``swarm.undo``), so what a call changed is known without reading the workspace."""

    upper: Path
    work: Path


@dataclass(frozen=True, slots=True)
class Confinement:
    """What one command may touch.

    ``workspace`` is writable (and the working directory); ``writable`` are more writable
    directories; ``readonly`` are paths inside a writable one that stay read-only (the
    workspace's ``.swarm/``); ``hidden`` are paths that must not be visible at all (run
    records); ``network`` as in ``Network``; ``env`` is the command's whole environment.
    ``readable`` are paths the command must be able to read although the sandbox would
    hide them (a private ``/tmp``, an emptied home): the script an MCP server runs, say.
    A home's well-known secrets stay hidden. ``limits`` are the resource limits the
    command and everything it starts get (CPU, memory, file size, processes). ``read``
    is what it may read beyond the workspace (see ``Reads``: confined by default);
    ``tmpfs_size`` the size of each private tmpfs (``None``: the kernel's default).
    ``proxy``, with network ``none``, is the door to the egress proxy the tier opens in
    the sandbox (``swarm.sandbox.proxy_door``). ``cgroup`` are the files by which the
    command joins its cgroup (``swarm.sandbox.cgroup``): a tier whose launcher joins it
    first thing says so with ``Launch.joined``; otherwise a shell in front of the launch
    does. ``overlay``, when given, is where the command's changes to the workspace go
    (see ``Overlay``); only a tier whose ``overlays`` is true takes one.
    """

    workspace: Path
    network: Network = "none"
    env: Mapping[str, str] = field(default_factory=dict)
    writable: tuple[Path, ...] = ()
    readonly: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    readable: tuple[Path, ...] = ()
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    read: Reads = ()
    tmpfs_size: int | None = TMPFS_SIZE
    proxy: ProxyDoor | None = None
    cgroup: tuple[Path, ...] = ()
    overlay: Overlay | None = None


@dataclass(frozen=True, slots=True)
class Launch:
    """What to start instead of the bare command: ``argv`` with environment ``env``,
    in working directory ``cwd``; ``pass_fds`` are file descriptors the launcher needs.

    ``stop``, when given, ends at once everything the launch started (a sandbox whose
    processes leave the launcher's process group, such as a PID namespace); the caller
    calls it before signalling the group when the command must be stopped early.
    ``joined``: the launcher itself joins the confinement's ``cgroup`` before it starts
    anything. ``began``, when given, says once the process has ended whether the command
    itself began: ``False`` when the launcher failed in its set-up (a mount that could not
    be made), so nothing of the command ran and it may be launched again; the caller asks
    before leaving the launch's context.
    """

    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path
    pass_fds: tuple[int, ...] = ()
    stop: Callable[[], None] | None = None
    joined: bool = False
    began: Callable[[], bool] | None = None


class Sandbox(Protocol):
    """One tier of sandbox, found to work on this machine."""

    @property
    def tier(self) -> str:
        """Its kind: ``bubblewrap``, ``landlock``, ``sandbox-exec`` or ``none``."""
        ...

    def describe(self, network: Network) -> str:
        """One line for the run's output and the audit log, e.g.
        ``bubblewrap 0.8.0, network none``."""
        ...

    def launch(
        self, argv: tuple[str, ...], confinement: Confinement
    ) -> AbstractContextManager[Launch]:
        """The launch of ``argv`` confined by ``confinement``; leaving the context cleans
        up what the launch made (temporary directories, descriptors)."""
        ...
