"""Context stores: in memory, in SQLite, and the auto-compacting wrapper."""

from swarm.context.base import ContextStore, SessionInfo
from swarm.context.compaction import (
    DEFAULT_SUMMARY_PROMPT,
    SUMMARY_HEADER,
    AutoCompactStore,
    CompactHook,
    CompactionError,
    compact_context,
)
from swarm.context.memory import MemoryContextStore
from swarm.context.sqlite import ArchivedSegment, SQLiteContextStore

__all__ = [
    "DEFAULT_SUMMARY_PROMPT",
    "SUMMARY_HEADER",
    "ArchivedSegment",
    "AutoCompactStore",
    "CompactHook",
    "CompactionError",
    "ContextStore",
    "MemoryContextStore",
    "SQLiteContextStore",
    "SessionInfo",
    "compact_context",
]
