"""Record model calls to a cassette and replay them offline, deterministically.

A cassette is a JSONL file, one line per model call::

    {"path": "orchestrator/architect#2", "call": 0,
     "request": {"model": ..., "system": ..., "tools": [...], "messages": [...]},
     "events": [{"type": "text_delta", ...}, ...], "error": null}

``path`` is the calling agent's path in the run (``swarm.scope.current_scope().path``) and
``call`` counts that path's calls from 0, so agents that run concurrently replay correctly
however their calls interleave. ``error`` holds the exception that ended the call, if any;
replay raises it again after the recorded events. A call the consumer abandoned midway is
recorded with the events it had seen.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from swarm.errors import ConfigError, TransportError
from swarm.event_codec import (
    event_from_dict,
    event_to_dict,
    exception_from_dict,
    exception_to_dict,
)
from swarm.events import StreamEvent
from swarm.messages import Message
from swarm.models.registry import DEFAULT_CONTEXT_WINDOW
from swarm.scope import current_scope
from swarm.tools import Tool
from swarm.transports.base import CompletionTransport, context_window_of, model_name

__all__ = ["RecordingTransport", "ReplayTransport", "request_to_dict"]


def request_to_dict(
    messages: Sequence[Message], tools: Sequence[Tool[Any]], system: str, model: str
) -> dict[str, Any]:
    """A model call's request as cassettes store it."""
    return {
        "model": model,
        "system": system,
        "tools": [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in tools
        ],
        "messages": [m.to_dict() for m in messages],
    }


def _model_of(transport: object) -> str:
    return model_name(transport) or ""


class RecordingTransport:
    """Wraps a transport and appends every call it serves to a JSONL cassette at ``path``.

    The events pass through unchanged; a failure is recorded and re-raised. The file is
    appended to (create a fresh one per recording), with one line per finished call.
    ``also`` is another recording of the same cassette (the run's, for a role's own
    model): the two share the lock that keeps their lines whole.
    """

    def __init__(
        self,
        inner: CompletionTransport,
        path: str | Path,
        *,
        also: RecordingTransport | None = None,
    ) -> None:
        self.inner = inner
        self.path = Path(path)
        self._counts: dict[str, int] = {}
        self._lock: anyio.Lock = also._lock if also is not None else anyio.Lock()

    def check(self) -> None:
        """Raise ``ConfigError`` naming the cassette when it could not be written: it is
        a directory, its directory is missing, or either is not writable. Writes nothing:
        the file appears with the first call."""
        path = self.path
        if path.is_dir():
            raise ConfigError("cannot record here: this is a directory", path=path)
        if not path.parent.is_dir():
            raise ConfigError(
                f"cannot record here: the directory {path.parent} does not exist", path=path
            )
        if path.exists() and not os.access(path, os.W_OK):
            raise ConfigError("cannot record here: the file is not writable", path=path)
        if not path.exists() and not os.access(path.parent, os.W_OK | os.X_OK):
            raise ConfigError(
                f"cannot record here: the directory {path.parent} is not writable", path=path
            )

    @property
    def model(self) -> str:
        """The wrapped transport's model."""
        return _model_of(self.inner)

    @property
    def context_window(self) -> int:
        """The wrapped transport's context window."""
        return context_window_of(self.inner) or DEFAULT_CONTEXT_WINDOW

    async def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        """Stream the wrapped transport's call, recording it."""
        agent = current_scope().path
        call = self._counts.get(agent, 0)
        self._counts[agent] = call + 1
        record: dict[str, Any] = {
            "path": agent,
            "call": call,
            "request": request_to_dict(messages, tools, system, self.model),
            "events": [],
            "error": None,
        }
        events: list[dict[str, Any]] = record["events"]
        try:
            async for event in self.inner.stream(messages, tools, system):
                events.append(event_to_dict(event))
                yield event
        except Exception as exc:
            record["error"] = exception_to_dict(exc)
            raise
        finally:
            with anyio.CancelScope(shield=True):
                await self._write(record)

    async def _write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"

        def append() -> None:
            with self.path.open("a", encoding="utf-8") as file:
                file.write(line)

        async with self._lock:
            await anyio.to_thread.run_sync(append)


