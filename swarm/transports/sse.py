"""An incremental Server-Sent-Events parser: bytes in, events out.

``SSEParser.feed`` takes whatever bytes the network delivered (any split, even in the middle
of a line or of a multi-byte character) and returns the events completed so far; ``close``
returns the event still pending when the stream ends. It follows the WHATWG rules, with two
tolerances real servers need: leading whitespace before a field name is ignored, and an
event left without its closing blank line at the end of the stream is still delivered.

- ``event:`` sets the type (default ``message``), ``data:`` lines join with ``\\n``, ``id:``
  sets the id, lines starting with ``:`` are comments, ``retry:`` and unknown fields are
  ignored, and a line without a colon is a field with an empty value (ignored, not an error).
- Lines end with ``\\n``, ``\\r\\n`` or ``\\r``.
- ``[DONE]`` (OpenAI's end marker) is an ordinary event here; ``SSEEvent.is_done`` tells it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DONE", "SSEEvent", "SSEParser"]

DONE = "[DONE]"
"""The data of the event OpenAI-style servers send last."""


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event: its type, its data (lines joined with ``\\n``) and its id."""

    event: str
    data: str
    id: str | None = None

    @property
    def is_done(self) -> bool:
        """Whether this is the ``data: [DONE]`` end marker."""
        return self.data == DONE


class SSEParser:
    """Turns a byte stream into ``SSEEvent``s, incrementally.

    Keeps only the unfinished line and the fields of the event being built, so memory stays
    flat however long the stream is. Never raises on malformed input: what cannot be read as
    a field is ignored, as the SSE rules say.
    """

    __slots__ = ("_data", "_event", "_last_id", "_pending", "_trailing_cr")

    def __init__(self) -> None:
        self._pending = b""
        self._trailing_cr = False
        self._event = ""
        self._data: list[str] = []
        self._last_id: str | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Parse ``chunk`` and return the events it completed (often none or one)."""
        if self._trailing_cr and chunk[:1] == b"\n":
            # the previous chunk ended with the \r of a \r\n pair
            chunk = chunk[1:]
        self._trailing_cr = False
        buffer = self._pending + chunk if self._pending else chunk
        if b"\r" in buffer:
            if buffer.endswith(b"\r"):
                self._trailing_cr = True
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = buffer.split(b"\n")
        self._pending = lines.pop()
        if len(lines) == 2 and not lines[1] and not self._data and not self._event:
            # the common case: one whole ``data: ...`` event per chunk
            line = lines[0]
            if line.startswith(b"data: "):
                return [SSEEvent("message", line[6:].decode("utf-8", "replace"), self._last_id)]
        events: list[SSEEvent] = []
        for line in lines:
            if line:
                self._line(line)
            elif self._data:
                events.append(self._dispatch())
            else:
                self._event = ""
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: return the last event if its closing blank line never came."""
        if self._pending:
            self._line(self._pending)
            self._pending = b""
        if self._data:
            return [self._dispatch()]
        return []

    def _dispatch(self) -> SSEEvent:
        event = SSEEvent(self._event or "message", "\n".join(self._data), self._last_id)
        self._event = ""
        self._data = []
        return event

    def _line(self, raw: bytes) -> None:
        if raw[0] in b" \t":
            raw = raw.lstrip(b" \t")
            if not raw:
                return
        if raw[0] == 0x3A:  # ":" starts a comment
            return
        line = raw.decode("utf-8", "replace")
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._last_id = value
