"""The bubblewrap tier: every command in its own mount, PID, IPC and UTS namespaces.

What a command sees (built by ``bwrap_arguments``, in this order, later mounts on top):

- read-only, the system's program and library directories, ``/etc`` less what is not
  world-readable, of ``/sys`` the processors and memory nodes, and nothing else of the
  machine (with ``read: host``, the whole machine, submounts included); a minimal
  ``/dev`` and a ``/proc`` of its own PID namespace, so no other process is visible or
  reachable;
- private, empty ``/tmp``, ``/var/tmp`` and ``/dev/shm``; an empty ``/run`` (the sockets
  of system services such as D-Bus live there, and a read-only mount does not stop a
  process from connecting to a socket);
- as root, the machine's root-only secrets (``/etc/shadow``, ``/etc/gshadow``,
  ``/etc/sudoers``, ``/etc/sudoers.d``, ``/etc/ssh``, ``/etc/ssl/private``) replaced by an
  empty file or directory: the command keeps uid 0, and file modes would not stop it;
- the home, ``/root`` and ``/home`` replaced by empty directories; the toolchains the
  ``PATH`` finds in the home (``~/.pyenv``, ``~/.cargo``) bound back read-only, without
  the credential files toolchains keep there;
- the workspace (and ``Confinement.writable``) writable; ``readonly`` paths inside it
  bound back read-only; ``hidden`` paths and well-known secrets inside a writable
  directory (``~/.ssh`` when the workspace is the home) replaced by empty ones;
- no capabilities, even when swarm runs as root (or ``mount -o remount,rw /`` would undo
  all of the above);
- no network unless the confinement says ``host``; a new session; bubblewrap and all it
  started die with the process that launched it, and when the command ends every process
  left in its PID namespace dies with it.

Resource limits (``Confinement.limits``, see ``swarm.sandbox.limits``) are set by the
gate, the bash that runs first in the sandbox (``GATE``), on itself and so on everything
the command starts (not by a ``prlimit`` in front of bubblewrap: one program fewer to
start). The command starts behind that gate, which reads a pipe only swarm can write:
with a process limit it waits there until a thread has set the ``pid_max`` of its PID
namespace; then the gate leaves a watcher in the sandbox and runs the command. When the
pipe ends (the launch is over, or swarm died, SIGKILLed or not, at any moment of the
set-up) the gate that has not yet said go never runs the command, and the watcher kills
every process of the PID namespace, whose end then ends bubblewrap too. Parent-death
signals alone left a sandbox running under load: they are set after the process starts
(a window in which swarm may die), and bubblewrap 0.8 sets one only inside. (bubblewrap's
own ``--block-fd`` runs the command on once the pipe ends, unwatched and uncapped.)
The outer ``bwrap`` gets no parent-death signal of its own: killed in the middle of its
set-up, it left the sandbox's first process waiting forever on it (before any gate
could run); left alive, it finishes, the gate sees the pipe ended, and it exits with the
sandbox.

The command's environment is exactly ``Confinement.env``; bubblewrap is started with that
environment too (inside the sandbox its own ``/proc/1/environ`` is visible), and with
nothing on its command line but paths.
"""

from __future__ import annotations

import array
import contextlib
import dataclasses
import fcntl
import functools
import json
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from swarm._log import logger
from swarm.sandbox import _seccomp
from swarm.sandbox._paths import (
    ROOT_SECRETS,
    SYS_VISIBLE,
    SYSTEM_ROOTS,
    TOOLCHAIN_SECRETS,
    etc_secrets,
)
from swarm.sandbox.base import Confinement, Launch, Network, SandboxUnavailable
from swarm.sandbox.limits import cap_pid_namespace
from swarm.sandbox.overlay import emptied, overlay_argv, userns_ids

__all__ = ["Bubblewrap", "bwrap_arguments", "probe_bubblewrap"]

PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
"""Directories every command gets empty, writable and its own."""
HOME_DIRS = ("/root", "/home")
"""Directories of homes, replaced by empty ones (as is the user's own home)."""
SECRETS = (
    ".ssh",
    ".aws",
    ".azure",
    ".config",
    ".gnupg",
    ".docker",
    ".kube",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
)
"""Paths below a home that are hidden even when a writable directory exposes them."""
PROC_KNOBS = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
"""Parts of ``/proc`` made read-only: the kernel's settings, for the whole machine."""
PROC_KEYS = ("/proc/keys", "/proc/key-users")
"""The kernel's lists of keys and their owners: not namespaced, so they name the host's
keys (descriptions, owners) to a root command although ``keyctl`` is refused; made empty."""
_log = logger("swarm.sandbox")
STOP_GRACE = 2.0
"""Seconds to wait, at most, for a killed namespace to be gone."""


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


def _below(path: Path | str, parent: Path | str) -> bool:
    # On strings: pathlib's ``parents`` costs tens of microseconds per test, per launch.
    inner, outer = str(path), str(parent)
    return inner == outer or inner.startswith(outer if outer == "/" else outer + "/")


def _inside(path: str, parent: str) -> bool:
    """Whether ``path`` lies strictly below ``parent`` (both absolute and normal)."""
    return path != parent and _below(path, parent)


@functools.lru_cache(maxsize=4)
def _etc_hidden(found: tuple[str, ...]) -> tuple[str, ...]:
    """Of the entries of ``/etc`` hidden by mode, those ``ROOT_SECRETS`` do not hide already."""
    return tuple(n for n in found if not any(_below(Path(n), Path(r)) for r in ROOT_SECRETS))