def _diff(expected: dict[str, Any], actual: dict[str, Any]) -> str:
    def lines(value: dict[str, Any]) -> list[str]:
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()

    return "\n".join(
        difflib.unified_diff(
            lines(expected), lines(actual), "recorded request", "this request", lineterm=""
        )
    )


class ReplayTransport:
    """Plays a cassette back: each agent path gets its recorded calls in order.

    ``strict`` (the default) checks that each request equals the recorded one and raises a
    ``TransportError`` holding a unified diff when it does not. Lenient mode serves the
    next recording of the path whatever was asked, and, for a path the cassette does not
    know, the next recording not served yet. Running out of recordings raises
    ``TransportError``. ``model`` and ``context_window`` are those of the recording.
    """

    def __init__(
        self, path: str | Path, *, strict: bool = True, context_window: int | None = None
    ) -> None:
        self.path = Path(path)
        self.strict = strict
        self._context_window = context_window
        self._records: list[dict[str, Any]] | None = None
        self._by_path: dict[str, list[dict[str, Any]]] = {}
        self._served: set[int] = set()
        self._counts: dict[str, int] = {}
        self._lock = anyio.Lock()

    def load(self) -> None:
        """Read the cassette now rather than at the first call. Raises ``ConfigError``
        naming the file (and the line) when it is missing, unreadable or not a cassette."""
        self._load()

    def _load(self) -> list[dict[str, Any]]:
        if self._records is None:
            records = _read_cassette(self.path)
            records.sort(key=lambda r: (r["path"], r["call"]))
            for record in records:
                self._by_path.setdefault(record["path"], []).append(record)
            self._records = records
        return self._records

    @property
    def model(self) -> str:
        """The model of the first recorded call (``""`` before the cassette is loaded)."""
        return self._records[0]["request"]["model"] if self._records else ""

    @property
    def context_window(self) -> int:
        """The window given to the constructor, else ``DEFAULT_CONTEXT_WINDOW``."""
        return self._context_window or DEFAULT_CONTEXT_WINDOW

    async def _next(self, agent: str) -> tuple[int, dict[str, Any]]:
        async with self._lock:
            if self._records is None:
                await anyio.to_thread.run_sync(self._load)
            records = self._records or []
            call = self._counts.get(agent, 0)
            self._counts[agent] = call + 1
            recorded = self._by_path.get(agent, [])
            if call < len(recorded):
                record = recorded[call]
            elif not self.strict and agent not in self._by_path:
                spare = [r for r in records if id(r) not in self._served]
                if not spare:
                    raise TransportError(f"cassette {self.path} has no recordings left")
                record = spare[0]
            else:
                raise TransportError(
                    f"cassette {self.path} has no recording #{call} for agent"
                    f" {agent or '(root)'!r} ({len(recorded)} recorded)"
                )
            self._served.add(id(record))
            return call, record

    async def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        """Yield the recorded events of the next call of the current agent path."""
        agent = current_scope().path
        call, record = await self._next(agent)
        if self.strict:
            asked = json.loads(
                json.dumps(
                    request_to_dict(messages, tools, system, record["request"].get("model", ""))
                )
            )
            if asked != record["request"]:
                raise TransportError(
                    f"request #{call} of agent {agent or '(root)'!r} does not match the"
                    f" cassette {self.path}:\n{_diff(record['request'], asked)}"
                )
        for data in record["events"]:
            yield event_from_dict(data)
        if record.get("error"):
            raise exception_from_dict(record["error"])


def _read_cassette(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("no such cassette", path=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"cannot read the cassette: {reason}", path=path) from None
    records: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not (
            isinstance(record, dict)
            and isinstance(record.get("path"), str)
            and isinstance(record.get("call"), int)
            and isinstance(record.get("request"), dict)
            and isinstance(record.get("events"), list)
        ):
            raise ConfigError(
                "not a cassette: each line is a recorded call, a JSON object with"
                " 'path', 'call', 'request' and 'events' (written by --record)",
                path=path,
                line=number,
            )
        records.append(record)
    if not records:
        raise ConfigError("the cassette is empty: it holds no recorded call", path=path)
    return records
