"""The Landlock tier: confinement for Linux without bubblewrap, with no binary and no privilege.

``LandlockSandbox.launch`` wraps a command in the launcher ``_landlock_exec.py`` (imported
from its own directory by ``python -I -S -c``: importing the ``swarm`` package would cost
most of a second per command, and ``-I`` keeps the workspace off ``sys.path`` so a planted
module cannot run before the confinement). The launcher confines the command, runs it and
kills whatever it left behind (see its docstring).

What the command gets (reads confined, the default): read and execute on the system
(``/usr``, ``/bin``, ``/sbin``, ``/lib*``, ``/etc`` less its entries that are not
world-readable, ``/proc``, of ``/sys`` the processors and memory nodes), on the
directories of its ``PATH`` (a virtual environment's ``bin``: the whole environment), on
the Python installation and on the paths
the policy's ``read:`` names; with ``read: host``, on everything but the homes, ``/tmp``,
``/var/tmp``, ``/run`` and ``/dev``; every right on the workspace, the extra writable
directories and a private ``HOME`` and ``TMPDIR`` (made per launch, removed after); read and
write on ``/dev/null``, ``zero``, ``full``, ``random``, ``urandom``, ``tty``, ``ptmx`` and
``pts`` (no disk, no ``/dev/kmsg``). Nothing else: the real home (``~/.ssh``, ``~/.aws``,
``~/.netrc``) is unreadable except ``PATH`` directories below it (never its known secrets,
``HOME_SECRETS``); ``/tmp`` and ``/var`` are out of reach; hidden paths are never granted
through a root above them. As root, the command keeps uid 0 but no capability, and
``/etc/shadow``, ``/etc/gshadow``, ``/etc/sudoers``, ``/etc/sudoers.d``, ``/etc/ssh`` and
``/etc/ssl/private`` (``ROOT_SECRETS``) are carved out of ``/etc``. A seccomp filter makes
``socket(AF_UNIX, ...)`` fail with EACCES and the keyring calls with EPERM on x86_64 and
aarch64 (``_seccomp``; ``socketpair`` still works): Landlock up to ABI 7 cannot stop a
``connect()`` to a socket file, and a root command that reached ``/run/systemd/private`` or
``docker.sock`` could start anything outside. With ABI 6 or later the command cannot signal
processes outside its domain nor reach their abstract sockets; Landlock forbids ptrace of
them, so ``/proc/<swarm pid>/environ`` is unreadable.

Where namespaces can be made (as root, or with unprivileged user namespaces:
``network_method`` ``netns`` or ``userns``) the command also runs in its own mount, PID and,
for network none, empty network namespaces: no TCP, UDP or DNS; a /proc that shows only its
own processes; every mount read-only except the workspace, the extra writable directories
and the private home and tmp (each bound onto itself), so a file's mode, owner, times and
extended attributes outside them cannot change either (Landlock has no right for those);
read-only paths inside the workspace (``.swarm/``) bind-mounted read-only; hidden paths
inside it covered by an empty tmpfs; a private ``/dev/shm``; and nothing outlives the call,
even when the launcher is SIGKILLed. A mount that stays writable after the remount makes
the launcher refuse to run the command.

What this tier cannot do:

- without namespaces (``landlock-tcp``): stop metadata changes outside the workspace
  (``chmod``, ``chown`` of one's own files, ``touch -d``, ``setfattr``: Landlock has no right
  for them, so only the files' owners and modes protect them), block UDP and DNS (only TCP
  bind and connect are blocked), make a path inside a writable tree read-only
  (``.swarm/`` stays writable; the policy layer still answers for it), hide one (the
  launcher then refuses to run the command), hide other processes in ``/proc``, give a
  private ``/dev/shm`` (it is not granted: POSIX semaphores fail), or kill orphans when
  the launcher itself is SIGKILLed; ``describe`` says so;
- give an empty home at the real home's path: ``HOME`` points at a private directory
  elsewhere, and a program that finds the home by uid (``getpwuid``) sees the real path,
  unreadable;
- serve a unix socket file, even in the workspace (the seccomp filter above);
- stop signals to swarm with an ABI below 6;
- without namespaces, confine a network allow-list (``SandboxSettings.egress``) to
  TCP: the proxy listens on a port of the machine's loopback and Landlock lets the
  command connect to that port only (``proxy_over_tcp``), but on any address (Landlock
  rules name ports, not addresses) and UDP and DNS stay open. With namespaces, the
  command's ``lo`` is brought up and the door to the egress proxy listens there, as in
  bubblewrap (``swarm.sandbox.proxy_door``).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from swarm.sandbox import _landlock_exec, _landlock_kernel
from swarm.sandbox._paths import (
    HOME_SECRETS,
    ROOT_SECRETS,
    SYS_VISIBLE,
    SYSTEM_ROOTS,
    TOOLCHAIN_SECRETS,
    etc_secrets,
    is_within,
)
from swarm.sandbox.base import Confinement, Launch, Network, SandboxUnavailable

__all__ = ["LandlockSandbox", "NetworkMethod", "landlock_abi"]

NetworkMethod = Literal["netns", "userns", "landlock-tcp"]
"""How the Landlock tier takes the network away, and so what else it can do: ``netns`` new
network and mount namespaces (needs root), ``userns`` the same inside a new user namespace
(unprivileged); ``landlock-tcp`` no namespace at all, only Landlock rules that block TCP
(ABI 4 or later; UDP and DNS stay open, and read-only or hidden paths inside the workspace
cannot be enforced)."""

_NAMESPACES = {"netns": "plain", "userns": "user", "landlock-tcp": "none"}
_HOST_PRIVATE = ("/tmp", "/var/tmp", "/run", "/dev", "/root", "/home")
_KERNEL_ROOTS = ("/proc", *SYS_VISIBLE)
_LAUNCHER = Path(_landlock_exec.__file__)
_START = (
    sys.executable,
    "-I",
    "-S",
    "-c",
    # Imported rather than run by path: its cached bytecode spares compiling it at every
    # command. The path stays in the arguments, where `ps` shows what runs.
    "import os, sys; sys.path.append(os.path.dirname(sys.argv[1])); import _landlock_exec;"
    " sys.exit(_landlock_exec.main(sys.argv[2:]))",
    str(_LAUNCHER),
)
"""The words that start the launcher; its options, ``--`` and the command follow."""


def landlock_abi() -> int:
    """The Landlock ABI version of this kernel: 0 when Landlock is unsupported or disabled."""
    if sys.platform != "linux":
        return 0
    return _landlock_kernel.abi_version()


def probe() -> LandlockSandbox | None:
    """The Landlock tier when this kernel has Landlock, else ``None`` (for
    ``swarm.sandbox.find_sandbox``)."""
    return LandlockSandbox() if landlock_abi() >= 1 else None


@functools.cache
def _network_method(abi: int) -> NetworkMethod | None:
    """How network ``none`` can be enforced here, asked of the launcher once per process."""
    found = subprocess.run(
        [*_START, "--probe"],
        capture_output=True,
        text=True,
        check=False,
        env={},
    )
    works = dict(item.partition("=")[::2] for item in found.stdout.split())
    if works.get("plain") == "1":
        return "netns"
    if works.get("user") == "1":
        return "userns"
    return "landlock-tcp" if abi >= 4 else None


class LandlockSandbox:
    """The Landlock tier (``tier`` is ``landlock``); see the module docstring for what it
    confines and what it cannot.

    ``hide_home`` is the home whose contents the command must not read (default: the real
    one). ``network_method`` forces how network ``none`` is enforced; by default the first
    that works here, probed once. Raises ``SandboxUnavailable`` when the kernel has no
    Landlock.
    """

    def __init__(
        self, *, hide_home: Path | None = None, network_method: NetworkMethod | None = None
    ) -> None:
        self._abi = landlock_abi()
        if self._abi < 1:
            raise SandboxUnavailable(
                "Landlock is unsupported here: it needs Linux 5.13 or later with 'landlock' "
                "in the kernel's lsm= list (or install bubblewrap)"
            )
        self._home = (hide_home or Path.home()).resolve()
        self._method: NetworkMethod | None = network_method
        self._probed = network_method is not None

    @property
    def tier(self) -> str:
        """Always ``landlock``."""
        return "landlock"

    @property
    def proxy_over_tcp(self) -> bool:
        """Whether a network allow-list's proxy must be reached over the machine's
        loopback (no network namespace here: ``landlock-tcp``)."""
        return self.network_method == "landlock-tcp"

    @property
    def abi(self) -> int:
        """The kernel's Landlock ABI version (1 or more)."""
        return self._abi

    @property
    def network_method(self) -> NetworkMethod | None:
        """How network ``none`` is enforced; ``None`` when no method works here, and a
        launch with network ``none`` then raises ``SandboxUnavailable``."""
        if not self._probed:
            self._method = self._probe()
            self._probed = True
        return self._method

    def _probe(self) -> NetworkMethod | None:
        return _network_method(self._abi)

    def describe(self, network: Network) -> str:
        """E.g. ``landlock ABI 7, network none (network namespace); no unix sockets``: it
        says plainly when UDP and DNS stay open, when modes, owners and times of files
        outside the workspace can change, or read-only paths inside it stay writable."""
        if network == "host":
            net = "network host"
        else:
            match self.network_method:
                case "netns" | "userns":
                    net = "network none (network namespace)"
                case "landlock-tcp":
                    net = "network none for TCP only (UDP and DNS stay open)"
                case None:
                    net = "network none impossible here (no namespace, ABI below 4)"
        if self.network_method in ("netns", "userns"):
            limit = "no unix sockets"
        else:
            limit = "no unix sockets; modes, owners, times and xattrs of files outside the "
            limit += "workspace can change; read-only paths inside the workspace stay "
            limit += "writable; other processes visible"
        return f"landlock ABI {self._abi}, {net}; {limit}"

    @contextmanager
    def launch(self, argv: tuple[str, ...], confinement: Confinement) -> Iterator[Launch]:
        """The launcher around ``argv``; leaving the context removes the private home and
        tmp. Raises ``SandboxUnavailable`` for network ``none`` where nothing can block it."""
        method = self.network_method
        if confinement.network == "none" and method is None:
            raise SandboxUnavailable(self.describe("none"))
        door = confinement.proxy
        if door is not None and door.over_tcp != (method == "landlock-tcp"):
            raise SandboxUnavailable(
                "the egress proxy's door does not fit this tier's network method"
                f" ({method}): open it with over_tcp={method == 'landlock-tcp'}"
            )
        base = Path(tempfile.mkdtemp(prefix="swarm-landlock-")).resolve()
        try:
            home, tmp = base / "home", base / "tmp"
            home.mkdir(mode=0o700)
            tmp.mkdir(mode=0o700)
            env = {**confinement.env, "HOME": str(home), "TMPDIR": str(tmp)}
            env_file = base / "env"
            fd = os.open(env_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(b"".join(_env_entry(name, value) for name, value in env.items()))
            options = self._options(confinement, env, home=home, tmp=tmp)
            options += [f"--env-file={env_file}", f"--network={confinement.network}"]
            options.append(f"--namespaces={_NAMESPACES[method or 'landlock-tcp']}")
            options.append(f"--parent={os.getpid()}")
            # The launcher joins the command's cgroup first thing: no shell in front.
            options += [f"--cgroup={path}" for path in confinement.cgroup]
            options += [f"--limit={o[2:]}" for o in confinement.limits.options()]
            if confinement.tmpfs_size is not None:
                options.append(f"--tmpfs-size={confinement.tmpfs_size}")
            fds: tuple[int, ...] = ()
            if door is not None and door.over_tcp:  # TCP to the proxy's port only
                options.append(f"--connect-port={door.port}")
            elif door is not None:  # the door to the egress proxy, on lo
                options.append("--loopback=up")
                argv, fds = door.wrap(argv), (door.fd,)
            yield Launch(
                argv=(*_START, *options, "--", *argv),
                env={},
                cwd=confinement.workspace,
                pass_fds=fds,
                joined=bool(confinement.cgroup),
            )
        finally:
            _remove_tree(base)

    def _options(
        self, confinement: Confinement, env: Mapping[str, str], *, home: Path, tmp: Path
    ) -> list[str]:
        workspace = confinement.workspace.resolve()
        writes = [workspace, *(p.resolve() for p in confinement.writable), home, tmp]
        # Never granted, not even by a PATH entry below the home (which is granted).
        never = [
            *(p.resolve() for p in confinement.hidden),
            *(self._home / s for s in HOME_SECRETS),
        ]
        # A workspace that is the home gets it (its secrets still hidden); one below the
        # home or elsewhere leaves the rest of the home out of reach.
        deny = [*([] if self._home in writes else [self._home]), *never]
        if confinement.read == "host":
            # The machine, less what bubblewrap's view of it empties or makes private.
            reads = [Path("/"), *(p.resolve() for p in confinement.readable)]
            deny += [Path(p) for p in _HOST_PRIVATE if Path(p) not in writes]
        else:
            reads = [Path(p) for p in (*SYSTEM_ROOTS, "/etc", *_KERNEL_ROOTS)]
            reads += [p.resolve() for p in (*confinement.read, *confinement.readable)]
            # Found by mode: root would read them whatever the mode says.
            deny += [Path(p) for p in etc_secrets()]
        if os.geteuid() == 0:
            deny += [Path(p) for p in ROOT_SECRETS]
        extra = env.get("PATH", os.defpath).split(os.pathsep)
        # A virtual environment's bin needs the environment: Python reads ../pyvenv.cfg
        # and its site-packages (without them a venv under /tmp did not start at all).
        extra += [
            os.path.dirname(e.rstrip("/"))
            for e in extra
            if os.path.isabs(e) and os.path.isfile(os.path.join(e, "..", "pyvenv.cfg"))
        ]
        extra += [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
        for entry in extra:
            if not entry or not os.path.isabs(entry):
                continue  # a relative PATH entry would mean the workspace, already granted
            path = Path(entry).resolve()
            # A PATH entry at or above the home would expose all of it; one below the home
            # is allowed (~/.local/bin) unless it lies in a secret or hidden path; one above
            # a secret or hidden path gets it carved out by the launcher.
            if is_within(self._home, path) or any(is_within(path, n) for n in never):
                continue
            path = self._toolchain(path, deny)
            if path not in reads:
                reads.append(path)
        options = [f"--workspace={workspace}"]
        options += [f"--read={p}" for p in reads]
        options += [f"--write={p}" for p in writes]
        options += [f"--deny={p}" for p in dict.fromkeys(deny)]
        options += [f"--readonly={p.resolve()}" for p in confinement.readonly]
        return options

    def _toolchain(self, entry: Path, deny: list[Path]) -> Path:
        """What to grant for a ``PATH`` entry: for one below the home, the whole directory
        just below the home (``~/.pyenv`` for ``~/.pyenv/shims``: its shims run programs
        from all over it), its credential files denied; the entry alone where that
        directory holds other things (``~/.local``, ``~/.config``)."""
        if self._home not in entry.parents:
            return entry
        root = self._home / entry.relative_to(self._home).parts[0]
        if root.name in (".local", ".config") or any(
            is_within(root, self._home / s) for s in HOME_SECRETS
        ):
            return entry
        deny.extend(root / name for name in TOOLCHAIN_SECRETS)
        return root


def _env_entry(name: str, value: str) -> bytes:
    """One ``NAME=value`` entry of the launcher's env file, ended by NUL."""
    entry = os.fsencode(name) + b"=" + os.fsencode(value)
    if b"\0" in entry or "=" in name or not name:
        raise ValueError(f"environment variable {name!r} cannot be passed to a command")
    return entry + b"\0"


def _remove_tree(base: Path) -> None:
    """Remove a launch's private directories, even those the command made unreadable."""
    for parent, dirs, _files in os.walk(base):
        for name in dirs:
            path = os.path.join(parent, name)
            if not os.path.islink(path):
                os.chmod(path, 0o700)
    shutil.rmtree(base, ignore_errors=True)
