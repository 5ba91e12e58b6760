"""OpenAI Chat Completions (and every server that speaks its dialect), streamed.

Request: the system prompt first, then the history. Tool results become ``role: tool``
messages right after the assistant message that called them; images in tool results (the
``tool`` role takes text only) are hoisted into one user message after them. Reasoning
blocks are dropped (the API has no field for them) and ``details`` never leave the process.

Response: ``content`` and ``refusal`` deltas are text, ``reasoning_content``/``reasoning``
deltas are reasoning, ``tool_calls`` deltas are assembled per ``index``: the id and name may
come only on the first delta, arguments arrive in pieces, parallel calls interleave, and a
server may repeat a call's id and name (its arguments are then appended). Only choice 0 is
read. Finish reasons map to ``StopReason`` (``stop`` and a missing reason become
``tool_use`` when the turn called tools), and the usage chunk fills the one final
``IterationEnd``: ``prompt_tokens`` (cached ones included) is the input, and the cached
part comes from ``prompt_tokens_details.cached_tokens`` (OpenAI, OpenRouter, vLLM), a
top-level ``cached_tokens`` (Moonshot) or ``prompt_cache_hit_tokens`` (DeepSeek); a
``cache_write_tokens`` beside them (OpenRouter, for models that bill writes) is the write.
An error object in the stream (``data: {"error": ...}``, even on HTTP 200) raises
``ProviderError``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, assert_never

import httpx

from swarm.contracts import FINAL_ANSWER, OutputContract, structured_output
from swarm.errors import TransportError
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
from swarm.transports.grammar import ANSWER_LIMIT, answer_grammar, call_events, call_schema
from swarm.transports.options import (
    API_KEY_VARIABLES,
    CacheTTL,
    PerRequest,
    Timeouts,
    ToolChoice,
)
from swarm.transports.retry import ProviderError, RetryPolicy, is_retryable_status
from swarm.transports.sse import SSEEvent
from swarm.types import StopReason, Usage

__all__ = [
    "OpenAIStreamDecoder",
    "OpenAITransport",
    "openai_messages",
    "openai_tools",
    "openai_usage",
    "role_cache_key",
]

OPENAI_BASE_URL = "https://api.openai.com/v1"

_FINISH = {
    "stop": StopReason.end_turn,
    "tool_calls": StopReason.tool_use,
    "function_call": StopReason.tool_use,
    "length": StopReason.max_tokens,
    "content_filter": StopReason.error,
}


def _image_part(image: ImageBlock) -> dict[str, Any]:
    data = base64.b64encode(image.data).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{image.media_type};base64,{data}"}}


def _user_content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if len(parts) == 1 and parts[0]["type"] == "text":
        return str(parts[0]["text"])
    return parts


def _arguments(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def _convert(message: Message) -> list[dict[str, Any]]:
    if message.role == "system":
        return [{"role": "system", "content": message.text}] if message.text else []
    if message.role == "assistant":
        text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
        calls = [
            {
                "id": b.id,
                "type": "function",
                "function": {"name": b.name, "arguments": _arguments(b.input)},
            }
            for b in message.content
            if isinstance(b, ToolUseBlock)
        ]
        if not text and not calls:
            return []
        out: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            out["tool_calls"] = calls
        return [out]
    converted: list[dict[str, Any]] = []
    hoisted: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in message.content:
        match block:
            case ToolResultBlock():
                converted.append(_tool_message(block, hoisted))
            case TextBlock(text=text):
                if text:
                    parts.append({"type": "text", "text": text})
            case ImageBlock():
                parts.append(_image_part(block))
            case ReasoningBlock() | ToolUseBlock():
                pass
            case _:
                assert_never(block)
    parts = hoisted + parts
    if parts:
        converted.append({"role": "user", "content": _user_content(parts)})
    return converted


def _tool_message(result: ToolResultBlock, hoisted: list[dict[str, Any]]) -> dict[str, Any]:
    if isinstance(result.content, str):
        text = result.content
    else:
        images = [b for b in result.content if isinstance(b, ImageBlock)]
        text = result.text
        if images:
            hoisted.append(
                {"type": "text", "text": f"The images returned by tool call {result.tool_use_id}:"}
            )
            hoisted.extend(_image_part(image) for image in images)
            note = f"[{len(images)} image(s) follow in the next user message]"
            text = f"{text}\n{note}" if text else note
    return {"role": "tool", "tool_call_id": result.tool_use_id, "content": text}


def openai_messages(
    messages: Sequence[Message], system: str, *, prefill: str | None = None
) -> list[dict[str, Any]]:
    """Our history as Chat Completions ``messages`` (see the module docstring)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        out.extend(_convert(message))
    if prefill:
        out.append({"role": "assistant", "content": prefill})
    return out


