"""Every change can be taken back: each call's effect on the workspace captured
(``UndoCapture``), listed by call and agent, and undone (``RunRecord.undo`` and
``RunRecord.diff`` in ``swarm.record``, ``swarm runs undo`` and ``swarm runs diff``).

See ``docs/undo.md``.
"""

from swarm._lazy import lazy_exports as _lazy_exports
from swarm.undo.capture import (
    PATH_TOOLS as PATH_TOOLS,
    UNDO_RULE as UNDO_RULE,
    UndoCapture as UndoCapture,
    UndoSettings as UndoSettings,
)
from swarm.undo.log import (
    CallChanges as CallChanges,
    Change as Change,
    UndoLog as UndoLog,
    read_undo_log as read_undo_log,
)
from swarm.undo.restore import UndoRefused as UndoRefused
from swarm.undo.state import ABSENT as ABSENT, BlobStore as BlobStore, PathState as PathState
from swarm.undo.taking import UndoResult as UndoResult

__getattr__, __dir__, __all__ = _lazy_exports(__name__, {})
