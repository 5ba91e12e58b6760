"""Every change can be taken back: each call's effect on the workspace captured
(``UndoCapture``), listed by call and agent, and undone (``undo_run``, ``run_diff``).

See ``docs/undo.md``.
"""

from swarm.undo.capture import PATH_TOOLS, UNDO_RULE, UndoCapture, UndoSettings
from swarm.undo.log import CallChanges, Change, UndoLog, read_undo_log
from swarm.undo.state import ABSENT, BlobStore, PathState

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
    "UndoSettings",
    "read_undo_log",
]