def response_format(contract: OutputContract) -> dict[str, Any]:
    """The structured output mode for a typed answer: a ``json_schema`` response format
    (llama.cpp turns it into a grammar, so a small model cannot write anything else)."""
    schema = dict(contract.closed_schema)
    return {"type": "json_schema", "json_schema": {"name": FINAL_ANSWER, "schema": schema}}


def openai_tools(tools: Sequence[Tool[Any]]) -> list[dict[str, Any]]:
    """Tools as Chat Completions ``function`` tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
            },
        }
        for tool in tools
    ]


@dataclass(slots=True)
class _Call:
    index: int
    id: str
    name: str = ""
    started: bool = False
    pending: list[str] = field(default_factory=list)


class OpenAIStreamDecoder:
    """Chat Completions chunks in, stream events out (see the module docstring)."""

    __slots__ = ("_block", "_calls", "_finish", "_kind", "_order", "_usage", "done", "provider")

    def __init__(self, provider: str = "openai") -> None:
        self.provider = provider
        self.done = False
        self._block = -1
        self._kind = ""
        self._calls: dict[int, _Call] = {}
        self._order: list[_Call] = []
        self._finish: str | None = None
        self._usage = Usage()

    def _index(self, kind: str) -> int:
        """The block index for a piece of ``kind``: a new block when the kind changes."""
        if self._kind != kind:
            self._kind = kind
            self._block += 1
        return self._block

    def _new_call(self, position: int, call_id: str) -> _Call:
        self._kind = "tool"
        self._block += 1
        call = self._calls[position] = _Call(self._block, call_id)
        self._order.append(call)
        return call

    def feed(self, sse: SSEEvent) -> list[StreamEvent]:
        """Decode one SSE event. Raises ``TransportError`` on an error object or bad JSON."""
        if self.done:
            return []
        data = sse.data
        if data == "[DONE]":
            self.done = True
            return []
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise TransportError(
                f"{self.provider}: malformed JSON in the stream ({exc}): {data[:200]!r}"
            ) from None
        if not isinstance(chunk, dict):
            raise TransportError(f"{self.provider}: unexpected stream chunk: {data[:200]!r}")
        if chunk.get("error") or sse.event == "error":
            raise _stream_error(self.provider, chunk)
        usage = chunk.get("usage")
        if usage:
            self._usage = openai_usage(usage)
        events: list[StreamEvent] = []
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            self._delta(delta, events)
            if choice.get("finish_reason"):
                self._finish = choice["finish_reason"]
        return events

    def _delta(self, delta: dict[str, Any], events: list[StreamEvent]) -> None:
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            events.append(ReasoningDelta(self._index("reasoning"), reasoning))
        for key in ("content", "refusal"):
            text = delta.get(key)
            if isinstance(text, str) and text:
                events.append(TextDelta(self._index("text"), text))
        for piece in delta.get("tool_calls") or ():
            self._tool_delta(piece, events)

    def _tool_delta(self, piece: dict[str, Any], events: list[StreamEvent]) -> None:
        function = piece.get("function") or {}
        call_id = piece.get("id")
        position = piece.get("index")
        if not isinstance(position, int):
            position = self._position_of(call_id)
        call = self._calls.get(position)
        if call is None or (call_id and call.id and call.id != call_id):
            call = self._new_call(position, call_id or "")
        if call_id and not call.id:
            call.id = call_id
        if function.get("name") and not call.name:
            call.name = function["name"]
        arguments = function.get("arguments")
        if isinstance(arguments, str) and arguments:
            call.pending.append(arguments)
        if not call.started and call.name:
            call.id = call.id or f"call_{uuid.uuid4().hex[:24]}"
            call.started = True
            events.append(ToolUseStart(call.index, call.id, call.name))
        if call.started and call.pending:
            events.append(ToolInputDelta(call.index, call.id, "".join(call.pending)))
            call.pending.clear()

    def _position_of(self, call_id: str | None) -> int:
        for position, call in self._calls.items():
            if call_id and call.id == call_id:
                return position
        if call_id or not self._calls:
            return max(self._calls, default=-1) + 1
        return max(self._calls)

    def finish(self) -> list[StreamEvent]:
        """The final ``IterationEnd``; raises a retryable ``TransportError`` when the stream
        stopped before ``[DONE]`` or a finish reason."""
        if not self.done and self._finish is None:
            raise TransportError(
                f"{self.provider}: the stream ended before the response was complete",
                retryable=True,
            )
        events: list[StreamEvent] = []
        for call in self._order:
            if not call.started:  # a call that never got a name: let the loop report it
                call.id = call.id or f"call_{uuid.uuid4().hex[:24]}"
                events.append(ToolUseStart(call.index, call.id, call.name))
                if call.pending:
                    events.append(ToolInputDelta(call.index, call.id, "".join(call.pending)))
        stop = _FINISH.get(self._finish or "", StopReason.end_turn)
        if self._order and stop == StopReason.end_turn:
            stop = StopReason.tool_use
        events.append(IterationEnd(1, stop, self._usage))
        return events


def role_cache_key(system: str, tools: Sequence[Tool[Any]]) -> str:
    """A ``prompt_cache_key`` that stays the same for every request of a role: a digest of
    its system prompt and its tools' names (the start of every prompt it sends)."""
    digest = hashlib.sha256(system.encode())
    for tool in tools:
        digest.update(b"\0" + tool.name.encode())
    return "swarm-" + digest.hexdigest()[:24]


