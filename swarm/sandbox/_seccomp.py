"""The seccomp filter every sandboxed command runs under, in every tier: what the kernel
shares between the sandbox and the host beyond the filesystem, taken away.

- ``add_key``, ``request_key`` and ``keyctl`` fail with EPERM, always (as in Docker's
  default profile): the kernel's keyrings are not namespaced, so a root command would
  otherwise read and write root's session and user keyrings on the host;
- with ``deny_unix`` (network none), ``socket(AF_UNIX, ...)`` fails with EACCES, so no
  socket file can be connected to, on the host or in the workspace (``socketpair`` still
  works: it makes a connected pair and names no file);
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

# machine: audit arch, then add_key, request_key, keyctl, socket
_SYSCALLS = {
    "x86_64": (0xC000003E, 248, 249, 250, 41),
    "aarch64": (0xC00000B7, 217, 218, 219, 198),
}
_LD_ABS = 0x20
_JEQ = 0x15
_JSET = 0x45
_RET = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_EPERM = 1
_EACCES = 13
_X32_BIT = 0x40000000
_AF_UNIX = 1
_OFFSET_NR = 0
_OFFSET_ARCH = 4
_OFFSET_ARG0 = 16  # low half of args[0] (little-endian machines)
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


def program(machine: str, *, deny_unix: bool) -> list[Instruction] | None:
    """The filter for ``machine`` (``os.uname().machine``): keyring calls denied, and with
    ``deny_unix`` unix sockets too; ``None`` for a machine it does not know."""
    if machine not in _SYSCALLS:
        return None
    arch, add_key, request_key, keyctl, socket = _SYSCALLS[machine]
    # The tail every jump lands in, from the end: allow, EPERM, EACCES.
    code: list[Instruction] = [
        (_LD_ABS, 0, 0, _OFFSET_ARCH),
        (_JEQ, 1, 0, arch),
        (_RET, 0, 0, _RET_KILL_PROCESS),  # another ABI would bypass the numbers below
        (_LD_ABS, 0, 0, _OFFSET_NR),
    ]
    checks: list[tuple[int, int, str]] = [(_JSET, _X32_BIT, "eperm")]
    checks += [(_JEQ, nr, "eperm") for nr in (add_key, request_key, keyctl)]
    if deny_unix:
        checks.append((_JEQ, socket, "socket"))
    # Layout after the checks: [ret allow] [ret eperm] then, with deny_unix, [ld arg0]
    # [jeq AF_UNIX] [ret allow] [ret eacces].
    after = len(checks)
    for index, (op, value, target) in enumerate(checks):
        left = after - index - 1  # instructions between this one and the tail
        jump = left + 1 if target == "eperm" else left + 2
        code.append((op, jump, 0, value))
    code.append((_RET, 0, 0, _RET_ALLOW))
    code.append((_RET, 0, 0, _RET_ERRNO | _EPERM))
    if deny_unix:
        code.append((_LD_ABS, 0, 0, _OFFSET_ARG0))
        code.append((_JEQ, 1, 0, _AF_UNIX))
        code.append((_RET, 0, 0, _RET_ALLOW))
        code.append((_RET, 0, 0, _RET_ERRNO | _EACCES))
    return code


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
