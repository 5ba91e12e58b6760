"""The egress proxy on its own (reached over TCP, no sandbox): what it relays, what it
refuses, and that a refusal leaves no byte at the listener the test started."""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import anyio
import pytest

from swarm.sandbox.egress import AllowList, Egress, IPAddress
from swarm.sandbox.proxy import ConnectionRecord, EgressProxy, mapped_resolver

pytestmark = pytest.mark.anyio


@dataclass
class Upstream:
    """A server on 127.0.0.1 the test starts: it keeps every byte it receives, and
    answers a request (up to an empty line, then a body up to ``0\\r\\n\\r\\n`` or
    ``end``) with ``HTTP 200 ok``."""

    port: int = 0
    received: list[bytes] = field(default_factory=list)
    connections: int = 0


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = socket.create_server(("127.0.0.1", 0))
    found = Upstream(server.getsockname()[1])
    done = threading.Event()

    def handle(conn: socket.socket) -> None:
        data = b""
        with conn:
            conn.settimeout(5)
            try:
                while not (
                    data.endswith(b"end")
                    or (data.endswith(b"\r\n\r\n") and b"chunked" not in data)
                    or data.endswith(b"\r\n0\r\n\r\n")
                ):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            except OSError:
                pass
            found.received.append(data)

    def serve() -> None:
        server.settimeout(0.1)
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            found.connections += 1
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield found
    done.set()
    thread.join()
    server.close()


def lists(*entries: str) -> Egress:
    return Egress((AllowList.parse(entries, source="test"),))


async def exchange(port: int, data: bytes) -> bytes:
    """Send ``data`` to the proxy and read until it closes."""
    async with await anyio.connect_tcp("127.0.0.1", port) as client:
        await client.send(data)
        answer = b""
        with anyio.fail_after(10):
            try:
                while True:
                    answer += await client.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                pass
    return answer


async def through(
    egress: Egress, data: bytes, names: dict[str, str | list[str]]
) -> tuple[bytes, list[ConnectionRecord]]:
    records: list[ConnectionRecord] = []
    proxy = EgressProxy(mapped_resolver(names), records.append)
    async with proxy.listen(egress, path="lead/dev#1") as port:
        answer = await exchange(port, data)
    return answer, records


async def test_connect_to_an_allowed_name_relays_bytes_and_is_recorded(
    upstream: Upstream,
) -> None:
    request = f"CONNECT svc.test:{upstream.port} HTTP/1.1\r\n\r\nping end".encode()
    answer, records = await through(
        lists("svc.test", "127.0.0.1/32"), request, {"svc.test": "127.0.0.1"}
    )
    assert answer.startswith(b"HTTP/1.1 200 Connection established")
    assert answer.endswith(b"ok")
    assert upstream.received == [b"ping end"]
    (record,) = records
    assert (record.path, record.host, record.port) == ("lead/dev#1", "svc.test", upstream.port)
    assert record.allowed and record.address == "127.0.0.1"
    assert record.sent == len(b"ping end") and record.received > 0


async def test_name_not_on_the_list_is_refused_and_never_resolved(upstream: Upstream) -> None:
    asked: list[str] = []
    resolve = mapped_resolver({"evil.test": "127.0.0.1"})

    async def spy(host: str) -> Sequence[IPAddress]:
        asked.append(host)
        return await resolve(host)

    records: list[ConnectionRecord] = []
    proxy = EgressProxy(spy, records.append)
    async with proxy.listen(lists("svc.test", "127.0.0.1/32"), path="lead") as port:
        answer = await exchange(
            port, f"CONNECT evil.test:{upstream.port} HTTP/1.1\r\n\r\n".encode()
        )
    assert answer.startswith(b"HTTP/1.1 403")
    assert asked == [] and upstream.connections == 0
    assert not records[0].allowed and "not on the allow-list" in records[0].reason


@pytest.mark.parametrize("address", ["127.0.0.1", "::1"])
async def test_listed_name_resolving_to_loopback_is_refused(
    upstream: Upstream, address: str
) -> None:
    request = f"GET http://local.test:{upstream.port}/ HTTP/1.1\r\nHost: local.test\r\n\r\n"
    answer, records = await through(lists("local.test"), request.encode(), {"local.test": address})
    assert answer.startswith(b"HTTP/1.1 403")
    assert upstream.connections == 0
    assert "loopback" in records[0].reason and records[0].address is None


async def test_listed_name_resolving_to_metadata_is_refused() -> None:
    for address in ("169.254.169.254", "fd00:ec2::254"):
        answer, records = await through(
            lists("meta.test"), b"CONNECT meta.test:80 HTTP/1.1\r\n\r\n", {"meta.test": address}
        )
        assert answer.startswith(b"HTTP/1.1 403"), address
        assert not records[0].allowed


