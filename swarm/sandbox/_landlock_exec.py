"""The Landlock launcher: confine one command, run it, and leave nothing behind.

Run as a script by ``swarm.sandbox.landlock`` (``python -I -S _landlock_exec.py OPTIONS --
ARGV...``); stdlib and ctypes only, so it starts in tens of milliseconds and never imports
the rest of swarm. The launcher itself stays unconfined and outside the command's Landlock
domain; only the forked child confines itself before it execs the command, so with Landlock
ABI 6 or later the command can neither signal nor ptrace the launcher that cleans up after it.

The child, in this order: enters new namespaces when ``--namespaces`` says it can (plainly
as root, or inside a new user namespace): a mount namespace, private, where read-only paths
inside writable ones get a read-only bind mount and hidden ones an empty read-only tmpfs
(or /dev/null for a file), and for network none an empty network namespace; without
namespaces, network none becomes a Landlock rule set that handles TCP bind/connect with no
rule allowing any. Then it builds the Landlock rule set (read+execute on the read roots,
every right on the write roots, a few character devices, signal and abstract-socket scoping
from ABI 6), sets no-new-privileges, restricts itself, installs a seccomp filter that makes
``socket(AF_UNIX, ...)`` fail (x86_64 and aarch64), drops every capability (a root caller
gets a root-owned command with no capability), and execs the command with the environment
read from ``--env-file``. It dies with the launcher (``PR_SET_PDEATHSIG``).

The parent is a child subreaper: it waits for the command, then SIGKILLs every remaining
descendant (orphans of ``setsid cmd &`` and double forks are reparented to it) and reaps
them, and exits with the command's status (128+N for signal N). SIGTERM, SIGINT and SIGHUP
do the same at once. Exit status 126 with a ``swarm-landlock:`` message means the
confinement could not be set up; the command did not run.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

# Syscall numbers: the same on every architecture (the unified table, from Linux 5.13).
_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

_EXECUTE = 1 << 0
_WRITE_FILE = 1 << 1
_READ_FILE = 1 << 2
_READ_DIR = 1 << 3
_TRUNCATE = 1 << 14
_IOCTL_DEV = 1 << 15
_FILE_ONLY = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
_NET_BIND_TCP = 1 << 0
_NET_CONNECT_TCP = 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
_SCOPE_SIGNAL = 1 << 1

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_SET_SECUREBITS = 28
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
# NOROOT, NO_SETUID_FIXUP and KEEP_CAPS off, each with its lock bit.
_SECUREBITS_LOCKED_NOROOT = 0x01 | 0x02 | 0x04 | 0x08 | 0x20
_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNS = 0x00020000
_CLONE_NEWPID = 0x20000000
_MS_RDONLY = 1
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_NOEXEC = 8
_MS_REMOUNT = 32
_MS_NOATIME = 1024
_MS_NODIRATIME = 2048
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_MS_RELATIME = 1 << 21
_ST_RELATIME = 4096  # statvfs reports relatime with another bit than mount takes

# seccomp: socket(AF_UNIX, ...) fails with EACCES (socketpair still works). Landlock before
# ABI 9 cannot stop connect() to a socket file, and a root command that reached
# /run/systemd/private or docker.sock could start anything outside the sandbox.
_SECCOMP_ARCH = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}  # arch, socket nr
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_EACCES = 0x00050000 | 13
_LD_ABS = 0x20
_JEQ = 0x15
_JSET = 0x45
_RET = 0x06
_X32_BIT = 0x40000000
_AF_UNIX = 1

_SHM = "/dev/shm"

# Only these devices: the rest of /dev (disks, loop devices, /dev/kmsg, the host's /dev/shm;
# a private one with namespaces) stays out of reach, even to a root caller who owns them.
_DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class SetupError(Exception):
    """The confinement could not be set up; the command must not run."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(errno)}")
    return result


def abi_version() -> int:
    """The Landlock ABI version of the running kernel; 0 when Landlock is unavailable."""
    version = _libc.syscall(_SYS_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION)
    return max(int(version), 0)


