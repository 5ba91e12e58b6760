"""The kernel calls that confine a process, for the Landlock launcher (stdlib and ctypes
only: the launcher runs it without importing swarm).

Landlock (rule sets for the filesystem, TCP, signals and abstract sockets; read roots with
denied paths carved out), namespaces and mounts (``unshare``; every mount but the writable
directories read-only; read-only bind mounts and covering tmpfs for paths inside writable
ones; a fresh /proc; a private /dev/shm), the seccomp filter of ``_seccomp`` (no
keyrings, no ``socket(AF_UNIX, ...)``), and dropping every capability. Each raises
``SetupError`` when the kernel refuses, so the command never runs half-confined.
"""

from __future__ import annotations

import ctypes
import os
import struct

if __package__:
    from swarm.sandbox import _seccomp
else:  # run by path by the launcher, beside it
    import _seccomp  # type: ignore[import-not-found, no-redef]

# Syscall numbers: the same on every architecture (the unified table, from Linux 5.13).
_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_RULE_NET_PORT = 2

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
_PR_CAPBSET_DROP = 24
_PR_SET_SECUREBITS = 28
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
# NOROOT, NO_SETUID_FIXUP and KEEP_CAPS off, each with its lock bit.
_SECUREBITS_LOCKED_NOROOT = 0x01 | 0x02 | 0x04 | 0x08 | 0x20
_CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
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


class _NetPortAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64))


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def check(result: int, what: str) -> int:
    """``result``, or ``SetupError`` naming ``what`` and the errno when it is negative."""
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
    # Each root with the denied paths that may lie in it: an entry's are among its
    # directory's (checking all of them at each of the hundreds of entries of a carved
    # /etc cost the launch milliseconds).
    pending = [(root, list(dict.fromkeys(deny))) for root in roots]
    while pending:
        root, near = pending.pop()
        inner = [d for d in near if _inside(d, root)]
        if not inner:
            planned.append(root)
            continue
        if root in inner or not os.path.isdir(root) or os.path.islink(root):
            continue
        try:
            entries = sorted(os.path.join(root, name) for name in os.listdir(root))
        except OSError:
            continue
        pending.extend((e, inner) for e in entries if e not in inner)
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
        check(int(result), f"landlock_add_rule {path}")
    finally:
        os.close(fd)


def prctl(option: int, value: int) -> int:
    """``prctl(option, value)``; the result, negative on failure."""
    return int(_libc.prctl(option, value, 0, 0, 0))


def read_text(path: str) -> str:
    """The text of the file at ``path``."""
    with open(path) as file:
        return file.read()


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str) -> None:
    def arg(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    result = _libc.mount(arg(source), arg(target), arg(fstype), flags, arg(data))
    check(result, f"mount {target}")


def unshare(namespaces: str, network: str) -> None:
    """Enter new namespaces: a mount namespace, and a network one for network none;
    ``user`` makes them inside a new user namespace (no privilege needed)."""
    if namespaces == "none":
        return
    flags = _CLONE_NEWNS | _CLONE_NEWPID | (_CLONE_NEWNET if network == "none" else 0)
    if namespaces == "user":
        uid, gid = os.geteuid(), os.getegid()
        check(_libc.unshare(flags | _CLONE_NEWUSER), "unshare(CLONE_NEWUSER|NEWNS...)")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    elif namespaces == "plain":
        check(_libc.unshare(flags), "unshare(CLONE_NEWNS...)")
    else:
        raise SetupError(f"unknown namespaces {namespaces!r}")
    # Nothing mounted here may reach the host's mount table.
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE, "")


def loopback_up() -> None:
    """Bring up ``lo`` in this (new) network namespace, while capabilities last."""
    # Imported here: only an allow-list needs them, and every launch paid their import.
    import fcntl
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(sock, _SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | _IFF_UP))


def _remount_readonly(path: str) -> None:
    """Make the mount at ``path`` read-only, keeping the flags a user namespace may not
    drop (nosuid, nodev, noexec, atime). Always ``MS_BIND``: without it the remount would
    make the filesystem itself read-only, for the host too."""
    current = os.statvfs(path).f_flag
    kept = current & (_MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_NOATIME | _MS_NODIRATIME)
    if current & _ST_RELATIME:
        kept |= _MS_RELATIME
    _mount(None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | kept, "")


