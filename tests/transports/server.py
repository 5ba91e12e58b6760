"""A small HTTP server on 127.0.0.1 for transport tests: it answers each request with a
scripted ``Reply`` (SSE bytes in chunks, an error status, a dropped or stalled stream).

It runs in a thread (``with LLMServer(...) as server``) and stops deterministically: the
stop releases stalled replies, closes every connection and joins the handler threads.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal


@dataclass(frozen=True)
class Reply:
    """What the server sends: ``chunks`` as the body (chunked encoding), then ``end``:
    finish the body properly, ``drop`` the connection, or ``stall`` until the server stops.
    ``hold`` stalls before the status line."""

    chunks: tuple[bytes, ...] = ()
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "text/event-stream"})
    end: Literal["end", "drop", "stall"] = "end"
    gzip: bool = False
    hold: bool = False  # stall before sending anything, until the server stops

    @classmethod
    def sse(cls, body: bytes | str, *, split: bool = True, **options: Any) -> Reply:
        """An SSE body, sent one event per chunk (as servers flush) unless ``split=False``."""
        raw = body.encode() if isinstance(body, str) else body
        chunks = tuple(sse_chunks(raw)) if split else (raw,)
        return cls(chunks, **options)

    @classmethod
    def json(cls, status: int, payload: Any, headers: dict[str, str] | None = None) -> Reply:
        """A plain JSON answer, e.g. an error."""
        merged = {"content-type": "application/json", **(headers or {})}
        return cls((json.dumps(payload).encode(),), status, merged)


def sse_chunks(raw: bytes) -> Iterable[bytes]:
    """Split an SSE body after each blank line, keeping the bytes exactly."""
    start = 0
    while start < len(raw):
        end = raw.find(b"\n\n", start)
        if end < 0:
            yield raw[start:]
            return
        yield raw[start : end + 2]
        start = end + 2


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


Responder = Callable[[Received], Reply]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw
        received = Received(
            "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
        )
        reply = self.server.owner.answer(received)
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        if reply.hold:
            self.server.owner.released.wait()
            self.close_connection = True
            return
        chunks = reply.chunks
        if reply.gzip:
            chunks = (gzip.compress(b"".join(chunks)),)
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.gzip:
            self.send_header("content-encoding", "gzip")
        if reply.status >= 400 and reply.end == "end":
            body = b"".join(chunks)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for chunk in chunks:
            if chunk:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
        if reply.end == "end":
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            return
        if reply.end == "stall":
            self.server.owner.released.wait()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True
    owner: LLMServer


class LLMServer:
    """Serves scripted replies on ``http://127.0.0.1:<port>``.

    ``replies`` are served in order (the last one again when they run out); a
    ``responder`` function instead decides per request. ``requests`` lists what came in.
    """

    def __init__(
        self, replies: Iterable[Reply] = (), *, responder: Responder | None = None
    ) -> None:
        self._replies = list(replies)
        self._responder = responder
        self.requests: list[Received] = []
        self.released = threading.Event()
        self._lock = threading.Lock()
        self._connections: list[socket.socket] = []
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        original = self._server.get_request

        def get_request() -> tuple[socket.socket, Any]:
            conn, address = original()
            with self._lock:
                self._connections.append(conn)
            return conn, address

        self._server.get_request = get_request  # type: ignore[method-assign]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def answer(self, received: Received) -> Reply:
        with self._lock:
            self.requests.append(received)
            if self._responder is not None:
                return self._responder(received)
            if len(self._replies) > 1:
                return self._replies.pop(0)
            return self._replies[0]

    def __enter__(self) -> LLMServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self.released.set()
        self._server.shutdown()
        with self._lock:
            for conn in self._connections:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        self._server.server_close()
        self._thread.join()
