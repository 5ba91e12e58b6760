"""The built-in workspace tools: files, search, shell, notes, todo and ask_user.

Every tool is confined to its workspace by itself, whatever policy guards the run: paths
through ``..`` out of it and absolute paths elsewhere are refused, and the file tools open
paths a component at a time relative to directory descriptors, refusing every symlink, so
a process racing them (a shell command swapping a directory for a link) cannot lead them
out. Path arguments are named ``path`` or ``directory`` so the policy's ``PathGuard``
finds them. swarm keeps its own state in the workspace's ``.swarm/`` folder (notes, the
task list, run records): listing and searching skip it, the file tools do not write there,
and run records (``.swarm/runs`` and any ``protected`` path) are not read either.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from swarm._lazy import lazy_exports as _lazy_exports
from swarm.toolbox._paths import Workspace as Workspace
from swarm.toolbox.make import TOOL_NAMES as TOOL_NAMES, make_toolbox as make_toolbox

if _TYPE_CHECKING:
    from swarm.toolbox.ask import Ask as Ask
    from swarm.toolbox.shell import safe_environment as safe_environment

_LAZY: dict[str, tuple[str, ...]] = {
    "swarm.toolbox.ask": ("Ask",),
    "swarm.toolbox.shell": ("safe_environment",),
}

__getattr__, __dir__, __all__ = _lazy_exports(__name__, _LAZY)
