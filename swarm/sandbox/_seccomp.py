"""The seccomp filter every sandboxed command runs under, in every tier: what the kernel
shares between the sandbox and the host beyond the filesystem, taken away.

- ``add_key``, ``request_key`` and ``keyctl`` fail with EPERM, always (as in Docker's
  default profile): the kernel's keyrings are not namespaced, so a root command would
  otherwise read and write root's session and user keyrings on the host;
- with ``deny_unix`` (network none), ``socket(AF_UNIX, ...)`` fails with EACCES, so no
  socket file can be connected to, on the host or in the workspace (``socketpair`` still
  works: it makes a connected pair and names no file);
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

# machine: audit arch, then the numbers of the calls the filter looks at
_SYSCALLS = {
    "x86_64": {
        "arch": 0xC000003E,
        "add_key": 248,
        "request_key": 249,
        "keyctl": 250,
        "socket": 41,
        "unshare": 272,
        "clone": 56,
        "clone3": 435,
    },
    "aarch64": {
        "arch": 0xC00000B7,
        "add_key": 217,
        "request_key": 218,
        "keyctl": 219,
        "socket": 198,
        "unshare": 97,
        "clone": 220,
        "clone3": 435,
    },
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
_ENOSYS = 38
_X32_BIT = 0x40000000
_AF_UNIX = 1
_CLONE_NEWUSER = 0x10000000
_OFFSET_NR = 0
_OFFSET_ARCH = 4
_OFFSET_ARG0 = 16  # low half of args[0] (little-endian machines)
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


def program(machine: str, *, deny_unix: bool) -> list[Instruction] | None:
    """The filter for ``machine`` (``os.uname().machine``): keyring calls and new user
    namespaces denied, and with ``deny_unix`` unix sockets too; ``None`` for a machine it
    does not know."""
    if machine not in _SYSCALLS:
        return None
    numbers = _SYSCALLS[machine]
    # What a call leads to: a verdict, or a test of its first argument then a verdict.
    eperm = [(_RET, 0, 0, _RET_ERRNO | _EPERM)]
    enosys = [(_RET, 0, 0, _RET_ERRNO | _ENOSYS)]
    new_user = [(_LD_ABS, 0, 0, _OFFSET_ARG0), (_JSET, 1, 0, _CLONE_NEWUSER)]
    new_user += [(_RET, 0, 0, _RET_ALLOW), *eperm]
    unix = [(_LD_ABS, 0, 0, _OFFSET_ARG0), (_JEQ, 1, 0, _AF_UNIX)]
    unix += [(_RET, 0, 0, _RET_ALLOW), (_RET, 0, 0, _RET_ERRNO | _EACCES)]
    cases: list[tuple[int, int, list[Instruction]]] = [(_JSET, _X32_BIT, eperm)]
    cases += [(_JEQ, numbers[name], eperm) for name in ("add_key", "request_key", "keyctl")]
    cases += [(_JEQ, numbers[name], new_user) for name in ("unshare", "clone")]
    cases.append((_JEQ, numbers["clone3"], enosys))
    if deny_unix:
        cases.append((_JEQ, numbers["socket"], unix))
    code: list[Instruction] = [
        (_LD_ABS, 0, 0, _OFFSET_ARCH),
        (_JEQ, 1, 0, numbers["arch"]),
        (_RET, 0, 0, _RET_KILL_PROCESS),  # another ABI would bypass the numbers below
        (_LD_ABS, 0, 0, _OFFSET_NR),
    ]
    # The tests, then ``allow``, then each case's block in order: a test jumps over the
    # tests after it, the allow, and the blocks before its own.
    blocks = [block for _op, _value, block in cases]
    for index, (op, value, _block) in enumerate(cases):
        jump = len(cases) - index - 1 + 1 + sum(len(b) for b in blocks[:index])
        code.append((op, jump, 0, value))
    code.append((_RET, 0, 0, _RET_ALLOW))
    for block in blocks:
        code += block
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
