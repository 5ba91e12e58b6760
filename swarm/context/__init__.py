"""Context stores: in memory, in SQLite, and the auto-compacting wrapper."""

from swarm.context.base import ContextStore, SessionInfo
from swarm.context.memory import MemoryContextStore

__all__ = ["ContextStore", "MemoryContextStore", "SessionInfo"]