def _count(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and value > 0 else 0


def openai_usage(usage: dict[str, Any]) -> Usage:
    """A Chat Completions ``usage`` object as ``Usage`` (see the module docstring)."""
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    read = _count(
        details.get("cached_tokens")
        or usage.get("cached_tokens")
        or usage.get("prompt_cache_hit_tokens")
    )
    write = _count(details.get("cache_write_tokens") or usage.get("cache_write_tokens"))
    return Usage(
        _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")), read, write
    )


def _stream_error(provider: str, chunk: dict[str, Any]) -> ProviderError:
    message, error_type, status = error_details(chunk)
    retryable = (status is not None and is_retryable_status(status)) or error_type in (
        "server_error",
        "rate_limit_exceeded",
        "overloaded_error",
    )
    return ProviderError(
        f"{provider} reported an error in the stream"
        f"{f' ({error_type})' if error_type else ''}: {message}",
        status=status,
        retryable=retryable,
        error_type=error_type,
    )


class OpenAITransport(HTTPTransport):
    """A model behind the Chat Completions API: OpenAI's own, or any compatible server
    (``base_url="http://127.0.0.1:8080/v1"`` for llama.cpp, vLLM, Ollama...).

    The API key comes from ``api_key`` or else ``OPENAI_API_KEY``; ``api_key=""`` sends
    none. ``max_tokens`` is sent as ``max_completion_tokens`` to OpenAI's own API and as
    ``max_tokens`` elsewhere, unless ``max_tokens_field`` says which. ``extra_body`` is
    merged into every request last (e.g. ``{"seed": 1, "parallel_tool_calls": False}``).
    With prompt caching (``cache``; by default on at OpenAI's own API, see
    ``HTTPTransport.caching``) each request carries a ``prompt_cache_key``: the one given,
    else one derived from the system prompt and the tools' names, so every agent of a role
    shares a key and requests of one role land where its prefix is cached (OpenAI caches
    prompts by itself and chooses their lifetime; ``cache_ttl`` is not sent). See
    ``swarm.transports.options`` for ``tool_choice``, ``prefill`` and ``timeout``, and
    ``RetryPolicy`` for ``max_retries``/``retry``. A call whose only tool is an agent's
    ``final_answer`` (a typed answer, ``swarm.contracts``) asks for the JSON itself
    through ``response_format`` (``json_schema``) instead of offering the tool.
    ``tool_grammar=True`` is for llama.cpp's server and a model too small to follow its
    chat template's tool format: a forced call (``tool_choice`` ``required``) is exactly one
    call, sampled under a JSON-schema grammar of the tools, and every other call of an
    agent with tools is a plain-text answer under a grammar that ends it within
    ``max_tokens`` (see ``swarm.transports.grammar``); such a model calls tools only when
    forced.
    """

    provider = "openai"
    api_key_env = API_KEY_VARIABLES["openai"]
    default_base_url = OPENAI_BASE_URL
    path = "/chat/completions"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = OPENAI_BASE_URL,
        api_key: str | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: Timeouts | float | None = None,
        max_tokens: int | None = None,
        max_tokens_field: Literal["max_tokens", "max_completion_tokens"] | None = None,
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
        prompt_cache_key: str | None = None,
        tool_grammar: bool = False,
    ) -> None:
        args = dict(locals())
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
        self.prompt_cache_key = prompt_cache_key
        if max_tokens_field is None:
            official = self.base_url == OPENAI_BASE_URL
            max_tokens_field = "max_completion_tokens" if official else "max_tokens"
        self.max_tokens_field = max_tokens_field
        self.tool_grammar = tool_grammar

    def _grammar_call(self, messages: Sequence[Message], tools: Sequence[Tool[Any]]) -> bool:
        """Whether this request is a forced call made under the tools' JSON schema."""
        return bool(
            self.tool_grammar
            and tools
            and structured_output(tools) is None  # a typed answer asks for its JSON itself
            and self._option_tool_choice(messages) == "required"
        )

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[Tool[Any]], system: str
    ) -> dict[str, Any]:
        """The Chat Completions request body for one call."""
        grammar_call = self._grammar_call(messages, tools)
        # under the grammar the call starts at once: a prefill would stand before it
        prefill = None if grammar_call else self._option_prefill(messages)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": openai_messages(messages, system, prefill=prefill),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        contract = structured_output(tools)
        if contract is not None:  # only final_answer offered: ask for the JSON itself
            body["response_format"] = response_format(contract)
        elif grammar_call:
            body["tools"] = openai_tools(tools)  # the chat template describes them
            body["json_schema"] = call_schema(tools)
        elif tools and self.tool_grammar:
            body["grammar"] = answer_grammar(min(self.max_tokens or ANSWER_LIMIT, ANSWER_LIMIT))
        elif tools:
            body["tools"] = openai_tools(tools)
            choice = self._option_tool_choice(messages)
            if choice is not None:
                body["tool_choice"] = choice
        if self.max_tokens is not None:
            body[self.max_tokens_field] = self.max_tokens
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.caching:
            body["prompt_cache_key"] = self.prompt_cache_key or role_cache_key(system, tools)
        body.update(self.extra_body)
        return body

    async def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        """Stream one model call (see ``HTTPTransport.stream``); a call made under the
        tools' JSON schema arrives as text and is given back as the tool call it holds."""
        if not self._grammar_call(messages, tools):
            async for event in super().stream(messages, tools, system):
                yield event
            return
        text: list[str] = []
        async for event in super().stream(messages, tools, system):
            if isinstance(event, TextDelta):
                text.append(event.delta)
            elif isinstance(event, IterationEnd):
                for each in call_events("".join(text), event):
                    yield each
            else:
                yield event

    def _auth_headers(self, api_key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {api_key}"}

    def _decoder(self) -> OpenAIStreamDecoder:
        return OpenAIStreamDecoder(self.provider)
