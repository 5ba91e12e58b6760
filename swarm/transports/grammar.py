"""Tool calls and answers constrained by llama.cpp's grammars, for models too small to
follow a chat template's tool-call format on their own.

llama.cpp's server samples under a grammar when a request carries ``json_schema`` (a JSON
schema it compiles to one) or ``grammar`` (GBNF). ``OpenAITransport(tool_grammar=True)``
uses both:

- a forced call (``tool_choice`` ``required``) carries ``call_schema(tools)``: the output
  can only be *one* JSON object ``{"name": <a tool>, "arguments": <its input schema>}``,
  with every unbounded string capped (``STRING_LIMIT``) so a model that repeats itself
  still closes the object. The transport turns that text back into a tool call
  (``call_events``);
- every other call (the answer after tool results) carries no tools and
  ``answer_grammar(n)``: plain text without ``<`` (so no echoed ``<tool_response>`` or
  half a ``<tool_call>``), at most ``n`` characters, which ends before a token limit of
  ``n`` could cut it off.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from swarm.events import IterationEnd, StreamEvent, TextDelta, ToolInputDelta, ToolUseStart
from swarm.tools import Tool
from swarm.types import StopReason

__all__ = ["ANSWER_LIMIT", "STRING_LIMIT", "answer_grammar", "call_events", "call_schema"]

STRING_LIMIT = 120
"""The most characters a string argument without its own ``maxLength`` may have."""

ANSWER_LIMIT = 400
"""The most characters of a constrained answer (fewer when ``max_tokens`` is lower)."""


def _capped(schema: Any) -> Any:
    """``schema`` with ``maxLength`` added to every free string in it."""
    if isinstance(schema, list):
        return [_capped(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _capped(value) for key, value in schema.items()}
    free = not ({"maxLength", "enum", "const", "pattern", "format"} & out.keys())
    if out.get("type") == "string" and free:
        out["maxLength"] = STRING_LIMIT
    return out


def call_schema(tools: Sequence[Tool[Any]]) -> dict[str, Any]:
    """The JSON schema of exactly one call of one of ``tools``."""
    return {
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "name": {"const": tool.name},
                    "arguments": _capped(tool.input_schema),
                },
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
            for tool in tools
        ]
    }


def answer_grammar(limit: int) -> str:
    """GBNF for a plain-text answer of 1 to ``limit`` characters with no ``<`` in it."""
    return f"root ::= [^<]{{1,{max(1, limit)}}}"


def call_events(text: str, end: IterationEnd) -> list[StreamEvent]:
    """The events of the one call ``text`` (the constrained output) holds; the text itself
    (and ``end`` unchanged) when it is not such a call, e.g. cut off by a token limit."""
    try:
        call = json.loads(text)
    except ValueError:
        call = None
    if not (isinstance(call, dict) and isinstance(call.get("name"), str)):
        return [TextDelta(0, text), end] if text else [end]
    arguments = call.get("arguments")
    call_id = f"call_{uuid.uuid4().hex[:24]}"
    return [
        ToolUseStart(0, call_id, call["name"]),
        ToolInputDelta(0, call_id, json.dumps(arguments if isinstance(arguments, dict) else {})),
        IterationEnd(end.iteration, StopReason.tool_use, end.usage),
    ]
