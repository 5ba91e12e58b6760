"""bubblewrap: with ``network: none`` nothing leaves the sandbox (TCP, UDP); with
``host`` the machine's network is there. Listeners on 127.0.0.1, started by the test."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swarm import Agent, MemoryContextStore, SandboxSettings, Tool, ToolResult
from swarm.guards import Policy, apply_policy
from swarm.sandbox import Bubblewrap, Network
from swarm.testing import StubTransport, make_text_response, make_tool_uses_response
from swarm.toolbox import make_toolbox

from .conftest import run, text


@pytest.fixture
def tcp() -> Iterator[socket.socket]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    yield listener
    listener.close()


@pytest.fixture
def udp() -> Iterator[socket.socket]:
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    receiver.setblocking(False)
    yield receiver
    receiver.close()


def shell_with(network: Network, ws: Path) -> Tool[Any]:
    return make_toolbox(ws, sandbox=SandboxSettings(mode="required", network=network))["shell"]


def received(tcp: socket.socket, udp: socket.socket) -> tuple[bool, bytes]:
    """What reached the listeners (the command has ended: a connection would already sit
    in the backlog, a datagram in the buffer)."""
    try:
        connection, _ = tcp.accept()
        connection.close()
        connected = True
    except BlockingIOError:
        connected = False
    try:
        datagram = udp.recv(100)
    except BlockingIOError:
        datagram = b""
    return connected, datagram


def sends(tcp: socket.socket, udp: socket.socket) -> str:
    tcp_port, udp_port = tcp.getsockname()[1], udp.getsockname()[1]
    python = (
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM);"
        f" s.sendto(b'python', ('127.0.0.1', {udp_port}))"
    )
    return (
        f"echo hi > /dev/tcp/127.0.0.1/{tcp_port}; echo bash > /dev/udp/127.0.0.1/{udp_port};"
        f' python3 -c "{python}"; echo done'
    )


@pytest.mark.anyio
async def test_no_network_reaches_no_listener(
    bwrap: Bubblewrap, ws: Path, tcp: socket.socket, udp: socket.socket
) -> None:
    out = await run(shell_with("none", ws), sends(tcp, udp) + "; echo ---; cat /proc/net/dev")
    assert received(tcp, udp) == (False, b"")
    assert "Network is unreachable" in text(out) or "Connection refused" in text(out)
    table = text(out).split("---\n")[1].splitlines()[2:-1]
    interfaces = [line.split(":")[0].strip() for line in table]
    assert interfaces == ["lo"]


@pytest.mark.anyio
async def test_no_network_means_no_name_resolution(bwrap: Bubblewrap, ws: Path) -> None:
    out = await run(
        shell_with("none", ws),
        "python3 -c \"import socket; socket.getaddrinfo('swarm-sandbox-test.invalid', 80)\"",
    )
    # No resolver reachable ("Temporary failure", -3), not an answer that the name does
    # not exist ("Name or service not known", -2), which is what the machine says.
    assert "[Errno -3] Temporary failure in name resolution" in text(out)


@pytest.mark.anyio
async def test_host_network_reaches_the_listeners(
    bwrap: Bubblewrap, ws: Path, tcp: socket.socket, udp: socket.socket
) -> None:
    out = await run(shell_with("host", ws), sends(tcp, udp))
    assert text(out).endswith("done\n[exit code 0]")
    assert received(tcp, udp) == (True, b"bash\n")
    assert udp.recv(100) == b"python"


@pytest.mark.anyio
async def test_the_policy_of_the_calling_role_decides_the_network(
    bwrap: Bubblewrap, ws: Path, tcp: socket.socket, udp: socket.socket
) -> None:
    # The toolbox says no network; the policy guarding this role's tools says host.
    toolbox = make_toolbox(ws, sandbox=SandboxSettings(mode="required", network="none"))
    policy = Policy.from_mapping({"default": "allow", "sandbox": {"network": "host"}})
    [shell] = apply_policy([toolbox["shell"]], policy)
    call = [("shell", "call_0", {"command": sends(tcp, udp)})]
    agent = Agent("", StubTransport([make_tool_uses_response(call), make_text_response()]), [shell])
    async with agent.run_stream("go", MemoryContextStore()) as stream:
        results = [event async for event in stream if isinstance(event, ToolResult)]
    assert str(results[0].content).endswith("done\n[exit code 0]")
    assert received(tcp, udp) == (True, b"bash\n")
