"""The provider streams the transport tests replay, and a helper that assembles a turn from
stream events as the agent loop does.

Two sources, looked up by file name:

- ours, in ``fixtures/`` beside this file: streams recorded from llama.cpp's server
  (``fixtures/record_local.py`` re-records them) and streams hand-written from the providers'
  documented formats. Tests on them always run.
- the third-party recordings in ``shared/fixtures/llm`` beside the repository clone (see
  its SOURCES.md): an extra conformance layer. Tests on them carry the ``conformance``
  marker and are skipped when the folder is absent, unless the env var ``CI`` is set.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from swarm import (
    IterationEnd,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
)

OURS = Path(__file__).parent / "fixtures"
THIRD_PARTY = Path(__file__).parents[2].parent / "shared/fixtures/llm"
THIRD_PARTY_ABSENT = (
    "the third-party recordings in ../shared/fixtures/llm are not present: an extra"
    " conformance layer that runs in CI"
)


def skip_conformance(folder: Path = THIRD_PARTY, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether ``conformance`` tests are skipped: the recordings are absent and this is not
    CI (with ``CI`` set, even empty, a missing recording fails its test)."""
    return not folder.is_dir() and "CI" not in environ


def conformance(*values: Any, id: str | None = None) -> Any:
    """A parameter set that replays a third-party recording (see ``skip_conformance``)."""
    return pytest.param(*values, marks=pytest.mark.conformance, id=id)


@functools.cache
def _ours() -> dict[str, Path]:
    return {path.name: path for path in OURS.rglob("*") if path.is_file()}


def fixture(name: str) -> Path:
    """The path of a stream: ours first, else a third-party recording; fails loudly when
    a third-party recording is asked for and ``shared/`` is not beside the repo."""
    ours = _ours().get(name)
    if ours is not None:
        return ours
    if not THIRD_PARTY.is_dir():
        raise FileNotFoundError(
            f"the LLM recordings are missing: expected {name} in {THIRD_PARTY} (shared/ must"
            " sit beside the repository clone)"
        )
    path = THIRD_PARTY / name
    if not path.is_file():
        raise FileNotFoundError(f"recording {name} is missing from {OURS} and {THIRD_PARTY}")
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
    """The interactions of an exchange: a third-party ``.vcr.yaml`` cassette (bodies
    decompressed) or one of ours (``.yaml`` naming a response file per interaction)."""
    path = fixture(name)
    if name.endswith(".vcr.yaml"):
        return _vcr(path)
    data = yaml.safe_load(path.read_text())
    out = []
    for item in data["interactions"]:
        headers = item.get("headers") or {"content-type": "text/event-stream"}
        body = (path.parent / item["response"]).read_bytes()
        out.append(
            Interaction(
                item["request"], item.get("status", 200), headers, body, item.get("gzip", False)
            )
        )
    return out


def _vcr(path: Path) -> list[Interaction]:
    data = yaml.safe_load(path.read_text())
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
