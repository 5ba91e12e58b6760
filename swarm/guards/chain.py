"""The guard chain: every guard of a tool, in order, failing closed.

The loop over the guards lives beside ``Tool`` (``swarm.tools.run_guards``), which runs
it; it is re-exported here under its old name.
"""

from __future__ import annotations

from swarm.tools import run_guards

__all__ = ["run_guards"]