def _make_readonly(path: str) -> None:
    """A read-only bind mount of ``path`` onto itself."""
    _mount(path, path, None, _MS_BIND | _MS_REC, "")
    _remount_readonly(path)


def _cover(path: str) -> None:
    """Hide ``path``: an empty read-only tmpfs over a directory, /dev/null over a file.
    A path gone since it was listed (a lock file of ``/etc`` removed at that moment) has
    nothing left to hide: it is passed over, not a failed launch."""
    if os.path.isdir(path):
        sealed = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
        _mount("tmpfs", path, "tmpfs", sealed, "size=4k,nr_inodes=2,mode=000")
        return
    try:
        _mount("/dev/null", path, None, _MS_BIND, "")
    except SetupError:
        if os.path.lexists(path):
            raise


def _unescape(field: bytes) -> str:
    """A path field of /proc/self/mountinfo, whose space, tab, newline and backslash are
    written as octal escapes (``\\040``)."""
    parts = field.split(b"\\")
    out = parts[0]
    for part in parts[1:]:
        out += bytes([int(part[:3], 8)]) + part[3:]
    return os.fsdecode(out)


def mount_points() -> list[str]:
    """Every mount point of this mount namespace, parents first, each once."""
    with open("/proc/self/mountinfo", "rb") as file:
        lines = file.read().splitlines()
    return list(dict.fromkeys(_unescape(line.split(b" ")[4]) for line in lines))


def _writable(path: str) -> bool | None:
    """Whether the mount seen at ``path`` is writable; ``None`` when ``path`` cannot be
    reached."""
    try:
        return not os.statvfs(path).f_flag & os.ST_RDONLY
    except OSError:
        return None


def seal_mounts(write: list[str]) -> None:
    """Make every mount read-only except those at or below ``write``: Landlock has no right
    for a file's mode, owner, times or extended attributes, and a read-only mount refuses
    them all. A mount point that cannot be reached (shadowed by a later mount, or below a
    directory this process cannot search, so the command cannot either) is passed over;
    ``SetupError`` names every reachable mount left writable."""
    points = [p for p in mount_points() if not any(_inside(p, root) for root in write)]
    errors = {}
    for point in points:
        if _writable(point):
            try:
                _remount_readonly(point)
            except (SetupError, OSError) as error:
                errors[point] = str(error).removeprefix(f"mount {point}: ")
    # Checked once all are done: a path that is not a mount root of its own (its mount
    # shadowed) is read-only once the mount it now lies on is.
    left = [f"{p} ({errors.get(p, 'still writable')})" for p in points if _writable(p)]
    if left:
        raise SetupError(f"cannot make these mounts read-only: {', '.join(left)}")


def mount_confinement(
    namespaces: str,
    *,
    write: list[str],
    deny: list[str],
    readonly: list[str],
    shm_size: str = "",
    read: list[str] | None = None,
) -> tuple[list[str], list[str]]:
    """With a mount namespace: the writable directories bound onto themselves, read-only
    and hidden paths inside them by mounts (Landlock cannot take rights away below a
    granted directory), every other mount read-only (``seal_mounts``), and a private
    /dev/shm of ``shm_size`` bytes (the kernel's default, half the memory, when empty).
    A denied path inside a ``read`` root is hidden by a mount too where that hides
    nothing granted (no root lies in it): carving it out of the root instead took a
    Landlock rule for every other entry of the root (the secrets of /etc: a hundred and
    fifty rules, milliseconds at each launch). Returns the denied paths left to Landlock
    and the directories to add to the writable ones."""
    roots = [*(read or []), *write, *_DEVICES, _SHM]

    def in_writable(path: str) -> bool:
        return any(_inside(path, root) for root in write)

    def coverable(path: str) -> bool:
        return (
            namespaces != "none"
            and any(_inside(path, root) for root in read or [])
            and not any(_inside(root, path) for root in roots)
            and not os.path.islink(path)
        )

    left: list[str] = []
    cover: list[str] = []
    for path in deny:
        if not os.path.lexists(path):
            # Nothing to hide (as bubblewrap does): carving a root for it would still
            # take a rule for each of the root's other entries.
            continue
        if not in_writable(path):
            (cover if coverable(path) else left).append(path)
        elif namespaces == "none":
            raise SetupError(
                f"cannot hide {path}: it lies inside a writable directory, and without a "
                "mount namespace Landlock cannot take rights away below a granted one"
            )
        elif os.path.islink(path):
            raise SetupError(f"cannot hide {path}: it is a symbolic link")
        else:
            cover.append(path)
    if namespaces == "none":
        return left, []
    # Each writable directory becomes a mount of its own, so sealing the mount it lies on
    # leaves it writable; outer ones first, so an inner one is bound onto the outer copy.
    for root in sorted(write, key=len):
        if os.path.isdir(root) and not os.path.islink(root):
            _mount(root, root, None, _MS_BIND | _MS_REC, "")
    for path in cover:
        _cover(path)
    for path in readonly:
        if in_writable(path) and os.path.lexists(path) and not os.path.islink(path):
            _make_readonly(path)
    seal_mounts(write)
    if not os.path.isdir(_SHM) or os.path.islink(_SHM):
        return left, []
    # A private /dev/shm (POSIX semaphores, multiprocessing), not the host's.
    size = f"size={int(shm_size)}," if shm_size else ""
    _mount("tmpfs", _SHM, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, f"{size}mode=1777")
    return left, [_SHM]


