"""The egress proxy: the one way out of a sandbox whose policy has a network allow-list.

A command in such a sandbox has an empty network namespace; its ``HTTP_PROXY`` and
friends point at a port on the namespace's own loopback, whose connections reach this
proxy in swarm (see ``swarm.sandbox.proxy_door``). For each connection the proxy reads
one request, an HTTP ``CONNECT host:port`` (a tunnel, for HTTPS) or a plain HTTP request
with an absolute URL; it resolves the name itself (``Resolver``, injectable: tests give
a map of invented names), checks the name and the address against the command's
``Egress`` and connects to the very address it checked, so a name that resolves
differently a moment later (DNS rebinding) changes nothing. Never to itself: the
addresses it listens on are refused whatever the lists say.

A plain HTTP request is sent on with ``Connection: close`` and its body delimited
(``Content-Length`` or chunked), and its ``Host`` header must name the host of the URL:
a second request on the same connection, or a ``Host`` that differs, could otherwise
reach another site served at an allowed address. Every connection, allowed or refused,
ends as a ``ConnectionRecord`` given to ``on_connection`` (the audit log's, in a run).
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from swarm.sandbox.egress import Egress, IPAddress, Verdict, literal_address, normalise_address

__all__ = [
    "ConnectionRecord",
    "EgressProxy",
    "Resolver",
    "mapped_resolver",
    "system_resolver",
]

Resolver = Callable[[str], Awaitable[Sequence[IPAddress]]]
"""Resolves a host name to its addresses (none: not found)."""

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HEAD_LIMIT = 64 * 1024
_CHUNK = 64 * 1024
_HOP_HEADERS = frozenset(
    ("connection", "proxy-connection", "keep-alive", "proxy-authorization", "te", "upgrade")
)


async def system_resolver(host: str) -> Sequence[IPAddress]:
    """The machine's resolver (``getaddrinfo``), TCP addresses in its order."""
    try:
        found = await anyio.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return []
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in found:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def mapped_resolver(names: Mapping[str, str | Sequence[str]]) -> Resolver:
    """A resolver answering from ``names`` (a name to one address or several) and
    nothing else: for tests and for runs that must not use the machine's DNS."""
    table = {
        name.lower().removesuffix("."): [
            ipaddress.ip_address(a) for a in ([given] if isinstance(given, str) else given)
        ]
        for name, given in names.items()
    }

    async def resolve(host: str) -> Sequence[IPAddress]:
        return table.get(host.lower().removesuffix("."), [])

    return resolve


@dataclass(frozen=True, slots=True)
class ConnectionRecord:
    """One connection through the proxy: the agent ``path`` whose command made it, the
    ``host`` and ``port`` asked for, the ``address`` connected to (``None`` when none
    was), ``method`` (``CONNECT``, ``GET``, ...), whether it was ``allowed`` and why
    (``reason``), the bytes ``sent`` out and ``received`` back, and its ``duration`` in
    seconds."""

    path: str
    host: str
    port: int
    address: str | None
    method: str
    allowed: bool
    reason: str
    sent: int = 0
    received: int = 0
    duration: float = 0.0


