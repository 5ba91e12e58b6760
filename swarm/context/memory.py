"""MemoryContextStore: history in a list, for tests and short-lived agents.

It lives in ``swarm.context.base`` (``ContextStore.fork`` falls back to it, and imports go
one way); this module keeps the name where it always was.
"""

from __future__ import annotations

from swarm.context.base import MemoryContextStore

__all__ = ["MemoryContextStore"]
