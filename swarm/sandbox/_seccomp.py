"""The seccomp filter every sandboxed command runs under, in every tier: what the kernel
shares between the sandbox and the host beyond the filesystem, taken away.

- ``add_key``, ``request_key`` and ``keyctl`` fail with EPERM, always (as in Docker's
  default profile): the kernel's keyrings are not namespaced, so a root command would
  otherwise read and write root's session and user keyrings on the host;
- ``io_uring_setup``, ``io_uring_enter`` and ``io_uring_register`` fail with EPERM, always
  (as in Docker's default profile): io_uring's operations (``IORING_OP_SOCKET``, ...) are
  not system calls, so no rule here would see them;
- with ``deny_unix`` (network none), ``socket(AF_UNIX, ...)`` fails with EACCES, so no
  socket file can be connected to, on the host or in the workspace, and so does a
  datagram ``socketpair(AF_UNIX, SOCK_DGRAM)``, whose ends ``sendto()`` (or ``connect()``)
  any socket file; a stream or seqpacket ``socketpair`` still works: its ends are
  connected to each other and cannot be pointed at a file;
- a new user namespace cannot be made (``unshare`` or ``clone`` with ``CLONE_NEWUSER``
  fail with EPERM; ``clone3``, whose flags a filter cannot read, fails with ENOSYS, and
  the C library falls back to ``clone``), as in Docker's default profile: inside one, a
  command would hold every capability again, and with them the kernel's whole surface of
  mounts and namespaces to attack;
- a system call of another ABI (i386 or x32 on x86_64, arm32 on aarch64) kills the
  process, since the numbers above would not hold for it.

The program is built for x86_64 and aarch64; on another machine there is none (``program``
returns ``None``) and the tiers say so. Stdlib only: the Landlock launcher loads this
module without importing swarm. ``program`` gives the instructions, ``encode`` the bytes
bubblewrap reads from ``--seccomp FD``, ``install`` loads it into the calling process.
"""

from __future__ import annotations

import ctypes
import os
import struct

__all__ = ["Instruction", "encode", "install", "program"]

Instruction = tuple[int, int, int, int]
"""One classic BPF instruction: code, jump if true, jump if false, constant."""

# machine: audit arch, then add_key, request_key, keyctl, socket, socketpair, io_uring_setup,
# unshare, clone, clone3
_SYSCALLS = {
    "x86_64": (0xC000003E, 248, 249, 250, 41, 53, 425, 272, 56, 435),
    "aarch64": (0xC00000B7, 217, 218, 219, 198, 199, 425, 97, 220, 435),
}
_IO_URING_CALLS = 3  # io_uring_setup, io_uring_enter, io_uring_register: consecutive
_LD_ABS = 0x20
_JEQ = 0x15
_JSET = 0x45
_AND = 0x54
_RET = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_EPERM = 1
_EACCES = 13
_ENOSYS = 38
_CLONE_NEWUSER = 0x10000000
_X32_BIT = 0x40000000
_AF_UNIX = 1
_SOCK_DGRAM = 2
_SOCK_TYPE_MASK = 0xF  # the type without SOCK_NONBLOCK and SOCK_CLOEXEC
_OFFSET_NR = 0
_OFFSET_ARCH = 4
_OFFSET_ARG0 = 16  # low half of args[0] (little-endian machines)
_OFFSET_ARG1 = 24  # low half of args[1]
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2

_Step = tuple[int, int, str | None, str | None]  # code, constant, label if true, if false


