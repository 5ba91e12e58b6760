"""Model providers behind the CompletionTransport protocol: the protocols they speak.

- ``OpenAITransport``: OpenAI Chat Completions and every compatible server.
- ``AnthropicTransport``: Anthropic's Messages API.
- ``RecordingTransport`` / ``ReplayTransport``: record calls to a cassette, replay offline.
- ``RetryPolicy``, ``Timeouts``, ``on_user_turn``: options every HTTP transport takes.

Naming models is ``swarm.models``' job: ``transport_from_spec("openai:gpt-4.1-mini")``
(``swarm.models.spec``), a role's ``model:`` (``swarm.models.resolver``), context windows
and prices (``swarm.models.registry``).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from swarm._lazy import lazy_exports as _lazy_exports
from swarm.transports.base import (
    CompletionTransport as CompletionTransport,
    DummyCompletionTransport as DummyCompletionTransport,
)

if _TYPE_CHECKING:
    from swarm.transports._http import (
        HTTPTransport as HTTPTransport,
        StreamDecoder as StreamDecoder,
    )
    from swarm.transports.anthropic import (
        AnthropicStreamDecoder as AnthropicStreamDecoder,
        AnthropicTransport as AnthropicTransport,
        anthropic_messages as anthropic_messages,
        anthropic_tools as anthropic_tools,
        mark_cache_breakpoints as mark_cache_breakpoints,
    )
    from swarm.transports.openai import (
        OpenAIStreamDecoder as OpenAIStreamDecoder,
        OpenAITransport as OpenAITransport,
        openai_messages as openai_messages,
        openai_tools as openai_tools,
        openai_usage as openai_usage,
        role_cache_key as role_cache_key,
    )
    from swarm.transports.options import (
        CacheTTL as CacheTTL,
        PerRequest as PerRequest,
        Timeouts as Timeouts,
        ToolChoice as ToolChoice,
        for_cache as for_cache,
        for_tool_choice as for_tool_choice,
        on_user_turn as on_user_turn,
    )
    from swarm.transports.recording import (
        RecordingTransport as RecordingTransport,
        ReplayTransport as ReplayTransport,
        request_to_dict as request_to_dict,
    )
    from swarm.transports.retry import (
        RetryPolicy as RetryPolicy,
        parse_retry_after as parse_retry_after,
    )
    from swarm.transports.sse import SSEEvent as SSEEvent, SSEParser as SSEParser


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
        "RetryPolicy",
        "parse_retry_after",
    ),
    "swarm.transports.sse": (
        "SSEEvent",
        "SSEParser",
    ),
}

__getattr__, __dir__, __all__ = _lazy_exports(__name__, _LAZY)
