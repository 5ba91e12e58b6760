"""Both Linux tiers: no kernel state is shared with the host beyond the filesystem. The
kernel keyrings (not namespaced: bubblewrap run as root and Landlock share root's) cannot
be read or written from a command, and under network none no unix socket file can be
connected to, on the host or in the workspace (``socketpair`` still works). Checked by
effect: the key's bytes in what the model reads, the key on the host, the connection at
the listener."""

from __future__ import annotations

import ctypes
import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swarm import SandboxSettings
from swarm.sandbox import _seccomp
from swarm.toolbox import make_toolbox

from .conftest import run, text, tier_finder

TIERS = ["bubblewrap", "landlock"]
pytestmark = pytest.mark.anyio

_NR = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}  # add_key, request_key, keyctl
KEY_SPEC_USER_KEYRING = -4
KEYCTL_READ = 11
KEYCTL_INVALIDATE = 21

# Run inside the sandbox: find the key by its description and print what it holds, or
# the errors; then try to add one to the user keyring.
PROBE = r"""
import ctypes, os, sys
add_key, request_key, keyctl = {nr}
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
key = libc.syscall(request_key, b"user", sys.argv[1].encode(), None, 0)
print("find", key, os.strerror(ctypes.get_errno()))
if key > 0:
    buf = ctypes.create_string_buffer(256)
    n = libc.syscall(keyctl, {read}, ctypes.c_long(key), buf, 256)
    print("read", n, buf.value.decode(errors="replace"))
made = libc.syscall(add_key, b"user", sys.argv[2].encode(), b"planted", 7, ctypes.c_int({user}))
print("add", made, os.strerror(ctypes.get_errno()))
"""


def _libc() -> Any:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _numbers() -> tuple[int, int, int]:
    machine = os.uname().machine
    if machine not in _NR:
        pytest.skip(f"no keyring call numbers known for {machine}")
    return _NR[machine]


def _find_key(description: str) -> int:
    """The serial of the ``user`` key ``description`` this process can find (<= 0: none)."""
    _add, request_key, _keyctl = _numbers()
    return int(_libc().syscall(request_key, b"user", description.encode(), None, 0))


@pytest.fixture
def host_key() -> Iterator[tuple[str, str]]:
    """A key in this (the host's) user keyring: its description and its secret."""
    add_key, _request, keyctl = _numbers()
    libc = _libc()
    description, secret = f"swarm-test-{uuid.uuid4().hex[:8]}", f"key-{uuid.uuid4().hex}"
    serial = libc.syscall(
        add_key, b"user", description.encode(), secret.encode(), len(secret), KEY_SPEC_USER_KEYRING
    )
    if serial <= 0:
        errno = ctypes.get_errno()
        if os.environ.get("CI"):
            raise AssertionError(f"cannot add a key here: {os.strerror(errno)}")
        pytest.skip(f"the kernel keyring is not usable here: {os.strerror(errno)}")
    try:
        yield description, secret
    finally:
        libc.syscall(keyctl, KEYCTL_INVALIDATE, ctypes.c_long(serial))


def shell_in(tier: str, workspace: Path, network: str = "none") -> Any:
    find = tier_finder(tier)
    settings = SandboxSettings(mode="required", network=network)  # type: ignore[arg-type]
    return make_toolbox(workspace, sandbox=settings, find=find)["shell"]


@pytest.mark.parametrize("network", ["none", "host"])
@pytest.mark.parametrize("tier", TIERS)
async def test_keyring_neither_readable_nor_writable(
    tier: str, network: str, ws: Path, host_key: tuple[str, str]
) -> None:
    description, secret = host_key
    assert _find_key(description) > 0  # the host finds it: the probe below could
    (ws / "probe.py").write_text(
        PROBE.format(nr=_numbers(), read=KEYCTL_READ, user=KEY_SPEC_USER_KEYRING)
    )
    planted = f"swarm-planted-{uuid.uuid4().hex[:8]}"
    shell = shell_in(tier, ws, network)
    out = text(await run(shell, f"python3 probe.py {description} {planted}"))
    assert "find -1 Operation not permitted" in out
    assert "add -1 Operation not permitted" in out
    assert secret not in out
    assert _find_key(planted) <= 0  # nothing was added to the host's keyring


def _listener(path: Path) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)
    server.setblocking(False)
    return server


def _accepted(server: socket.socket) -> bool:
    """Whether a connection came (the command has ended: it is queued if it did)."""
    try:
        connection, _ = server.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True


CONNECT = (
    "python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX);"
    ' s.connect(sys.argv[1]); s.send(b"hi"); print("connected")\' {path} 2>&1; true'
)


@pytest.mark.parametrize("tier", TIERS)
async def test_no_unix_socket_connects_under_network_none(tier: str, ws: Path) -> None:
    outside_dir = Path(tempfile.mkdtemp(prefix="swarm-sock-", dir="/tmp"))
    servers = [_listener(ws / "dev.sock"), _listener(outside_dir / "host.sock")]
    try:
        shell = shell_in(tier, ws)
        for server, path in zip(servers, ("dev.sock", outside_dir / "host.sock"), strict=True):
            out = text(await run(shell, CONNECT.format(path=path)))
            assert "connected" not in out
            assert not _accepted(server)
    finally:
        for server in servers:
            server.close()
        shutil.rmtree(outside_dir)


async def test_unix_sockets_connect_in_bubblewrap_with_network_host(ws: Path) -> None:
    """The check above can fail: with the network, bubblewrap lets the connection through."""
    server = _listener(ws / "dev.sock")
    try:
        out = text(await run(shell_in("bubblewrap", ws, "host"), CONNECT.format(path="dev.sock")))
        assert "connected" in out
        assert _accepted(server)
    finally:
        server.close()


@pytest.mark.parametrize("tier", TIERS)
async def test_socketpair_still_works(tier: str, ws: Path) -> None:
    command = (
        'python3 -c \'import socket; a, b = socket.socketpair(); a.send(b"pair-ok");'
        " print(b.recv(7).decode())'"
    )
    assert "pair-ok" in text(await run(shell_in(tier, ws), command))


def test_filter_is_built_for_both_architectures() -> None:
    for machine in ("x86_64", "aarch64"):
        with_unix = _seccomp.program(machine, deny_unix=True)
        without = _seccomp.program(machine, deny_unix=False)
        assert with_unix is not None and without is not None
        assert len(_seccomp.encode(with_unix)) == 8 * len(with_unix)
        assert len(with_unix) > len(without)
    assert _seccomp.program("riscv64", deny_unix=True) is None


# Inside a new user namespace a command would hold every capability again: mount a tmpfs
# over a read-only path of its own view, or reach the kernel's namespace code.
USERNS = r"""
import ctypes, os, threading
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000) == 0:  # CLONE_NEWUSER
    print("unshare made")
else:
    print("unshare refused", ctypes.get_errno())
done = []
worker = threading.Thread(target=lambda: done.append(1))
worker.start(); worker.join()
pid = os.fork()
if pid == 0:
    os._exit(7)
print("thread", done, "fork", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


@pytest.mark.parametrize("tier", TIERS)
async def test_no_user_namespace_can_be_made(tier: str, ws: Path) -> None:
    (ws / "userns.py").write_text(USERNS)
    shell = shell_in(tier, ws)
    out = text(await run(shell, "python3 userns.py; unshare -Ur id -u; echo unshare=$?"))
    assert "unshare refused 1" in out, out  # EPERM
    assert "unshare=0" not in out and "\n0\n" not in out, out
    # threads (clone3 refused, the C library falls back to clone) and fork still work
    assert "thread [1] fork 7" in out, out