def fs_rights(abi: int) -> int:
    """Every filesystem right the ABI knows (REFER from 2, TRUNCATE from 3, IOCTL_DEV from 5)."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= 1 << 13
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _read(path: str) -> str:
    with open(path) as file:
        return file.read()


def _write(path: str, text: str) -> None:
    with open(path, "w") as file:
        file.write(text)


def plan_read_rules(roots: list[str], deny: list[str]) -> list[str]:
    """The read roots with every denied path carved out.

    Landlock only adds rights, so a root that holds a denied path is replaced by its
    entries, except the one on the way to the denied path, which is split in turn. The
    directories on the way lose their listing; a denied path is never granted through a
    root above it (a root at or below it, given on purpose, still is).
    """
    planned: list[str] = []
    pending = list(roots)
    while pending:
        root = pending.pop()
        inner = [d for d in deny if _inside(d, root)]
        if not inner:
            planned.append(root)
            continue
        if root in inner or not os.path.isdir(root) or os.path.islink(root):
            continue
        try:
            entries = sorted(os.path.join(root, name) for name in os.listdir(root))
        except OSError:
            continue
        pending.extend(e for e in entries if e not in inner)
    return planned


def _add_rule(ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a root that does not exist here (/lib32, a stale PATH entry) grants nothing
    try:
        if not os.path.isdir(path):
            access &= _FILE_ONLY
        attr = _PathBeneathAttr(access, fd)
        result = _libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(attr), 0)
        _check(int(result), f"landlock_add_rule {path}")
    finally:
        os.close(fd)


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str) -> None:
    def arg(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    result = _libc.mount(arg(source), arg(target), arg(fstype), flags, arg(data))
    _check(result, f"mount {target}")


def _unshare(namespaces: str, network: str) -> None:
    """Enter new namespaces: a mount namespace, and a network one for network none;
    ``user`` makes them inside a new user namespace (no privilege needed)."""
    if namespaces == "none":
        return
    flags = _CLONE_NEWNS | _CLONE_NEWPID | (_CLONE_NEWNET if network == "none" else 0)
    if namespaces == "user":
        uid, gid = os.geteuid(), os.getegid()
        _check(_libc.unshare(flags | _CLONE_NEWUSER), "unshare(CLONE_NEWUSER|NEWNS...)")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    elif namespaces == "plain":
        _check(_libc.unshare(flags), "unshare(CLONE_NEWNS...)")
    else:
        raise SetupError(f"unknown namespaces {namespaces!r}")
    # Nothing mounted here may reach the host's mount table.
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE, "")


def _make_readonly(path: str) -> None:
    """A read-only bind mount of ``path`` onto itself, keeping the flags a user namespace
    may not drop (nosuid, nodev, noexec, atime)."""
    _mount(path, path, None, _MS_BIND | _MS_REC, "")
    current = os.statvfs(path).f_flag
    kept = current & (_MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_NOATIME | _MS_NODIRATIME)
    if current & _ST_RELATIME:
        kept |= _MS_RELATIME
    _mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | kept, "")


def _cover(path: str) -> None:
    """Hide ``path``: an empty read-only tmpfs over a directory, /dev/null over a file."""
    if os.path.isdir(path):
        sealed = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
        _mount("tmpfs", path, "tmpfs", sealed, "size=4k,nr_inodes=2,mode=000")
    else:
        _mount("/dev/null", path, None, _MS_BIND, "")


def _mount_confinement(options: Options) -> list[str]:
    """Read-only and hidden paths inside writable ones, by mounts (Landlock cannot take
    rights away below a granted directory); returns the denied paths left to Landlock."""

    def in_writable(path: str) -> bool:
        return any(_inside(path, root) for root in options.write)

    left = []
    for path in options.deny:
        if not in_writable(path) or not os.path.lexists(path):
            left.append(path)
        elif options.namespaces == "none":
            raise SetupError(
                f"cannot hide {path}: it lies inside a writable directory, and without a "
                "mount namespace Landlock cannot take rights away below a granted one"
            )
        elif os.path.islink(path):
            raise SetupError(f"cannot hide {path}: it is a symbolic link")
        else:
            _cover(path)
    if options.namespaces != "none":
        if os.path.isdir(_SHM) and not os.path.islink(_SHM):
            # A private /dev/shm (POSIX semaphores, multiprocessing), not the host's.
            flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
            _mount("tmpfs", _SHM, "tmpfs", flags, "size=64m,mode=1777")
            options.write.append(_SHM)
        for path in options.readonly:
            if in_writable(path) and os.path.lexists(path) and not os.path.islink(path):
                _make_readonly(path)
    return left


def _restrict(options: Options, abi: int) -> None:
    all_fs = fs_rights(abi)
    attr = _RulesetAttr(all_fs, 0, 0)
    size = 8
    if abi >= 4:
        size = 16
        if options.network == "none" and options.namespaces == "none":
            attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
    if abi >= 6:
        size = 24
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
    if options.network == "none" and options.namespaces == "none" and abi < 4:
        raise SetupError(f"no network namespace, and Landlock ABI {abi} cannot block TCP")
    ruleset = _check(
        int(_libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), size, 0)),
        "landlock_create_ruleset",
    )
    try:
        deny = _mount_confinement(options)
        writes = options.write
        reads = plan_read_rules(options.read, deny)
        for path in reads:
            _add_rule(ruleset, path, _EXECUTE | _READ_FILE | _READ_DIR)
        for path in writes:
            _add_rule(ruleset, path, all_fs)
        for device in _DEVICES:
            _add_rule(ruleset, device, _READ_FILE | _WRITE_FILE | _TRUNCATE | _IOCTL_DEV)
        _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
        _check(int(_libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0)), "landlock_restrict_self")
    finally:
        os.close(ruleset)


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter)))


def unix_socket_filter(machine: str) -> list[tuple[int, int, int, int]] | None:
    """The seccomp program denying ``socket(AF_UNIX, ...)`` on ``machine``; ``None`` for an
    architecture it does not know (the filter is then not installed)."""
    if machine not in _SECCOMP_ARCH:
        return None
    arch, socket_nr = _SECCOMP_ARCH[machine]
    return [
        (_LD_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ, 1, 0, arch),
        (_RET, 0, 0, _RET_KILL_PROCESS),  # another ABI (i386, arm32, ...) bypasses the rest
        (_LD_ABS, 0, 0, 0),  # seccomp_data.nr
        (_JSET, 4, 0, _X32_BIT),  # x32 syscalls: denied
        (_JEQ, 0, 2, socket_nr),
        (_LD_ABS, 0, 0, 16),  # low half of args[0]: the domain (little-endian machines)
        (_JEQ, 1, 0, _AF_UNIX),
        (_RET, 0, 0, _RET_ALLOW),
        (_RET, 0, 0, _RET_EACCES),
    ]


def _deny_unix_sockets() -> None:
    program = unix_socket_filter(os.uname().machine)
    if program is None:
        return
    filters = (_SockFilter * len(program))(*(_SockFilter(*op) for op in program))
    prog = _SockFprog(len(program), filters)
    result = _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0)
    _check(result, "seccomp filter")


def _drop_capabilities(last_cap: int) -> None:
    """No capability survives into the command, even for a root caller."""
    for cap in range(last_cap + 1):
        _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # EPERM without CAP_SETPCAP: none to drop
    _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    if os.geteuid() == 0:
        # Without these an exec by uid 0 would get every capability back.
        _check(_libc.prctl(_PR_SET_SECUREBITS, _SECUREBITS_LOCKED_NOROOT, 0, 0, 0), "securebits")
    header = _CapHeader(0x20080522, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def _confine(options: Options, abi: int, last_cap: int) -> None:
    """Restrict the filesystem, deny unix sockets, drop capabilities, enter the workspace."""
    _restrict(options, abi)
    _deny_unix_sockets()
    _drop_capabilities(last_cap)
    os.chdir(options.workspace)


def _fail(message: str, status: int = 126) -> None:
    print(f"swarm-landlock: {message}", file=sys.stderr, flush=True)
    os._exit(status)


def _exec(argv: list[str], env: dict[str, str]) -> None:
    try:
        os.execvpe(argv[0], argv, env)
    except FileNotFoundError:
        _fail(f"{argv[0]}: command not found", 127)
    except OSError as error:
        _fail(f"{argv[0]}: {error.strerror}")


def exit_code(status: int) -> int:
    """A wait status as a shell reports it: the exit code, or 128+N for signal N."""
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def _child(options: Options, env: dict[str, str], argv: list[str], launcher: int) -> None:
    """In the forked child: enter the namespaces, then confine and exec the command, or,
    with a new PID namespace, start its init and wait for it; never returns."""
    # If the launcher is SIGKILLed, the command dies with it rather than run on unwatched.
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != launcher:
        os._exit(126)
    stops = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
    for sig in stops:
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
    try:
        abi = abi_version()
        if abi < 1:
            raise SetupError("Landlock is not available")
        last_cap = int(_read("/proc/sys/kernel/cap_last_cap"))  # before /proc may hide
        _unshare(options.namespaces, options.network)
        if options.namespaces == "none":
            _confine(options, abi, last_cap)
    except (SetupError, OSError) as error:
        _fail(str(error))
    if options.namespaces == "none":
        _exec(argv, env)
    init = os.fork()
    if init == 0:
        _init(options, env, argv, abi, last_cap)
    os._exit(exit_code(os.waitpid(init, 0)[1]))


def _init(options: Options, env: dict[str, str], argv: list[str], abi: int, cap: int) -> None:
    """PID 1 of the command's PID namespace: a fresh /proc, the confinement, then the
    command as its child; when the command ends, everything else in the namespace is
    killed (the kernel kills it anyway once this process exits). Never returns."""
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    try:
        _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "")
        _confine(options, abi, cap)
    except (SetupError, OSError) as error:
        _fail(str(error))
    command = os.fork()
    if command == 0:
        _exec(argv, env)
    status = 0
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == command:
            break
    try:  # noqa: SIM105 (contextlib would add to every command's start-up)
        os.kill(-1, signal.SIGKILL)  # in a PID namespace: every process in it but this one
    except ProcessLookupError:
        pass  # none left
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    os._exit(exit_code(status))


def _descendants() -> list[int]:
    """Every live process below this one, found from the parent ids in /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = _read(f"/proc/{entry}/stat")
        except OSError:
            continue  # gone meanwhile
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found: list[int] = []
    pending = [os.getpid()]
    while pending:
        for pid in children.get(pending.pop(), []):
            found.append(pid)
            pending.append(pid)
    return found


