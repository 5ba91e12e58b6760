"""Anthropic's Messages API, streamed.

Request: the system prompt (with any ``system`` messages of the history appended) goes in
``system``; messages alternate user/assistant as the API requires, so consecutive messages
of one role are merged; tool results are ``tool_result`` blocks in a user message; a
``ReasoningBlock`` goes back as a ``thinking`` block with its signature (one without a
signature, e.g. from another provider, cannot be verified and is dropped); empty text
blocks are dropped; ``details`` never leave the process.

Response: ``content_block_start``/``delta``/``stop`` with ``text_delta``, ``thinking_delta``,
``signature_delta`` (a ``ReasoningDelta`` carrying only the signature) and
``input_json_delta``; ``message_start`` and ``message_delta`` carry usage and the stop
reason. Input tokens include cache reads and writes (they all fill the context window),
and ``Usage`` keeps the parts: ``cache_read_input_tokens``, ``cache_creation_input_tokens``
and, from ``cache_creation.ephemeral_1h_input_tokens``, the part written for an hour.
``error`` events raise ``ProviderError``; ``ping``, server-side tool blocks and unknown
event or block types are ignored. Block indexes are Anthropic's own.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any, assert_never

import httpx

from swarm.errors import ConfigError, TransportError
from swarm.events import (
    IterationEnd,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
)
from swarm.messages import (
    ImageBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from swarm.tools import Tool
from swarm.transports._http import HTTPTransport, error_details
from swarm.transports.options import (
    API_KEY_VARIABLES,
    CacheTTL,
    PerRequest,
    Timeouts,
    ToolChoice,
)
from swarm.transports.retry import ProviderError, RetryPolicy
from swarm.transports.sse import SSEEvent
from swarm.types import StopReason, Usage

__all__ = [
    "ANTHROPIC_VERSION",
    "AnthropicStreamDecoder",
    "AnthropicTransport",
    "anthropic_messages",
    "anthropic_tools",
    "mark_cache_breakpoints",
]

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"

_STOP = {
    "end_turn": StopReason.end_turn,
    "stop_sequence": StopReason.end_turn,
    "pause_turn": StopReason.end_turn,
    "tool_use": StopReason.tool_use,
    "max_tokens": StopReason.max_tokens,
    "model_context_window_exceeded": StopReason.max_tokens,
    "refusal": StopReason.error,
}
_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
_TOOL_CHOICE = {"auto": "auto", "required": "any", "none": "none"}


def _image(image: ImageBlock) -> dict[str, Any]:
    data = base64.b64encode(image.data).decode("ascii")
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image.media_type, "data": data},
    }


def _tool_result(result: ToolResultBlock) -> dict[str, Any]:
    content: str | list[dict[str, Any]]
    if isinstance(result.content, str):
        content = result.content
    else:
        content = [
            {"type": "text", "text": b.text} if isinstance(b, TextBlock) else _image(b)
            for b in result.content
            if not isinstance(b, TextBlock) or b.text
        ]
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.tool_use_id}
    if content:
        out["content"] = content
    if result.is_error:
        out["is_error"] = True
    return out


def _blocks(message: Message) -> list[dict[str, Any]]:
    user = message.role == "user"
    out: list[dict[str, Any]] = []
    for block in message.content:
        match block:
            case TextBlock(text=text):
                if text:
                    out.append({"type": "text", "text": text})
            case ImageBlock():
                if user:
                    out.append(_image(block))
            case ToolResultBlock():
                if user:
                    out.append(_tool_result(block))
            case ToolUseBlock(id=id_, name=name, input=input_):
                if not user:
                    out.append({"type": "tool_use", "id": id_, "name": name, "input": input_})
            case ReasoningBlock(text=text, signature=signature):
                if not user and signature:
                    out.append({"type": "thinking", "thinking": text, "signature": signature})
            case _:
                assert_never(block)
    return out


def anthropic_messages(
    messages: Sequence[Message], system: str, *, prefill: str | None = None
) -> tuple[str, list[dict[str, Any]]]:
    """``(system, messages)`` for the Messages API (see the module docstring)."""
    systems = [system] if system else []
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            if message.text:
                systems.append(message.text)
            continue
        blocks = _blocks(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == message.role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": message.role, "content": blocks})
    if prefill:
        block = {"type": "text", "text": prefill}
        if out and out[-1]["role"] == "assistant":
            out[-1]["content"].append(block)
        else:
            out.append({"role": "assistant", "content": [block]})
    return "\n\n".join(systems), out


def anthropic_tools(tools: Sequence[Tool[Any]]) -> list[dict[str, Any]]:
    """Tools as Messages API tool definitions."""
    return [
        {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}
        for tool in tools
    ]


_UNMARKABLE = ("thinking", "redacted_thinking")


def _mark_last_block(message: dict[str, Any], control: dict[str, str]) -> bool:
    for block in reversed(message["content"]):
        if block.get("type") not in _UNMARKABLE:
            block["cache_control"] = control
            return True
    return False


def mark_cache_breakpoints(body: dict[str, Any], ttl: CacheTTL = "5m") -> int:
    """Add ``cache_control`` breakpoints to a Messages API request body, at most four:
    the last tool, the system prompt, the end of the previous turn (the user message
    before the last one) and the end of the last user message. A request's prefix up to
    each breakpoint is written to the cache, and the next request of the same agent,
    which extends it, reads it back. Returns how many were placed."""
    control = {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}
    placed = 0
    tools = body.get("tools")
    if tools:
        tools[-1] = {**tools[-1], "cache_control": control}
        placed += 1
    system = body.get("system")
    if isinstance(system, str) and system:
        body["system"] = [{"type": "text", "text": system, "cache_control": control}]
        placed += 1
    users = [m for m in body["messages"] if m["role"] == "user" and m["content"]]
    for message in users[-1:-3:-1]:  # the end of the request, then of the previous turn
        if placed < 4 and _mark_last_block(message, control):
            placed += 1
    return placed


def _stream_error(provider: str, payload: dict[str, Any]) -> ProviderError:
    message, error_type, status = error_details(payload)
    status = status or _ERROR_STATUS.get(error_type or "")
    retryable = error_type in ("overloaded_error", "api_error", "rate_limit_error", "timeout_error")
    return ProviderError(
        f"{provider} reported an error in the stream"
        f"{f' ({error_type})' if error_type else ''}: {message}",
        status=status,
        retryable=retryable,
        error_type=error_type,
    )


class AnthropicStreamDecoder:
    """Messages API stream events in, our stream events out (see the module docstring)."""

    __slots__ = ("_blocks", "_cache", "_input", "_output", "_stop", "done", "provider")

    def __init__(self, provider: str = "anthropic") -> None:
        self.provider = provider
        self.done = False
        # index -> (kind, tool id, input given at the start, whether input deltas came)
        self._blocks: dict[int, list[Any]] = {}
        self._input = 0
        self._output = 0
        self._cache = [0, 0, 0]  # read, write, write kept for an hour
        self._stop: str | None = None

    def feed(self, sse: SSEEvent) -> list[StreamEvent]:
        """Decode one SSE event. Raises ``TransportError`` on an error event or bad JSON."""
        try:
            data = json.loads(sse.data)
        except ValueError as exc:
            raise TransportError(
                f"{self.provider}: malformed JSON in the stream ({exc}): {sse.data[:200]!r}"
            ) from None
        if not isinstance(data, dict):
            raise TransportError(f"{self.provider}: unexpected stream event: {sse.data[:200]!r}")
        kind = data.get("type") or sse.event
        if kind == "content_block_delta":
            return self._delta(data)
        if kind == "content_block_start":
            return self._start(data)
        if kind == "content_block_stop":
            return self._deferred_input(data.get("index", 0))
        if kind == "message_start":
            self._usage((data.get("message") or {}).get("usage"))
        elif kind == "message_delta":
            self._stop = (data.get("delta") or {}).get("stop_reason") or self._stop
            self._usage(data.get("usage"))
        elif kind == "message_stop":
            self.done = True
        elif kind == "error" or sse.event == "error":
            raise _stream_error(self.provider, data)
        return []

    def _usage(self, usage: dict[str, Any] | None) -> None:
        # ``message_delta`` may repeat the counts of ``message_start``: the last one wins
        if not usage:
            return
        cache = self._cache
        if usage.get("cache_read_input_tokens") is not None:
            cache[0] = int(usage["cache_read_input_tokens"] or 0)
        if usage.get("cache_creation_input_tokens") is not None:
            cache[1] = int(usage["cache_creation_input_tokens"] or 0)
        lifetimes = usage.get("cache_creation")
        if isinstance(lifetimes, dict) and lifetimes.get("ephemeral_1h_input_tokens") is not None:
            cache[2] = int(lifetimes["ephemeral_1h_input_tokens"] or 0)
        if usage.get("input_tokens") is not None:
            self._input = int(usage.get("input_tokens") or 0)
        if usage.get("output_tokens") is not None:
            self._output = int(usage["output_tokens"])

    def _start(self, data: dict[str, Any]) -> list[StreamEvent]:
        index = int(data.get("index", 0))
        block = data.get("content_block") or {}
        kind = block.get("type")
        if kind == "tool_use":
            self._blocks[index] = ["tool", block.get("id", ""), block.get("input"), False]
            return [ToolUseStart(index, block.get("id", ""), block.get("name", ""))]
        self._blocks[index] = [kind, "", None, False]
        if kind == "text" and block.get("text"):
            return [TextDelta(index, block["text"])]
        if kind == "thinking" and (block.get("thinking") or block.get("signature")):
            return [ReasoningDelta(index, block.get("thinking", ""), block.get("signature", ""))]
        return []

    def _delta(self, data: dict[str, Any]) -> list[StreamEvent]:
        index = int(data.get("index", 0))
        delta = data.get("delta") or {}
        kind = delta.get("type")
        block = self._blocks.get(index)
        if kind == "text_delta":
            text = delta.get("text")
            return [TextDelta(index, text)] if text else []
        if kind == "input_json_delta":
            partial = delta.get("partial_json")
            if block is None or block[0] != "tool" or not partial:
                return []  # server-side tools stream their input too: not ours to run
            block[3] = True
            return [ToolInputDelta(index, block[1], partial)]
        if kind == "thinking_delta":
            thinking = delta.get("thinking")
            return [ReasoningDelta(index, thinking)] if thinking else []
        if kind == "signature_delta":
            signature = delta.get("signature")
            return [ReasoningDelta(index, "", signature)] if signature else []
        return []

    def _deferred_input(self, index: int) -> list[StreamEvent]:
        """A tool block whose input came whole in its start event and never as deltas."""
        block = self._blocks.get(index)
        if block is None or block[0] != "tool" or block[3] or not block[2]:
            return []
        block[3] = True
        return [ToolInputDelta(index, block[1], json.dumps(block[2], ensure_ascii=False))]

    def finish(self) -> list[StreamEvent]:
        """The final ``IterationEnd``; raises a retryable ``TransportError`` when the stream
        stopped before the message was complete."""
        if not self.done and self._stop is None:
            raise TransportError(
                f"{self.provider}: the stream ended before the response was complete",
                retryable=True,
            )
        events: list[StreamEvent] = []
        for index in list(self._blocks):
            events.extend(self._deferred_input(index))
        stop = _STOP.get(self._stop or "", StopReason.end_turn)
        read, write, write_1h = self._cache
        usage = Usage(self._input + read + write, self._output, read, write, min(write_1h, write))
        events.append(IterationEnd(1, stop, usage))
        return events


class AnthropicTransport(HTTPTransport):
    """A Claude model behind Anthropic's Messages API (or a server emulating it).

    The API key comes from ``api_key`` or else ``ANTHROPIC_API_KEY``; ``api_key=""`` sends
    none. ``thinking_budget`` turns on extended thinking with that many tokens (it must be
    below ``max_tokens``); the reasoning streams as ``ReasoningDelta`` and goes back signed.
    ``tool_choice="required"`` is sent as ``{"type": "any"}``. With prompt caching
    (``cache``; by default on at Anthropic's own API, see ``HTTPTransport.caching``) each
    request carries ``cache_control`` breakpoints (``cache_ttl``: ``"5m"`` or ``"1h"``),
    at most four as the API allows: on the last tool, on the system prompt, on the end of
    the previous turn and on the end of the request, so the next request of the agent
    reads from the cache everything this one sent. See
    ``swarm.transports.options`` for ``tool_choice``, ``prefill`` and ``timeout``, and
    ``RetryPolicy`` for ``max_retries``/``retry``. Raises ``ConfigError`` for a thinking
    budget that does not fit.
    """

    provider = "anthropic"
    api_key_env = API_KEY_VARIABLES["anthropic"]
    default_base_url = ANTHROPIC_BASE_URL
    path = "/v1/messages"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = ANTHROPIC_BASE_URL,
        api_key: str | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: Timeouts | float | None = None,
        max_tokens: int = 4096,
        thinking_budget: int | None = None,
        temperature: float | None = None,
        tool_choice: ToolChoice | PerRequest[ToolChoice] | None = None,
        prefill: str | PerRequest[str] | None = None,
        required_prefill: str | None = None,
        extra_body: dict[str, Any] | None = None,
        extra_headers: dict[str, str] | None = None,
        max_retries: int = 2,
        retry: RetryPolicy | None = None,
        context_window: int | None = None,
        max_connections: int | None = 512,
        cache: bool | None = None,
        cache_ttl: CacheTTL = "5m",
    ) -> None:
        args = dict(locals())
        if thinking_budget is not None and not 0 < thinking_budget < max_tokens:
            raise ConfigError(
                f"thinking_budget ({thinking_budget}) must be positive and below max_tokens"
                f" ({max_tokens})",
                field="thinking_budget",
            )
        super().__init__(
            model,
            base_url=base_url,
            api_key=api_key,
            client=client,
            timeout=timeout,
            max_retries=max_retries,
            retry=retry,
            max_tokens=max_tokens,
            temperature=temperature,
            tool_choice=tool_choice,
            prefill=prefill,
            required_prefill=required_prefill,
            extra_body=extra_body,
            extra_headers=extra_headers,
            context_window=context_window,
            max_connections=max_connections,
            args=args,
            cache=cache,
            cache_ttl=cache_ttl,
        )
        self.thinking_budget = thinking_budget

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[Tool[Any]], system: str
    ) -> dict[str, Any]:
        """The Messages API request body for one call."""
        system_text, converted = anthropic_messages(
            messages, system, prefill=self._option_prefill(messages)
        )
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": converted,
            "stream": True,
        }
        if system_text:
            body["system"] = system_text
        if tools:
            body["tools"] = anthropic_tools(tools)
            choice = self._option_tool_choice(messages)
            if choice is not None:
                body["tool_choice"] = {"type": _TOOL_CHOICE[choice]}
        if self.thinking_budget is not None:
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.caching:
            mark_cache_breakpoints(body, self.cache_ttl)
        body.update(self.extra_body)
        return body

    def _auth_headers(self, api_key: str) -> dict[str, str]:
        return {"x-api-key": api_key}

    def _headers(self) -> dict[str, str]:
        return {"anthropic-version": ANTHROPIC_VERSION, **super()._headers()}

    def _decoder(self) -> AnthropicStreamDecoder:
        return AnthropicStreamDecoder(self.provider)
