"""The Landlock tier with a network allow-list: with namespaces, the same door to the
egress proxy as bubblewrap's; without them, a Landlock rule lets the command connect to
the proxy's port on the machine's loopback and nowhere else (TCP)."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest

from swarm import SandboxSettings, Tool
from swarm.sandbox import LandlockSandbox, NetworkMethod, Sandbox
from swarm.sandbox.egress import AllowList, Egress
from swarm.sandbox.proxy import mapped_resolver
from swarm.toolbox import make_toolbox

from .test_egress_bubblewrap import (
    NAMES,
    Server,
    run_audited,
    server as server,  # the fixture
)
from .test_landlock import methods_here

pytestmark = pytest.mark.anyio


def landlock(method: NetworkMethod) -> LandlockSandbox:
    if method not in methods_here() and not os.environ.get("CI"):
        pytest.skip(f"{method} is not available here (netns needs root, userns user namespaces)")
    return LandlockSandbox(network_method=method)


def shell_in(tier: Sandbox, ws: Path) -> Tool[Any]:
    egress = Egress((AllowList.parse(["pkg.test", "127.0.0.1/32"], source="test"),))
    settings = SandboxSettings(mode="required", egress=egress)
    return make_toolbox(
        ws, sandbox=settings, find=lambda _settings: tier, resolver=mapped_resolver(NAMES)
    )["shell"]


@pytest.mark.parametrize("method", ["netns", "userns"])
async def test_landlock_with_namespaces_goes_out_through_the_proxy(
    ws: Path, server: Server, tmp_path: Path, method: NetworkMethod
) -> None:
    shell = shell_in(landlock(method), ws)
    out, records = await run_audited(
        shell,
        f"curl -sS http://pkg.test:{server.port}/hello.txt;"
        f" curl -sS http://evil.test:{server.port}/hello.txt",
        tmp_path / "audit.jsonl",
    )
    assert out.count("hello through the proxy") == 1, out
    assert server.hosts == [f"pkg.test:{server.port}"]
    assert [(r["host"], r["decision"]) for r in records] == [
        ("pkg.test", "allow"),
        ("evil.test", "deny"),
    ]


async def test_landlock_without_namespaces_reaches_the_proxy_port_only(
    ws: Path, server: Server, tmp_path: Path
) -> None:
    shell = shell_in(landlock("landlock-tcp"), ws)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    other = listener.getsockname()[1]
    try:
        out, records = await run_audited(
            shell,
            f"curl -sS http://pkg.test:{server.port}/hello.txt;"
            f" curl -sS http://evil.test:{server.port}/hello.txt;"
            f" curl -sS --noproxy '*' http://127.0.0.1:{other}/ && echo reached",
            tmp_path / "audit.jsonl",
        )
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing got past Landlock to another port
    finally:
        listener.close()
    assert out.count("hello through the proxy") == 1 and "reached" not in out, out
    assert server.hosts == [f"pkg.test:{server.port}"]
    assert [(r["host"], r["decision"]) for r in records] == [
        ("pkg.test", "allow"),
        ("evil.test", "deny"),
    ]