def _kill_all() -> None:
    """SIGKILL every descendant and reap them all, until none is left."""
    while True:
        remaining = _descendants()
        if not remaining:
            return
        for pid in remaining:
            try:  # noqa: SIM105 (contextlib would add to the start-up of every command)
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass  # already gone
        try:
            os.waitpid(-1, 0)
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass


class _Stopped(Exception):
    def __init__(self, signum: int) -> None:
        self.signum = signum


def _stop(signum: int, _frame: object) -> None:
    raise _Stopped(signum)


class Options:
    """The launcher's options, each given as ``--name=value``."""

    __slots__ = (
        "deny",
        "env_file",
        "namespaces",
        "network",
        "read",
        "readonly",
        "workspace",
        "write",
    )

    def __init__(self) -> None:
        self.workspace = ""
        self.env_file = ""
        self.network = "none"
        self.namespaces = "none"
        self.read: list[str] = []
        self.write: list[str] = []
        self.deny: list[str] = []
        self.readonly: list[str] = []


_CHOICES = {"network": ("none", "host"), "namespaces": ("plain", "user", "none")}


def parse(args: list[str]) -> tuple[Options, list[str]]:
    """``--name=value`` options up to ``--``, then the command. (No argparse: it costs a
    tenth of the launcher's start-up.)"""
    if "--" not in args:
        raise SetupError("usage: _landlock_exec.py --name=value... -- ARGV...")
    split = args.index("--")
    options = Options()
    for arg in args[:split]:
        name, equals, value = arg.removeprefix("--").partition("=")
        name = name.replace("-", "_")
        if not arg.startswith("--") or not equals or name not in Options.__slots__:
            raise SetupError(f"bad option {arg!r}")
        if name in _CHOICES and value not in _CHOICES[name]:
            raise SetupError(f"bad option {arg!r}: choose from {', '.join(_CHOICES[name])}")
        current = getattr(options, name)
        if isinstance(current, list):
            current.append(value)
        else:
            setattr(options, name, value)
    argv = args[split + 1 :]
    if not argv:
        raise SetupError("no command given after --")
    if not options.workspace or not options.env_file:
        raise SetupError("--workspace and --env-file are required")
    return options, argv