def mount_proc() -> None:
    """A fresh /proc for the PID namespace this process is the init of, with the
    kernel's key lists (not namespaced: they name the host's keys) made empty."""
    _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "")
    for listing in ("/proc/keys", "/proc/key-users"):
        if os.path.exists(listing):
            _mount("/dev/null", listing, None, _MS_BIND, "")


def restrict(
    abi: int,
    *,
    read: list[str],
    write: list[str],
    deny: list[str],
    block_tcp: bool,
    connect_ports: tuple[int, ...] = (),
) -> None:
    """Restrict this process and its future children with Landlock: read+execute on
    ``read`` (less what ``deny`` names), every right on ``write``, the harmless devices;
    with ``block_tcp``, no TCP bind or connect (ABI 4 or later) but a connect to
    ``connect_ports`` (the egress proxy's); signal and abstract socket scoping from ABI
    6. Sets no-new-privileges."""
    all_fs = fs_rights(abi)
    attr = _RulesetAttr(all_fs, 0, 0)
    size = 8
    if block_tcp and abi < 4:
        raise SetupError(f"no network namespace, and Landlock ABI {abi} cannot block TCP")
    if abi >= 4:
        size = 16
        if block_tcp:
            attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
    if abi >= 6:
        size = 24
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
    ruleset = check(
        int(_libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), size, 0)),
        "landlock_create_ruleset",
    )
    try:
        for path in plan_read_rules(read, deny):
            _add_rule(ruleset, path, _EXECUTE | _READ_FILE | _READ_DIR)
        for path in write:
            _add_rule(ruleset, path, all_fs)
        for device in _DEVICES:
            _add_rule(ruleset, device, _READ_FILE | _WRITE_FILE | _TRUNCATE | _IOCTL_DEV)
        for port in connect_ports if block_tcp else ():
            rule = _NetPortAttr(_NET_CONNECT_TCP, port)
            result = _libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_NET_PORT, ctypes.byref(rule), 0)
            check(int(result), f"landlock_add_rule port {port}")
        check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
        check(int(_libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0)), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def deny_shared_kernel_state() -> None:
    """The seccomp filter (``_seccomp``): no keyring calls, no ``socket(AF_UNIX, ...)``.
    Landlock up to ABI 8 cannot stop a ``connect()`` to a socket file, and a root command
    that reached ``/run/systemd/private`` or ``docker.sock`` could start anything outside
    the sandbox, whatever the network."""
    program = _seccomp.program(os.uname().machine, deny_unix=True)
    if program is None:
        return
    try:
        _seccomp.install(program)
    except OSError as error:
        raise SetupError(str(error)) from None


def drop_capabilities(last_cap: int) -> None:
    """No capability survives into the command, even for a root caller."""
    for cap in range(last_cap + 1):
        _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # EPERM without CAP_SETPCAP: none to drop
    _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    if os.geteuid() == 0:
        # Without these an exec by uid 0 would get every capability back.
        check(_libc.prctl(_PR_SET_SECUREBITS, _SECUREBITS_LOCKED_NOROOT, 0, 0, 0), "securebits")
    header = _CapHeader(0x20080522, 0)
    data = (_CapData * 2)()
    check(_libc.capset(ctypes.byref(header), data), "capset")
