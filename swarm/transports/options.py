"""Options every HTTP transport takes: timeouts, ``tool_choice``, ``prefill`` and prompt
caching (``cache``, ``cache_ttl``).

``tool_choice`` and ``prefill`` are either a fixed value or a function of the messages of
the request, so they can change from one model call to the next. ``on_user_turn`` builds
the common such function: a value for the first call after the user spoke, another (or
none) for the calls that carry tool results back. A small local model that only calls
tools reliably when forced and primed needs exactly that::

    OpenAITransport(
        "smollm2-135m-instruct",
        base_url="http://127.0.0.1:8080/v1",
        tool_choice=on_user_turn("required", otherwise="auto"),
        prefill=on_user_turn("<tool_call>\\n"),
    )

``prefill`` is sent as a final assistant message that the model continues. The prefill
text itself is not emitted as a ``TextDelta`` (so it is not stored in history either): it
steers the model, it is not part of the answer. Servers that do not support continuing an
assistant message (OpenAI's own API) treat it as an earlier turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, TypeVar

from swarm.messages import Message
from swarm.transports.base import CopyableTransport, PrefillsToolCalls

__all__ = [
    "API_KEY_VARIABLES",
    "CacheTTL",
    "PerRequest",
    "Timeouts",
    "ToolChoice",
    "for_cache",
    "for_tool_choice",
    "on_user_turn",
    "resolve_option",
]

API_KEY_VARIABLES: Mapping[str, str] = MappingProxyType(
    {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
)
"""The environment variable each keyed provider reads its API key from (here, not in the
provider modules, so checking for a key does not import httpx)."""

T = TypeVar("T")

ToolChoice: TypeAlias = Literal["auto", "required", "none"]
"""Whether the model may (``auto``), must (``required``) or must not (``none``) call tools."""

CacheTTL: TypeAlias = Literal["5m", "1h"]
"""How long a provider keeps a prompt cache entry: five minutes (the default, cheaper to
write) or an hour (costs more to write; pays when the same prefix comes back later)."""

PerRequest: TypeAlias = Callable[[Sequence[Message]], T | None]
"""A function of the request's messages giving an option's value (``None``: leave it out)."""


@dataclass(frozen=True, slots=True)
class Timeouts:
    """How long a transport waits, in seconds.

    ``connect``: to open a connection. ``write``: to send the request. ``first_byte``: from
    sending the request to the head of the response (a model may think for a while before
    the server answers). ``idle``: each wait for more of the response body; a server that
    stalls mid-stream fails the call after this long. Reasoning models can be silent for
    minutes, hence the generous defaults.
    """

    connect: float = 10.0
    write: float = 30.0
    first_byte: float = 300.0
    idle: float = 300.0

    @classmethod
    def of(cls, value: Timeouts | float | None) -> Timeouts:
        """``value`` as ``Timeouts``: ``None`` gives the defaults; a number sets
        ``first_byte`` and ``idle`` and caps ``connect`` and ``write``."""
        if value is None:
            return cls()
        if isinstance(value, Timeouts):
            return value
        seconds = float(value)
        default = cls()
        return cls(min(default.connect, seconds), min(default.write, seconds), seconds, seconds)


def on_user_turn(value: T, *, otherwise: T | None = None) -> PerRequest[T]:
    """An option that is ``value`` when the request's last message is the user's (text or
    images, no tool results), i.e. on the first model call of a user turn, and
    ``otherwise`` on the calls that follow tool results."""

    def choose(messages: Sequence[Message]) -> T | None:
        if not messages:
            return otherwise
        last = messages[-1]
        if last.role == "user" and not last.tool_results:
            return value
        return otherwise

    return choose


def resolve_option(option: T | PerRequest[T] | None, messages: Sequence[Message]) -> T | None:
    """The value of ``option`` for a request with ``messages``."""
    if callable(option):
        return option(messages)
    return option


def for_cache(transport: T, cache: bool | CacheTTL) -> T:
    """A variant of ``transport`` with prompt caching off (``False``), on (``True``) or on
    with a lifetime (``"5m"``, ``"1h"``); a transport without ``copy`` is returned
    unchanged."""
    if not isinstance(transport, CopyableTransport):
        return transport
    if isinstance(cache, bool):
        return transport.copy(cache=cache)  # type: ignore[return-value]
    return transport.copy(cache=True, cache_ttl=cache)  # type: ignore[return-value]


def for_tool_choice(transport: T, choice: ToolChoice) -> T:
    """A variant of ``transport`` for a role's ``tool_choice``.

    ``required`` applies to the first model call of a user turn only (later calls, which
    follow tool results, go back to ``auto``), together with the transport's
    ``required_prefill`` when it has one: a small model whose chat template needs an
    assistant prefill to start a tool call gets it exactly then. A transport without
    ``copy`` is returned unchanged.
    """
    if not isinstance(transport, CopyableTransport):
        return transport
    if choice != "required":
        return transport.copy(tool_choice=choice)  # type: ignore[return-value]
    options: dict[str, Any] = {"tool_choice": on_user_turn("required", otherwise="auto")}
    if isinstance(transport, PrefillsToolCalls) and transport.required_prefill:
        options["prefill"] = on_user_turn(transport.required_prefill)
    return transport.copy(**options)  # type: ignore[return-value]