def read_env(path: str) -> dict[str, str]:
    """The command's environment from ``path`` (``NAME=value`` entries, each ended by a NUL
    byte: values may hold newlines, never NUL), and remove the file."""
    with open(path, "rb") as file:
        data = file.read()
    os.unlink(path)
    env = {}
    for entry in data.split(b"\0")[:-1]:
        name, equals, value = entry.partition(b"=")
        if not equals:
            raise SetupError(f"bad entry in {path}: {entry[:40]!r}")
        env[os.fsdecode(name)] = os.fsdecode(value)
    return env


def probe() -> dict[str, int]:
    """What this machine allows: the Landlock ABI and which namespaces can be made."""
    found = {"abi": abi_version()}
    for namespaces in ("plain", "user"):
        pid = os.fork()
        if pid == 0:
            try:
                _unshare(namespaces, "none")
            except (SetupError, OSError):
                os._exit(1)
            os._exit(0)
        found[namespaces] = int(os.waitpid(pid, 0)[1] == 0)
    return found


def main(args: list[str]) -> int:
    """Run ``args`` (launcher options, ``--``, the command); return the exit status."""
    if args == ["--probe"]:
        print(" ".join(f"{key}={value}" for key, value in probe().items()))
        return 0
    try:
        options, argv = parse(args)
        env = read_env(options.env_file)
    except (SetupError, OSError, ValueError) as error:
        print(f"swarm-landlock: {error}", file=sys.stderr, flush=True)
        return 126
    stops = {signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
    for sig in stops:
        signal.signal(sig, _stop)
    try:
        _check(_libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "prctl(CHILD_SUBREAPER)")
        # Blocked across the fork so the child never runs this process's handlers.
        signal.pthread_sigmask(signal.SIG_BLOCK, stops)
        launcher = os.getpid()
        pid = os.fork()
        if pid == 0:
            _child(options, env, argv, launcher)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)
        result = exit_code(os.waitpid(pid, 0)[1])
    except _Stopped as stopped:
        result = 128 + stopped.signum
    except SetupError as error:
        print(f"swarm-landlock: {error}", file=sys.stderr, flush=True)
        result = 126
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # cleanup runs to the end once started
    _kill_all()
    return result


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
