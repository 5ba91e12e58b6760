"""How a sandboxed command reaches the egress proxy: a door on its own loopback.

``open_door`` makes a socket pair for one launch, serves swarm's end with an
``EgressProxy`` and yields a ``ProxyDoor``: the sandbox's end (a descriptor the launch
passes in) and the port the door listens on inside the sandbox. A tier wraps the command
with ``ProxyDoor.wrap`` (``_egress_door`` runs first in the sandbox); the command's
environment gets ``proxy_environment``: the proxy variables curl, pip, git, npm, cargo
and Go read. The network namespace stays empty: the door listens on its loopback and
hands each connection out through the socket pair, so no address outside is reachable
and no unix socket needs to be made.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.abc

from swarm.sandbox import _egress_door
from swarm.sandbox.egress import Egress
from swarm.sandbox.proxy import ConnectionRecord, EgressProxy, Resolver, system_resolver

__all__ = ["DOOR_PORT", "ProxyDoor", "door_for", "open_door", "proxy_environment"]

DOOR_PORT = 3128
"""The port the door listens on, on the sandbox's own loopback (each sandbox has its own
network namespace, so the port is never shared)."""
_MAX_FDS = 16


def proxy_environment(port: int = DOOR_PORT) -> dict[str, str]:
    """The variables pointing a command's HTTP clients at the door: ``HTTP_PROXY``,
    ``HTTPS_PROXY``, ``ALL_PROXY`` (and lower case), ``NO_PROXY`` (the sandbox's own
    loopback only), pip's ``PIP_PROXY``, npm's ``npm_config_proxy`` and
    ``npm_config_https_proxy``, cargo's ``CARGO_HTTP_PROXY``, and git's ``http.proxy``
    through ``GIT_CONFIG_COUNT``."""
    url = f"http://127.0.0.1:{port}"
    env = {}
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        env[name] = env[name.upper()] = url
    env["no_proxy"] = env["NO_PROXY"] = "localhost,127.0.0.1,::1"
    env["PIP_PROXY"] = url
    env["npm_config_proxy"] = env["npm_config_https_proxy"] = url
    env["CARGO_HTTP_PROXY"] = url
    env["GIT_CONFIG_COUNT"] = "1"
    env["GIT_CONFIG_KEY_0"] = "http.proxy"
    env["GIT_CONFIG_VALUE_0"] = url
    return env


@dataclass(frozen=True, slots=True)
class ProxyDoor:
    """One launch's way out: ``fd`` is the sandbox's end of the socket pair to the
    proxy (to pass into the sandbox), ``port`` the door's port inside it. For a sandbox
    without a network namespace (``over_tcp``), the proxy listens on ``127.0.0.1:port``
    of the machine instead, ``fd`` is -1, and the tier lets the command connect to that
    port only."""

    fd: int
    port: int = DOOR_PORT
    over_tcp: bool = False

    def wrap(self, argv: tuple[str, ...], *, python: str = sys.executable) -> tuple[str, ...]:
        """``argv`` behind the door: it listens, then becomes the command. The door's
        code goes on the command line, so it runs where swarm's files are unreadable."""
        return (python, "-I", "-S", "-c", _door_code(), f"{self.fd}:{self.port}", "--", *argv)


@functools.cache
def _door_code() -> str:
    return Path(_egress_door.__file__).read_text(encoding="utf-8")


async def _stream(fd: int) -> anyio.abc.SocketStream | None:
    """A connection the door handed over, or ``None`` (closed) when the descriptor is
    not a stream socket (the sandbox could send any descriptor it holds)."""
    try:
        sock = socket.socket(fileno=fd)
    except OSError:
        os.close(fd)
        return None
    if sock.type != socket.SOCK_STREAM:
        sock.close()
        return None
    sock.setblocking(False)
    return await anyio.abc.SocketStream.from_socket(sock)


async def _serve(proxy: EgressProxy, own: socket.socket, egress: Egress, path: str) -> None:
    async with anyio.create_task_group() as group:
        while True:
            await anyio.wait_readable(own)
            try:
                message, fds, _flags, _address = socket.recv_fds(own, 16, _MAX_FDS)
            except BlockingIOError:
                continue
            if not message and not fds:
                return  # the door closed its end
            for fd in fds:
                stream = await _stream(fd)
                if stream is not None:
                    group.start_soon(functools.partial(proxy.serve, stream, egress, path=path))


@contextlib.asynccontextmanager
async def open_door(proxy: EgressProxy, egress: Egress, *, path: str) -> AsyncIterator[ProxyDoor]:
    """A door for one launch by agent ``path``, served by ``proxy`` under ``egress``
    until the context ends (its connections are then cut)."""
    own, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    own.setblocking(False)
    theirs.set_inheritable(True)
    failed: BaseException | None = None
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_serve, proxy, own, egress, path)
            try:
                yield ProxyDoor(theirs.fileno())
            except BaseException as exc:  # the caller's own, raised as it is, not grouped
                failed = exc
            finally:
                group.cancel_scope.cancel()
    finally:
        theirs.close()
        own.close()
    if failed is not None:
        raise failed


@contextlib.asynccontextmanager
async def door_for(
    egress: Egress | None,
    *,
    path: str,
    resolver: Resolver | None = None,
    on_connection: Callable[[ConnectionRecord], None] | None = None,
    over_tcp: bool = False,
) -> AsyncIterator[ProxyDoor | None]:
    """The door of one launch when ``egress`` is set (``None`` otherwise), served by a
    proxy resolving with ``resolver`` (default: the machine's) and recording each
    connection with ``on_connection``; ``over_tcp`` for a tier without a network
    namespace (the proxy on a port of the machine's loopback)."""
    if egress is None:
        yield None
        return
    proxy = EgressProxy(resolver or system_resolver, on_connection)
    if over_tcp:
        async with proxy.listen(egress, path=path) as port:
            yield ProxyDoor(-1, port, over_tcp=True)
        return
    async with open_door(proxy, egress, path=path) as door:
        yield door
