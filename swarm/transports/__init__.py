"""Model providers behind the CompletionTransport protocol: the protocols they speak.

- ``OpenAITransport``: OpenAI Chat Completions and every compatible server.
- ``AnthropicTransport``: Anthropic's Messages API.
- ``RecordingTransport`` / ``ReplayTransport``: record calls to a cassette, replay offline.
- ``RetryPolicy``, ``Timeouts``, ``on_user_turn``: options every HTTP transport takes.

Naming models is ``swarm.models``' job: ``transport_from_spec("openai:gpt-4.1-mini")``
(``swarm.models.spec``), a role's ``model:`` (``swarm.models.resolver``), context windows
and prices (``swarm.models.registry``).
"""

from typing import TYPE_CHECKING

from swarm._lazy import lazy_exports
from swarm.transports.base import CompletionTransport, DummyCompletionTransport

if TYPE_CHECKING:
    from swarm.event_codec import (
        event_from_dict,
        event_to_dict,
    )
    from swarm.transports._http import (
        HTTPTransport,
        StreamDecoder,
    )
    from swarm.transports.anthropic import (
        AnthropicStreamDecoder,
        AnthropicTransport,
        anthropic_messages,
        anthropic_tools,
        mark_cache_breakpoints,
    )
    from swarm.transports.openai import (
        OpenAIStreamDecoder,
        OpenAITransport,
        openai_messages,
        openai_tools,
        openai_usage,
        role_cache_key,
    )
    from swarm.transports.options import (
        CacheTTL,
        PerRequest,
        Timeouts,
        ToolChoice,
        for_cache,
        for_tool_choice,
        on_user_turn,
    )
    from swarm.transports.recording import (
        RecordingTransport,
        ReplayTransport,
        request_to_dict,
    )
    from swarm.transports.retry import (
        ProviderError,
        RetryPolicy,
        parse_retry_after,
    )
    from swarm.transports.sse import (
        SSEEvent,
        SSEParser,
    )

__all__ = [
    "AnthropicStreamDecoder",
    "AnthropicTransport",
    "CacheTTL",
    "CompletionTransport",
    "DummyCompletionTransport",
    "HTTPTransport",
    "OpenAIStreamDecoder",
    "OpenAITransport",
    "PerRequest",
    "ProviderError",
    "RecordingTransport",
    "ReplayTransport",
    "RetryPolicy",
    "SSEEvent",
    "SSEParser",
    "StreamDecoder",
    "Timeouts",
    "ToolChoice",
    "anthropic_messages",
    "anthropic_tools",
    "event_from_dict",
    "event_to_dict",
    "for_cache",
    "for_tool_choice",
    "mark_cache_breakpoints",
    "on_user_turn",
    "openai_messages",
    "openai_tools",
    "openai_usage",
    "parse_retry_after",
    "request_to_dict",
    "role_cache_key",
]

_LAZY: dict[str, tuple[str, ...]] = {
    "swarm.transports._http": (
        "HTTPTransport",
        "StreamDecoder",
    ),
    "swarm.transports.anthropic": (
        "AnthropicStreamDecoder",
        "AnthropicTransport",
        "anthropic_messages",
        "anthropic_tools",
        "mark_cache_breakpoints",
    ),
    "swarm.transports.openai": (
        "OpenAIStreamDecoder",
        "OpenAITransport",
        "openai_messages",
        "openai_tools",
        "openai_usage",
        "role_cache_key",
    ),
    "swarm.transports.options": (
        "CacheTTL",
        "PerRequest",
        "Timeouts",
        "ToolChoice",
        "for_cache",
        "for_tool_choice",
        "on_user_turn",
    ),
    "swarm.transports.recording": (
        "RecordingTransport",
        "ReplayTransport",
        "request_to_dict",
    ),
    "swarm.transports.retry": (
        "ProviderError",
        "RetryPolicy",
        "parse_retry_after",
    ),
    "swarm.event_codec": (
        "event_from_dict",
        "event_to_dict",
    ),
    "swarm.transports.sse": (
        "SSEEvent",
        "SSEParser",
    ),
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
