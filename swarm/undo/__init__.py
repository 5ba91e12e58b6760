"""Every change can be taken back: each call's effect on the workspace captured
(``UndoCapture``), listed by call and agent, and undone (``RunRecord.undo`` and
``RunRecord.diff`` in ``swarm.scenario``, ``swarm runs undo`` and ``swarm runs diff``).

See ``docs/undo.md``.
"""

from swarm.undo.capture import PATH_TOOLS, UNDO_RULE, UndoCapture, UndoSettings
from swarm.undo.log import CallChanges, Change, UndoLog, read_undo_log
from swarm.undo.restore import UndoRefused
from swarm.undo.state import ABSENT, BlobStore, PathState
from swarm.undo.taking import UndoResult

__all__ = [
    "ABSENT",
    "PATH_TOOLS",
    "UNDO_RULE",
    "BlobStore",
    "CallChanges",
    "Change",
    "PathState",
    "UndoCapture",
    "UndoLog",
    "UndoRefused",
    "UndoResult",
    "UndoSettings",
    "read_undo_log",
]