def _hide(path: Path | str) -> list[str]:
    """Arguments making ``path`` empty and unwritable (nothing when it does not exist)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return []
    if stat.S_ISDIR(mode):
        return ["--tmpfs", str(path), "--remount-ro", str(path)]
    return ["--ro-bind", "/dev/null", str(path)]


def bwrap_arguments(confinement: Confinement, *, home: Path) -> list[str]:
    """bubblewrap's options (everything before ``--`` and the command) confining a
    command by ``confinement``, for a user whose home is ``home``."""
    args = [
        # Run by root, bubblewrap keeps the capabilities: CAP_SYS_ADMIN would remount /
        # read-write. Nobody inside gets any.
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]
    if confinement.network == "none":
        args.append("--unshare-net")
    confined = confinement.read != "host"
    args += _system_view() if confined else ["--ro-bind", "/", "/"]
    args += ["--dev", "/dev", "--proc", "/proc"]
    for knob in _proc_knobs():
        args += ["--ro-bind-try", knob, knob]
    for listing in PROC_KEYS:
        args += ["--ro-bind-try", "/dev/null", listing]
    if os.geteuid() == 0:
        for name in ROOT_SECRETS:
            args += _hide(_real(name))
    if confined:
        # Found by mode: root would read them whatever the mode says.
        for name in _etc_hidden(etc_secrets()):
            args += _hide(Path(name))
    size = _size(confinement.tmpfs_size)
    for private in PRIVATE_DIRS:
        args += [*size, "--tmpfs", private]
    args += [*size, "--tmpfs", "/run"]
    if confinement.network == "host":
        # /etc/resolv.conf often points into /run: DNS needs it back.
        resolv = _real("/etc/resolv.conf")
        if _below(resolv, Path("/run")) and resolv.is_file():
            args += ["--ro-bind", str(resolv), str(resolv)]
    emptied = [Path(d) for d in HOME_DIRS if Path(d).is_dir()]
    home = _real(home)
    if home != Path("/") and home.is_dir() and home not in emptied:
        emptied.append(home)
    for directory in emptied:
        args += [*size, "--tmpfs", str(directory)]
    path_variable = confinement.env.get("PATH", "")
    toolchains, covered = _toolchains(path_variable, home)
    args += toolchains
    extra = () if confinement.read == "host" else confinement.read
    args += _behind_private(
        path_variable,
        emptied,
        (*confinement.readable, *extra),
        everywhere=confined,
        covered=covered,
    )
    writable = [_real(confinement.workspace), *(_real(p) for p in confinement.writable)]
    if Path("/") in writable:
        raise ValueError("a sandbox cannot make '/' writable: choose a workspace directory")
    for directory in writable:
        args += ["--bind", str(directory), str(directory)]
    for directory in writable:
        for secret in (home / name for name in SECRETS):
            if _below(secret, directory):
                args += _hide(secret)
    for path in confinement.readonly:
        args += _readonly(path)
    for path in confinement.hidden:
        real = _real(path)
        if not confined or any(_below(real, d) for d in writable):
            args += _hide(real)
    if confined:
        args += ["--remount-ro", "/"]  # the view's own root: nothing written there
    args += ["--chdir", str(writable[0])]
    return args


BWRAP_COVERS = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus")
"""The parts of ``/proc`` bubblewrap itself makes read-only, each when ``access(W_OK)``
says this process (bubblewrap runs as it) may write it."""


@functools.cache
def _proc_knobs() -> tuple[str, ...]:
    """Of ``PROC_KNOBS``, those to make read-only here: kernel knobs a uid 0 writes
    without any capability (core_pattern runs a program as root outside; sysrq-trigger
    reboots). bubblewrap covers its four only when ``access`` says they are writable,
    which /proc/sys (mode 555, holding writable files) is not; where it covers one, a
    mount of ours on top would only cost the launch a third of a millisecond."""
    return tuple(k for k in PROC_KNOBS if not (k in BWRAP_COVERS and os.access(k, os.W_OK)))


def _size(size: int | None) -> list[str]:
    """The ``--size`` before a ``--tmpfs`` (nothing for the kernel's default)."""
    return [] if size is None else ["--size", str(size)]


def _readonly(path: Path) -> list[str]:
    """Arguments binding ``path`` (a file or directory) read-only onto itself, when it
    exists; a path missing at launch is made unwritable where it would appear (an empty
    read-only directory over it cannot be, as its parent may be missing too)."""
    real = _real(path)
    if real.exists():
        return ["--ro-bind", str(real), str(real)]
    return []


def _system_view() -> list[str]:
    """Arguments making the read-only view of the machine when reads are confined: the
    program and library directories (a symbolic link such as ``/bin -> usr/bin`` made
    as one), ``/etc`` and what ``SYS_VISIBLE`` names of ``/sys``. Everything else
    (``/opt``, ``/srv``, ``/var``, ``/mnt``, ``/media``, other projects) is absent.
    (Each mount costs the launch time: ``/sys`` whole was a dozen, its cgroup file
    systems.)"""
    args: list[str] = []
    for root in (*SYSTEM_ROOTS, "/etc", *SYS_VISIBLE):
        if os.path.islink(root):
            args += ["--symlink", os.readlink(root), root]
        elif os.path.isdir(root):
            args += ["--ro-bind", root, root]
    return args


def _behind_private(
    path_variable: str,
    emptied: list[Path],
    readable: tuple[Path, ...] = (),
    *,
    everywhere: bool = False,
    covered: tuple[str, ...] = (),
) -> list[str]:
    """Arguments binding back, read-only, what the private ``/tmp``, ``/var/tmp``,
    ``/dev/shm`` and ``/run`` would hide but commands need: ``PATH`` directories there,
    swarm's own Python (its virtual environment and the installation it comes from, also
    when that lies in an emptied home), so a checkout and its venv in ``/tmp`` still run,
    and the ``readable`` paths of the confinement. Nothing from a home's well-known
    secrets. With ``everywhere`` (reads confined, so the machine is not bound as a whole)
    these are bound wherever they lie, but for those the system's directories hold. A
    ``PATH`` directory of a virtual environment brings the environment with it. What lies
    in a ``covered`` directory (a toolchain already bound back) is there already.
    Works on strings: this runs at every launch, and pathlib costs milliseconds here."""
    private = (*PRIVATE_DIRS, "/run")
    homes = [str(h) for h in emptied]
    real = os.path.realpath
    pythons = {real(sys.prefix), real(sys.base_prefix)}
    entries = [real(e) for e in path_variable.split(os.pathsep) if os.path.isabs(e)]
    # A virtual environment's bin brings the environment (its pyvenv.cfg, site-packages).
    entries += [
        os.path.dirname(e)
        for e in entries
        if os.path.isfile(os.path.join(os.path.dirname(e), "pyvenv.cfg"))
    ]
    wanted = {real(p) for p in readable}
    args: list[str] = []
    bound: set[str] = set()
    for candidate in [*sorted(pythons), *entries, *sorted(wanted)]:
        is_wanted = candidate in wanted
        if candidate in bound or (not is_wanted and any(_below(candidate, c) for c in covered)):
            continue
        if not (os.path.isdir(candidate) or (is_wanted and os.path.exists(candidate))):
            continue
        in_private = any(_inside(candidate, p) for p in private)
        home = next((h for h in homes if _inside(candidate, h)), None)
        if home is not None and candidate[len(home) :].lstrip("/").split("/")[0] in SECRETS:
            continue
        # A home's toolchains are _toolchains' (with their credentials hidden).
        anywhere = (
            everywhere and home is None and not any(_below(candidate, r) for r in SYSTEM_ROOTS)
        )
        if in_private or anywhere or (home is not None and (candidate in pythons or is_wanted)):
            bound.add(candidate)
            args += ["--ro-bind", candidate, candidate]
    return args


def _toolchains(path_variable: str, home: Path) -> tuple[list[str], tuple[str, ...]]:
    """Arguments binding back, read-only, the toolchains that ``PATH`` finds in the
    home: the whole directory just below it (``~/.pyenv`` for ``~/.pyenv/shims``, since
    its shims run programs from all over it), without the credentials toolchains keep.
    Where that directory holds other secrets (``~/.config``, ``~/.local``), only the
    ``PATH`` directory itself (and ``~/.local/lib`` for ``~/.local/bin``'s scripts).
    With the arguments, the directories they bind."""
    args: list[str] = []
    bound: dict[str, None] = {}
    where = str(home)

    def bind(directory: str) -> None:
        if directory not in bound and os.path.isdir(directory):
            bound[directory] = None
            args.extend(["--ro-bind", os.path.realpath(directory), directory])
            for name in TOOLCHAIN_SECRETS:
                args.extend(_hide(os.path.join(directory, name)))

    for entry in path_variable.split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        found = os.path.normpath(entry)
        if not _inside(found, where):
            continue
        first = found[len(where) :].lstrip("/").split("/")[0]
        root = os.path.join(where, first)
        if first in SECRETS:
            bind(found)
        elif first == ".local":
            bind(found)
            bind(os.path.join(root, "lib"))
        else:
            bind(root)
    return args, tuple(bound)


def _namespace_init(data: bytes) -> tuple[int, str] | None:
    """The host PID of the sandbox's first process and its PID namespace, from what
    bubblewrap wrote to its ``--info-fd`` (``None`` while it has not written all of it:
    it writes the JSON in pieces)."""
    try:
        info = json.loads(data)
        return int(info["child-pid"]), f"pid:[{int(info['pid-namespace'])}]"
    except (ValueError, KeyError, TypeError):
        return None


def _alive_in(pid: int, namespace: str) -> bool:
    """Whether ``pid`` still runs (not a zombie) and is in PID namespace ``namespace`` (so
    a reused PID is never taken for it)."""
    try:
        if os.readlink(f"/proc/{pid}/ns/pid") != namespace:
            return False
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


class _Namespace:
    """The PID namespace of one launch: killing its first process kills all of it."""

    def __init__(self, info_fd: int) -> None:
        self._info_fd = info_fd
        self._init: tuple[int, str] | None = None
        self._data = b""
        self._lock = threading.Lock()

    def found(self) -> tuple[int, str] | None:
        """The namespace's first process (host PID) and the namespace, once bubblewrap
        has said them (``None`` before)."""
        with self._lock:
            if self._init is None:
                with contextlib.suppress(BlockingIOError, OSError):
                    self._data += os.read(self._info_fd, 65536)
                self._init = _namespace_init(self._data)
            return self._init

    def stop(self) -> None:
        """Kill every process of the namespace (nothing when it is already gone)."""
        init = self.found()
        if init is not None and _alive_in(*init):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(init[0], signal.SIGKILL)

    def wait_gone(self) -> None:
        """Kill what is left and return once it is gone (or after ``STOP_GRACE``)."""
        self.stop()
        if self._init is not None:
            _wait_ended(*self._init, timeout=STOP_GRACE)


def _wait_ended(pid: int, namespace: str, *, timeout: float) -> None:
    """Return once ``pid`` (in PID namespace ``namespace``) has ended, and with it, as it
    is the namespace's first process, every process of the namespace; or after
    ``timeout`` seconds. It is not our child: a pidfd says the moment it ends (the
    namespace is checked once the pidfd is open, so it is of this process and not of a
    reuse of its PID); without one (a kernel before 5.3), poll."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        pidfd = None
    if pidfd is not None:
        try:
            if _alive_in(pid, namespace):
                select.select([pidfd], [], [], timeout)
        finally:
            os.close(pidfd)
        return
    deadline, pause = time.monotonic() + timeout, 0.0002
    while _alive_in(pid, namespace) and time.monotonic() < deadline:
        time.sleep(pause)
        pause = min(pause * 2, 0.005)


class _Gate:
    """The pipe the command's gate (``GATE``, on ``block_fd``) reads: ``go`` once its PID
    namespace is capped at ``processes`` (see ``swarm.sandbox.limits``; set from a thread
    of its own), at once without a cap; then end of file when the launch ends or swarm
    dies, however (only swarm holds the other end), and the gate's watcher kills every
    process of the sandbox. When the cap cannot be set, says why once and lets the command
    run with the other limits."""

    def __init__(self, namespace: _Namespace, info_fd: int, processes: int | None) -> None:
        self.block_fd, self._release_fd = os.pipe()
        self._namespace = namespace
        self._info_fd = info_fd
        self._processes = processes
        self._done = threading.Event()
        self._released = False
        self._thread: threading.Thread | None = None
        if processes is None:
            self._release()
        else:
            self._thread = threading.Thread(target=self._run, name="swarm-pid-cap", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        init = None
        while init is None and not self._done.is_set():
            readable, _, _ = select.select([self._info_fd], [], [], 0.05)
            if readable or self._namespace.found() is not None:
                init = self._namespace.found()
        if init is not None and self._processes is not None:
            problem = cap_pid_namespace(init[0], self._processes)
            if problem is not None and problem not in _WARNED:
                _WARNED.add(problem)
                _log.warning("no process limit in the sandbox", why=problem)
        with contextlib.suppress(OSError):
            self._release()

    def _release(self) -> None:
        os.write(self._release_fd, b"go\n")
        self._released = True

    def taken(self) -> bool:
        """Whether the gate read its ``go``, so the command began (``False`` when
        bubblewrap failed in its set-up: the gate never ran, the ``go`` is still in the
        pipe or was never written)."""
        if not self._released:
            return False
        waiting = array.array("i", [0])
        fcntl.ioctl(self.block_fd, termios.FIONREAD, waiting)
        return waiting[0] == 0

    def close(self) -> None:
        """Stop waiting, and release what the launch held (the gate's watcher then ends
        whatever is left in the sandbox)."""
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        os.close(self.block_fd)
        os.close(self._release_fd)


_WARNED: set[str] = set()


@dataclass(frozen=True, slots=True)
class Bubblewrap:
    """The bubblewrap tier, found working (see ``probe_bubblewrap``): ``executable`` is
    the ``bwrap`` program, ``version`` its version, ``home`` the home it empties."""

    executable: str
    version: str
    home: Path

    @property
    def tier(self) -> str:
        """``bubblewrap``."""
        return "bubblewrap"

    @property
    def overlays(self) -> bool:
        """Takes a ``Confinement.overlay`` (see ``swarm.sandbox.overlay``)."""
        return True

    def describe(self, network: Network) -> str:
        """``bubblewrap 0.8.0, network none``."""
        return f"bubblewrap {self.version}, network {network}"

    def launch(
        self, argv: tuple[str, ...], confinement: Confinement
    ) -> AbstractContextManager[Launch]:
        """``bwrap`` around ``argv``; leaving the context makes sure nothing of the
        sandbox still runs."""
        return self._launch(argv, confinement)

    @contextlib.contextmanager
    def _launch(self, argv: tuple[str, ...], confinement: Confinement) -> Iterator[Launch]:
        options = bwrap_arguments(confinement, home=self.home)
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        namespace = _Namespace(read_fd)
        options += ["--info-fd", str(write_fd)]
        fds = [write_fd]
        seccomp = _seccomp_fd(confinement.network)
        if seccomp is not None:
            options += ["--seccomp", str(seccomp)]
            fds.append(seccomp)
        if confinement.proxy is not None:  # the way out to the egress proxy
            argv = confinement.proxy.wrap(argv)
            fds.append(confinement.proxy.fd)
        cap = _Gate(namespace, read_fd, confinement.limits.processes)
        argv = (*gate(cap.block_fd, read_fd, confinement.limits.bash()), *argv)
        front: tuple[str, ...] = ()
        if confinement.overlay is not None:
            front = overlay_argv(_real(confinement.workspace), confinement.overlay)
            options += userns_ids()
        # bubblewrap holds a reader of its own info pipe: were swarm (the only other
        # reader) to die before bubblewrap writes there, the write would kill it by
        # SIGPIPE in the middle of its set-up, and the sandbox's first process would wait
        # for it forever. The gate closes that reader before anything else runs.
        fds += [cap.block_fd, read_fd]
        try:
            yield Launch(
                # No parent-death signal: an outer bwrap killed in the middle of its
                # set-up left the sandbox's first process waiting forever for it; left
                # alive, it finishes the set-up, the gate sees swarm gone, and bwrap exits
                # with the sandbox.
                (*front, self.executable, *options, "--", *argv),
                dict(confinement.env),
                _real(confinement.workspace),
                pass_fds=tuple(fds),
                stop=namespace.stop,
                began=cap.taken,
            )
        finally:
            os.close(write_fd)
            if seccomp is not None:
                os.close(seccomp)
            began = cap.taken()
            cap.close()
            namespace.wait_gone()
            if confinement.overlay is not None and not began:
                with contextlib.suppress(OSError):  # else the next mount says why
                    emptied(confinement.overlay)  # so the launch can be made again
            os.close(read_fd)


@functools.cache
def _seccomp_program(deny_unix: bool) -> bytes | None:
    program = _seccomp.program(os.uname().machine, deny_unix=deny_unix)
    return None if program is None else _seccomp.encode(program)


def _seccomp_fd(network: Network) -> int | None:
    """A descriptor bubblewrap reads the seccomp filter from (``_seccomp``: no keyrings,
    and under network none no unix sockets); ``None`` on a machine it has none for."""
    program = _seccomp_program(network == "none")
    if program is None:
        return None
    fd = os.memfd_create("swarm-seccomp")
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


GATE = ("bash", "--norc", "-p", "-c", "exec {info}<&-; {limits}{body}", "swarm-gate")
"""What runs first in the sandbox (``gate``): it sets the command's resource limits
(``ResourceLimits.bash``), waits for ``go`` (the process cap set), leaves a watcher that
kills every process of the sandbox (``kill -1`` in its PID namespace) once the pipe ends,
then runs the command. The pipe ends when swarm ends the launch or dies, whatever killed
it and whenever: no parent-death signal, no race with the set-up (a gate that reads the
end before ``go`` never runs the command). It first closes bubblewrap's own reader of the
info pipe (``{info}``), which only keeps bubblewrap's set-up from dying of SIGPIPE should
swarm die before it. ``-p``: the gate reads no ``BASH_ENV`` (a file the command's
environment may name, in the workspace) and imports no functions from the environment,
so nothing runs before its limits and its ``go``; the command's own shell still does."""
_GATE_BODY = (
    "read -r -u {fd} _ || exit 125; "
    "{{ read -r -u {fd} _; kill -KILL -1; }} </dev/null >/dev/null 2>&1 & "
    'exec "$@" {fd}<&-'
)


def gate(block_fd: int, info_fd: int, limits: str) -> tuple[str, ...]:
    """The words of ``GATE`` for a launch whose gate reads ``block_fd``, which closes
    ``info_fd`` and sets ``limits`` (a bash line) first; the command follows them."""
    body = _GATE_BODY.format(fd=block_fd)
    return (*GATE[:4], GATE[4].format(info=info_fd, limits=limits, body=body), *GATE[5:])


def ungated(command: tuple[str, ...], fds: tuple[int, ...]) -> tuple[str, ...] | None:
    """``command`` (the words after bubblewrap's ``--``) run at once, without the gate
    on one of ``fds``, but still with the gate's limits; ``None`` when it has no such
    gate."""
    if command[:4] != GATE[:4] or len(command) < len(GATE) or command[5] != GATE[5]:
        return None
    script = command[4]
    for block in fds:
        for info in fds:
            head, body = f"exec {info}<&-; ", _GATE_BODY.format(fd=block)
            if script.startswith(head) and script.endswith(body):
                limits = script[len(head) : len(script) - len(body)]
                rest = command[len(GATE) :]
                return (*GATE[:4], f'{limits}exec "$@"', "swarm-limits", *rest)
    return None


def _minimal_env() -> dict[str, str]:
    return {"PATH": os.defpath, "LANG": "C.UTF-8"}


@functools.cache
def _probe(executable: str) -> Bubblewrap | str:
    found = shutil.which(executable)
    if found is None:
        return f"'{executable}' is not installed"
    check = [found, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    check += ["--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session"]
    check += ["--cap-drop", "ALL"]
    try:
        ran = subprocess.run(
            [*check, "--", "true"], env=_minimal_env(), capture_output=True, timeout=20
        )
        version = subprocess.run(
            [found, "--version"], env=_minimal_env(), capture_output=True, timeout=20
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"'{found}' cannot run: {exc}"
    if ran.returncode != 0:
        said = ran.stderr.decode(errors="replace").strip().splitlines()
        why = said[-1] if said else f"exit code {ran.returncode}"
        return f"'{found}' does not work here ({why}); user namespaces may be disabled"
    words = version.stdout.decode(errors="replace").split()
    return Bubblewrap(found, words[-1] if words else "(unknown version)", Path.home())


def probe_bubblewrap(executable: str = "bwrap") -> Bubblewrap:
    """The bubblewrap tier, once ``executable`` (a name on ``PATH`` or a path) has been
    seen to start a confined ``true``; checked once per process and executable, for the
    home of the moment (``HOME``).

    Raises ``SandboxUnavailable`` saying why when bubblewrap is missing or does not work.
    """
    found = _probe(executable)
    if isinstance(found, str):
        raise SandboxUnavailable(found)
    # The home is read now, not when first probed: it is the one commands must not see.
    return dataclasses.replace(found, home=Path.home())
