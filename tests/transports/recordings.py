"""The real provider recordings in ``shared/fixtures/llm`` (see its SOURCES.md), and a
helper that assembles a turn from stream events as the agent loop does."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from swarm import (
    IterationEnd,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
)

FIXTURES = Path(__file__).parents[2].parent / "shared/fixtures/llm"


def fixture(name: str) -> Path:
    """The path of a recording; fails loudly when the fixtures are not beside the repo."""
    if not FIXTURES.is_dir():
        raise FileNotFoundError(
            f"the LLM recordings are missing: expected them in {FIXTURES} (shared/ must sit"
            " beside the repository clone)"
        )
    path = FIXTURES / name
    if not path.is_file():
        raise FileNotFoundError(f"recording {name} is missing from {FIXTURES}")
    return path


def sse_body(name: str) -> bytes:
    """A raw ``.sse.txt`` stream, byte for byte."""
    return fixture(name).read_bytes()


@dataclass(frozen=True)
class Interaction:
    """One request/response pair of a vcr cassette."""

    request: dict[str, Any]
    status: int
    headers: dict[str, str]
    body: bytes
    gzipped: bool


def cassette(name: str) -> list[Interaction]:
    """The interactions of a ``.vcr.yaml`` cassette, bodies decompressed."""
    data = yaml.safe_load(fixture(name).read_text())
    out = []
    for item in data["interactions"]:
        request = item["request"].get("parsed_body") or item["request"].get("body")
        if isinstance(request, str):
            request = json.loads(request)
        response = item["response"]
        headers = {k.lower(): v[0] for k, v in (response.get("headers") or {}).items()}
        raw = response.get("body", {}).get("string") if response.get("body") else None
        if raw is None:
            raw = json.dumps(response["parsed_body"])
        body = raw if isinstance(raw, bytes) else raw.encode()
        gzipped = headers.get("content-encoding") == "gzip"
        if gzipped:
            body = gzip.decompress(body)
        out.append(Interaction(request, response["status"]["code"], headers, body, gzipped))
    return out


@dataclass
class Turn:
    """A model turn assembled from its events, as the agent loop would store it."""

    text: str = ""
    reasoning: str = ""
    signature: str = ""
    calls: list[tuple[str, str, str]] = field(default_factory=list)  # id, name, raw JSON
    end: IterationEnd | None = None

    @property
    def arguments(self) -> list[tuple[str, Any]]:
        """``(name, parsed arguments)`` of each call."""
        return [(name, json.loads(raw) if raw.strip() else {}) for _, name, raw in self.calls]


def assemble(events: Iterable[StreamEvent]) -> Turn:
    turn = Turn()
    parts: dict[str, list[str]] = {}
    order: list[tuple[str, str]] = []
    ends = 0
    for event in events:
        match event:
            case TextDelta(delta=delta):
                turn.text += delta
            case ReasoningDelta(delta=delta, signature=signature):
                turn.reasoning += delta
                turn.signature += signature
            case ToolUseStart(tool_use_id=tid, name=name):
                assert tid not in parts, f"tool call {tid} started twice"
                parts[tid] = []
                order.append((tid, name))
            case ToolInputDelta(tool_use_id=tid, partial_json=partial):
                parts[tid].append(partial)
            case IterationEnd():
                ends += 1
                turn.end = event
            case _:
                raise AssertionError(f"unexpected event {event!r}")
    assert ends == 1, f"expected exactly one IterationEnd, got {ends}"
    turn.calls = [(tid, name, "".join(parts[tid])) for tid, name in order]
    return turn
