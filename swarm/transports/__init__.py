"""Model providers behind the CompletionTransport protocol."""

from swarm.transports.base import CompletionTransport, DummyCompletionTransport

__all__ = ["CompletionTransport", "DummyCompletionTransport"]