@pytest.mark.parametrize(
    "target", ["127.0.0.1", "[::ffff:127.0.0.1]", "2130706433", "127.1", "[::1]"]
)
async def test_address_literals_are_refused(upstream: Upstream, target: str) -> None:
    answer, records = await through(
        lists("svc.test"), f"CONNECT {target}:{upstream.port} HTTP/1.1\r\n\r\n".encode(), {}
    )
    assert answer.startswith(b"HTTP/1.1 403")
    assert upstream.connections == 0
    assert not records[0].allowed


async def test_connect_to_the_proxy_itself_is_refused_even_when_allowed_by_address() -> None:
    records: list[ConnectionRecord] = []
    proxy = EgressProxy(mapped_resolver({"self.test": "127.0.0.1"}), records.append)
    egress = lists("self.test", "127.0.0.0/8")
    async with proxy.listen(egress, path="lead") as port:
        by_name = await exchange(port, f"CONNECT self.test:{port} HTTP/1.1\r\n\r\n".encode())
        by_address = await exchange(port, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
    assert by_name.startswith(b"HTTP/1.1 403") and by_address.startswith(b"HTTP/1.1 403")
    assert [r.reason for r in records] == ["the proxy itself is not a destination"] * 2


async def test_connects_to_the_address_it_checked(upstream: Upstream) -> None:
    # A resolver that answers differently each time (DNS rebinding): the proxy asks once
    # and connects to what it checked.
    answers = iter([["127.0.0.1"], ["169.254.169.254"], ["169.254.169.254"]])
    asked = 0

    async def rebinding(host: str) -> Sequence[IPAddress]:
        nonlocal asked
        asked += 1
        return [ipaddress.ip_address(a) for a in next(answers)]

    records: list[ConnectionRecord] = []
    proxy = EgressProxy(rebinding, records.append)
    async with proxy.listen(lists("svc.test", "127.0.0.1/32"), path="lead") as port:
        answer = await exchange(
            port, f"CONNECT svc.test:{upstream.port} HTTP/1.1\r\n\r\nhi end".encode()
        )
    assert asked == 1 and answer.endswith(b"ok")
    assert records[0].address == "127.0.0.1"


async def test_host_header_naming_another_host_is_refused(upstream: Upstream) -> None:
    request = (f"GET http://svc.test:{upstream.port}/ HTTP/1.1\r\nHost: evil.test\r\n\r\n").encode()
    answer, records = await through(
        lists("svc.test", "127.0.0.1/32"), request, {"svc.test": "127.0.0.1"}
    )
    assert answer.startswith(b"HTTP/1.1 400")
    assert upstream.connections == 0 and "Host header" in records[0].reason


async def test_a_second_request_on_the_connection_goes_nowhere(upstream: Upstream) -> None:
    first = f"GET http://svc.test:{upstream.port}/a HTTP/1.1\r\nHost: svc.test\r\n\r\n"
    second = f"GET http://evil.test:{upstream.port}/b HTTP/1.1\r\nHost: evil.test\r\n\r\n"
    answer, _ = await through(
        lists("svc.test", "127.0.0.1/32"), (first + second).encode(), {"svc.test": "127.0.0.1"}
    )
    assert answer.endswith(b"ok")
    (got,) = upstream.received
    assert got.startswith(b"GET /a HTTP/1.1\r\nHost: svc.test:")
    assert b"Connection: close" in got and b"/b" not in got and b"evil" not in got


async def test_chunked_body_is_sent_on_exactly(upstream: Upstream) -> None:
    body = b"4\r\nwiki\r\n3\r\nend\r\n0\r\n\r\n"
    head = (
        f"POST http://svc.test:{upstream.port}/p HTTP/1.1\r\nHost: svc.test:{upstream.port}"
        "\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode()
    answer, records = await through(
        lists("svc.test", "127.0.0.1/32"), head + body + b"GARBAGE", {"svc.test": "127.0.0.1"}
    )
    assert answer.endswith(b"ok")
    assert upstream.received[0].endswith(body)
    assert records[0].allowed and records[0].sent == len(upstream.received[0])


async def test_https_url_without_connect_is_refused() -> None:
    answer, records = await through(
        lists("svc.test"), b"GET https://svc.test/ HTTP/1.1\r\n\r\n", {"svc.test": "192.0.2.1"}
    )
    assert answer.startswith(b"HTTP/1.1 400") and not records[0].allowed


async def test_bare_line_feed_cannot_smuggle_a_second_host_header(upstream: Upstream) -> None:
    request = (
        f"GET http://svc.test:{upstream.port}/ HTTP/1.1\r\nX-A: 1\nHost: evil.test\r\n\r\n"
    ).encode()
    answer, records = await through(
        lists("svc.test", "127.0.0.1/32"), request, {"svc.test": "127.0.0.1"}
    )
    assert answer.startswith(b"HTTP/1.1 400")
    assert upstream.connections == 0 and not records[0].allowed