class _Refused(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(slots=True)
class _Request:
    method: str
    host: str
    port: int
    head: bytes = b""
    chunked: bool = False
    length: int = 0


@dataclass(slots=True)
class _Tally:
    sent: int = 0
    received: int = 0
    address: str | None = None
    verdict: Verdict | None = None


def _authority(text: str, default_port: int) -> tuple[str, int]:
    """Host and port of ``host:port`` / ``[v6]:port``; raises ``_Refused`` (400)."""
    split = urlsplit("//" + text)
    try:
        host, port = split.hostname, split.port
    except ValueError:
        raise _Refused(400, f"bad port in {text!r}") from None
    if not host or split.username is not None or split.path or split.query:
        raise _Refused(400, f"bad target {text!r}")
    return host, port or default_port


def _parse_head(head: bytes) -> _Request:
    """The request a head holds. Raises ``_Refused`` for what the proxy does not serve."""
    try:
        text = head.decode("latin-1")
        line, *header_lines = text.split("\r\n")
        method, target, version = line.split(" ")
    except ValueError:
        raise _Refused(400, "not an HTTP request") from None
    if not _TOKEN.fullmatch(method) or "\n" in line:
        raise _Refused(400, "not an HTTP request")
    if not version.startswith("HTTP/1."):
        raise _Refused(400, f"unsupported protocol {version!r}")
    headers: list[tuple[str, str]] = []  # names as written; compared in lower case
    for header in header_lines:
        if not header:
            continue
        name, colon, value = header.partition(":")
        # A bare LF (or CR) would split a header in two for a lenient server, and hide a
        # second Host from this check.
        if not colon or not _TOKEN.fullmatch(name) or "\n" in value or "\r" in value:
            raise _Refused(400, "malformed header")
        headers.append((name, value.strip()))
    if method == "CONNECT":
        host, port = _authority(target, 443)
        return _Request(method, host, port)
    url = urlsplit(target)
    if url.scheme != "http" or not url.netloc:
        raise _Refused(400, "only CONNECT and plain http:// URLs go through this proxy")
    host, port = _authority(url.netloc, 80)
    for name, value in headers:
        if name.lower() == "host" and _authority(value, port)[0].lower() != host.lower():
            raise _Refused(400, f"the Host header {value!r} does not name {host!r}")
    chunked = any(n.lower() == "transfer-encoding" and "chunked" in v.lower() for n, v in headers)
    lengths = {v for n, v in headers if n.lower() == "content-length"}
    if len(lengths) > 1 or (lengths and not next(iter(lengths)).isdigit()):
        raise _Refused(400, "conflicting or bad Content-Length")
    if chunked and lengths:
        raise _Refused(400, "both Content-Length and chunked")
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    kept = [f"{n}: {v}" for n, v in headers if n.lower() not in (*_HOP_HEADERS, "host")]
    authority = f"[{host}]" if ":" in host else host
    authority += "" if port == 80 else f":{port}"
    lines = [f"{method} {path} {version}", f"Host: {authority}", *kept, "Connection: close"]
    return _Request(
        method,
        host,
        port,
        ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"),
        chunked,
        int(next(iter(lengths))) if lengths else 0,
    )


@dataclass
class EgressProxy:
    """The proxy (see the module docstring). ``resolver`` resolves names (default: the
    machine's); ``on_connection`` receives a record of every connection; ``timeout``
    bounds reading a request's head and connecting out (seconds)."""

    resolver: Resolver = system_resolver
    on_connection: Callable[[ConnectionRecord], None] | None = None
    timeout: float = 30.0
    _own: set[tuple[IPAddress, int]] = field(default_factory=set)

    async def serve(self, client: anyio.abc.ByteStream, egress: Egress, *, path: str) -> None:
        """Serve one client connection for a command of agent ``path``; closes it."""
        started = time.monotonic()
        tally = _Tally()
        request = _Request("?", "", 0)
        reader = BufferedByteReceiveStream(client)
        async with client:
            try:
                with anyio.fail_after(self.timeout):
                    head = await reader.receive_until(b"\r\n\r\n", _HEAD_LIMIT)
                request = _parse_head(head)
                await self._relay(client, reader, request, egress, tally)
            except _Refused as exc:
                tally.verdict = Verdict(False, exc.reason)
                with contextlib.suppress(Exception):
                    body = f"swarm proxy: {exc.reason}\n".encode()
                    await client.send(
                        f"HTTP/1.1 {exc.status} {_STATUS[exc.status]}\r\nContent-Type: "
                        f"text/plain\r\nContent-Length: {len(body)}\r\nConnection: close"
                        "\r\n\r\n".encode()
                        + body
                    )
            except (anyio.IncompleteRead, anyio.DelimiterNotFound, TimeoutError) as exc:
                tally.verdict = tally.verdict or Verdict(
                    False, f"bad request: {type(exc).__name__}"
                )
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                pass  # a side hung up mid-relay: the record says how far it got
            finally:
                self._record(path, request, tally, time.monotonic() - started)

    def _record(self, path: str, request: _Request, tally: _Tally, duration: float) -> None:
        if self.on_connection is None:
            return
        verdict = tally.verdict or Verdict(False, "no request")
        self.on_connection(
            ConnectionRecord(
                path,
                request.host,
                request.port,
                tally.address,
                request.method,
                verdict.allowed,
                verdict.reason,
                tally.sent,
                tally.received,
                round(duration, 6),
            )
        )

    async def _choose(self, request: _Request, egress: Egress, tally: _Tally) -> IPAddress:
        """The address to connect to, checked; raises ``_Refused``."""
        literal = literal_address(request.host)
        if literal is not None:
            addresses: Sequence[IPAddress] = [literal]
        else:
            # Names are checked before they are resolved, so a refused name is never
            # looked up (no DNS query leaks it).
            named = egress.check_name(request.host, request.port)
            if not named.allowed:
                raise _Refused(403, named.reason)
            addresses = await self.resolver(request.host)
            if not addresses:
                raise _Refused(502, f"{request.host} does not resolve")
        refusal = None
        for found in addresses:
            address = normalise_address(found)
            if (address, request.port) in self._own:
                refusal = refusal or "the proxy itself is not a destination"
                continue
            verdict = egress.check(request.host, request.port, address)
            if verdict.allowed:
                tally.verdict = verdict
                tally.address = str(address)
                return address
            refusal = refusal or verdict.reason
        raise _Refused(403, refusal or "no address")

    async def _relay(
        self,
        client: anyio.abc.ByteStream,
        reader: BufferedByteReceiveStream,
        request: _Request,
        egress: Egress,
        tally: _Tally,
    ) -> None:
        address = await self._choose(request, egress, tally)
        try:
            with anyio.fail_after(self.timeout):
                upstream = await anyio.connect_tcp(str(address), request.port)
        except (OSError, TimeoutError) as exc:
            raise _Refused(502, f"cannot connect to {address}:{request.port}: {exc}") from None
        async with upstream:
            if request.method == "CONNECT":
                await client.send(b"HTTP/1.1 200 Connection established\r\n\r\n")
                async with anyio.create_task_group() as group:
                    group.start_soon(self._pump, reader, upstream, tally, True)
                    await self._pump(upstream, client, tally, False)
                    group.cancel_scope.cancel()
                return
            await upstream.send(request.head)
            tally.sent += len(request.head)
            await self._send_body(reader, upstream, request, tally)
            await self._pump(upstream, client, tally, False)

    async def _send_body(
        self,
        reader: BufferedByteReceiveStream,
        upstream: anyio.abc.ByteStream,
        request: _Request,
        tally: _Tally,
    ) -> None:
        """Send exactly the request's body on (and nothing after it)."""
        if not request.chunked:
            left = request.length
            while left:
                data = await reader.receive(min(left, _CHUNK))
                left -= len(data)
                tally.sent += len(data)
                await upstream.send(data)
            return
        while True:
            line = await reader.receive_until(b"\r\n", 1024)
            size = int(line.split(b";", 1)[0].strip() or b"x", 16)
            data = line + b"\r\n"
            if size:
                data += await reader.receive_exactly(size + 2)
            else:  # the trailers, up to the empty line
                while True:
                    trailer = await reader.receive_until(b"\r\n", 8192)
                    data += trailer + b"\r\n"
                    if not trailer:
                        break
            tally.sent += len(data)
            await upstream.send(data)
            if not size:
                return

    @staticmethod
    async def _pump(
        source: anyio.abc.ByteReceiveStream | BufferedByteReceiveStream,
        sink: anyio.abc.ByteStream,
        tally: _Tally,
        outward: bool,
    ) -> None:
        with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
            while True:
                data = await source.receive(_CHUNK)
                if outward:
                    tally.sent += len(data)
                else:
                    tally.received += len(data)
                await sink.send(data)
        if outward:
            with contextlib.suppress(Exception):
                await sink.send_eof()

    @contextlib.asynccontextmanager
    async def listen(
        self, egress: Egress, *, path: str, host: str = "127.0.0.1"
    ) -> AsyncIterator[int]:
        """Serve on a TCP port of ``host`` (chosen by the system), yielding the port,
        for clients that reach the proxy by TCP (the benchmark, a host without network
        namespaces). That address is refused as a destination."""
        listener = await anyio.create_tcp_listener(local_host=host, local_port=0)
        port = int(listener.extra(anyio.abc.SocketAttribute.local_port))
        own = (ipaddress.ip_address(host), port)
        self._own.add(own)

        async def handle(client: anyio.abc.SocketStream) -> None:
            await self.serve(client, egress, path=path)

        try:
            async with listener, anyio.create_task_group() as group:
                group.start_soon(listener.serve, handle)
                try:
                    yield port
                finally:
                    group.cancel_scope.cancel()
        finally:
            self._own.discard(own)


_STATUS = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}
