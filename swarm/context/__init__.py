"""Context stores: in memory, in SQLite, and the auto-compacting wrapper."""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from swarm._lazy import lazy_exports as _lazy_exports
from swarm.context.base import (
    ContextStore as ContextStore,
    MemoryContextStore as MemoryContextStore,
    SessionInfo as SessionInfo,
)

if _TYPE_CHECKING:
    from swarm.context.compaction import (
        DEFAULT_SUMMARY_PROMPT as DEFAULT_SUMMARY_PROMPT,
        SUMMARY_HEADER as SUMMARY_HEADER,
        AutoCompactStore as AutoCompactStore,
        CompactHook as CompactHook,
        compact_context as compact_context,
    )
    from swarm.context.sqlite import (
        ArchivedSegment as ArchivedSegment,
        SQLiteContextStore as SQLiteContextStore,
    )


_LAZY: dict[str, tuple[str, ...]] = {
    "swarm.context.compaction": (
        "DEFAULT_SUMMARY_PROMPT",
        "SUMMARY_HEADER",
        "AutoCompactStore",
        "CompactHook",
        "compact_context",
    ),
    "swarm.context.sqlite": (
        "ArchivedSegment",
        "SQLiteContextStore",
    ),
}

__getattr__, __dir__, __all__ = _lazy_exports(__name__, _LAZY)