def program(machine: str, *, deny_unix: bool) -> list[Instruction] | None:
    """The filter for ``machine`` (``os.uname().machine``): keyring calls, new user
    namespaces and io_uring denied (its ``IORING_OP_SOCKET`` makes a socket no
    ``socket()`` rule sees), and with
    ``deny_unix`` unix sockets too: ``socket(AF_UNIX, ...)`` and a datagram
    ``socketpair(AF_UNIX, ...)`` (whose ``sendto()`` and ``connect()`` name any socket
    file); ``None`` for a machine it does not know."""
    if machine not in _SYSCALLS:
        return None
    arch, add_key, request_key, keyctl, socket, socketpair, io_uring, *spawn = _SYSCALLS[machine]
    unshare, clone, clone3 = spawn
    steps: list[tuple[str, _Step]] = [
        ("", (_LD_ABS, _OFFSET_ARCH, None, None)),
        ("", (_JEQ, arch, None, "kill")),
        ("", (_LD_ABS, _OFFSET_NR, None, None)),
        ("", (_JSET, _X32_BIT, "eperm", None)),
    ]
    denied = (add_key, request_key, keyctl, *range(io_uring, io_uring + _IO_URING_CALLS))
    steps += [("", (_JEQ, nr, "eperm", None)) for nr in denied]
    steps += [("", (_JEQ, nr, "namespace", None)) for nr in (unshare, clone)]
    steps += [("", (_JEQ, clone3, "enosys", None))]
    if deny_unix:
        steps += [("", (_JEQ, socket, "socket", None)), ("", (_JEQ, socketpair, "pair", None))]
    steps += [
        ("allow", (_RET, _RET_ALLOW, None, None)),
        ("eperm", (_RET, _RET_ERRNO | _EPERM, None, None)),
        ("kill", (_RET, _RET_KILL_PROCESS, None, None)),  # another ABI: other numbers
        ("enosys", (_RET, _RET_ERRNO | _ENOSYS, None, None)),
        ("namespace", (_LD_ABS, _OFFSET_ARG0, None, None)),
        ("", (_JSET, _CLONE_NEWUSER, "no-namespace", "spawn")),
        ("no-namespace", (_RET, _RET_ERRNO | _EPERM, None, None)),
        ("spawn", (_RET, _RET_ALLOW, None, None)),
    ]
    if deny_unix:
        steps += [
            ("socket", (_LD_ABS, _OFFSET_ARG0, None, None)),
            ("", (_JEQ, _AF_UNIX, "eacces", "pass")),
            ("pair", (_LD_ABS, _OFFSET_ARG0, None, None)),
            ("", (_JEQ, _AF_UNIX, None, "pass")),
            ("", (_LD_ABS, _OFFSET_ARG1, None, None)),
            ("", (_AND, _SOCK_TYPE_MASK, None, None)),
            ("", (_JEQ, _SOCK_DGRAM, "eacces", "pass")),
            ("eacces", (_RET, _RET_ERRNO | _EACCES, None, None)),
            ("pass", (_RET, _RET_ALLOW, None, None)),  # classic BPF only jumps forward
        ]
    where = {label: index for index, (label, _step) in enumerate(steps) if label}

    def jump(index: int, label: str | None) -> int:
        return 0 if label is None else where[label] - index - 1

    return [
        (op, jump(i, yes), jump(i, no), value)
        for i, (_label, (op, value, yes, no)) in enumerate(steps)
    ]


def encode(instructions: list[Instruction]) -> bytes:
    """The program as the kernel's ``struct sock_filter`` array (what bubblewrap's
    ``--seccomp`` reads)."""
    return b"".join(struct.pack("=HBBI", *op) for op in instructions)


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_uint16), ("filter", ctypes.c_void_p))


def install(instructions: list[Instruction]) -> None:
    """Load the program into this process (and so everything it starts); sets
    no-new-privileges. Raises ``OSError`` when the kernel refuses."""
    libc = ctypes.CDLL(None, use_errno=True)
    data = ctypes.create_string_buffer(encode(instructions))
    prog = _SockFprog(len(instructions), ctypes.cast(data, ctypes.c_void_p))
    for args in (
        (_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0),
        (_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0),
    ):
        if libc.prctl(*args) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"seccomp filter: {os.strerror(errno)}")
