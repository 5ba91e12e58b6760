"""Model providers behind the CompletionTransport protocol.

- ``OpenAITransport``: OpenAI Chat Completions and every compatible server.
- ``AnthropicTransport``: Anthropic's Messages API.
- ``transport_from_spec("openai:gpt-4.1-mini")``: a transport from a model spec string.
- ``RecordingTransport`` / ``ReplayTransport``: record calls to a cassette, replay offline.
- ``RetryPolicy``, ``Timeouts``, ``on_user_turn``: options every HTTP transport takes.
- ``ModelResolver``, ``model_spec``: a role's ``model:`` (aliases, ``inherit``) to a transport.
- ``ModelSpec``, ``default_registry``, ``estimate_cost``: context windows and prices.
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
    from swarm.transports.models import (
        DEFAULT_CONTEXT_WINDOW,
        PRICES_AS_OF,
        ModelRegistry,
        ModelSpec,
        default_registry,
        estimate_cost,
        lookup_model,
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
    from swarm.transports.resolver import (
        BUILTIN_ALIASES,
        ModelResolver,
        key_variable,
        missing_key,
        model_spec,
    )
    from swarm.transports.retry import (
        ProviderError,
        RetryPolicy,
        parse_retry_after,
    )
    from swarm.transports.spec import (
        TransportFactory,
        provider_prefixes,
        register_provider,
        transport_from_spec,
    )
    from swarm.transports.sse import (
        SSEEvent,
        SSEParser,
    )

__all__ = [
    "AnthropicStreamDecoder",
    "AnthropicTransport",
    "BUILTIN_ALIASES",
    "CacheTTL",
    "CompletionTransport",
    "DEFAULT_CONTEXT_WINDOW",
    "DummyCompletionTransport",
    "HTTPTransport",
    "ModelRegistry",
    "ModelResolver",
    "ModelSpec",
    "OpenAIStreamDecoder",
    "OpenAITransport",
    "PRICES_AS_OF",
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
    "TransportFactory",
    "anthropic_messages",
    "anthropic_tools",
    "default_registry",
    "estimate_cost",
    "event_from_dict",
    "event_to_dict",
    "for_cache",
    "for_tool_choice",
    "key_variable",
    "lookup_model",
    "mark_cache_breakpoints",
    "missing_key",
    "model_spec",
    "on_user_turn",
    "openai_messages",
    "openai_tools",
    "openai_usage",
    "parse_retry_after",
    "provider_prefixes",
    "register_provider",
    "request_to_dict",
    "role_cache_key",
    "transport_from_spec",
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
    "swarm.transports.models": (
        "DEFAULT_CONTEXT_WINDOW",
        "PRICES_AS_OF",
        "ModelRegistry",
        "ModelSpec",
        "default_registry",
        "estimate_cost",
        "lookup_model",
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
    "swarm.transports.resolver": (
        "BUILTIN_ALIASES",
        "ModelResolver",
        "key_variable",
        "missing_key",
        "model_spec",
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
    "swarm.transports.spec": (
        "TransportFactory",
        "provider_prefixes",
        "register_provider",
        "transport_from_spec",
    ),
    "swarm.transports.sse": (
        "SSEEvent",
        "SSEParser",
    ),
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
