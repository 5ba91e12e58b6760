"""Context stores: in memory, in SQLite, and the auto-compacting wrapper."""

from typing import TYPE_CHECKING

from swarm._lazy import lazy_exports
from swarm.context.base import ContextStore, SessionInfo
from swarm.context.memory import MemoryContextStore

if TYPE_CHECKING:
    from swarm.context.compaction import (
        DEFAULT_SUMMARY_PROMPT,
        SUMMARY_HEADER,
        AutoCompactStore,
        CompactHook,
        CompactionError,
        compact_context,
    )
    from swarm.context.sqlite import (
        ArchivedSegment,
        SQLiteContextStore,
    )

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

_LAZY: dict[str, tuple[str, ...]] = {
    "swarm.context.compaction": (
        "DEFAULT_SUMMARY_PROMPT",
        "SUMMARY_HEADER",
        "AutoCompactStore",
        "CompactHook",
        "CompactionError",
        "compact_context",
    ),
    "swarm.context.sqlite": (
        "ArchivedSegment",
        "SQLiteContextStore",
    ),
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
