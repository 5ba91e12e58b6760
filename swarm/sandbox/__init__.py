"""OS sandboxes for every process a tool starts (see ``base`` for the model, ``select``
for how the tier is chosen)."""

from __future__ import annotations

from swarm.sandbox.base import (
    Confinement,
    Launch,
    Mode,
    Network,
    Sandbox,
    SandboxSettings,
    SandboxUnavailable,
)
from swarm.sandbox.bubblewrap import Bubblewrap, bwrap_arguments, probe_bubblewrap
from swarm.sandbox.environment import command_environment
from swarm.sandbox.select import HOW_TO_SANDBOX, TIERS, SandboxFinder, Unconfined, find_sandbox

__all__ = [
    "HOW_TO_SANDBOX",
    "TIERS",
    "Bubblewrap",
    "Confinement",
    "Launch",
    "Mode",
    "Network",
    "Sandbox",
    "SandboxFinder",
    "SandboxSettings",
    "SandboxUnavailable",
    "Unconfined",
    "bwrap_arguments",
    "command_environment",
    "find_sandbox",
    "probe_bubblewrap",
]
