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
from swarm.sandbox.landlock import LandlockSandbox, NetworkMethod, landlock_abi
from swarm.sandbox.limits import ResourceLimits
from swarm.sandbox.seatbelt import SeatbeltSandbox
from swarm.sandbox.select import HOW_TO_SANDBOX, TIERS, SandboxFinder, Unconfined, find_sandbox

__all__ = [
    "HOW_TO_SANDBOX",
    "TIERS",
    "Bubblewrap",
    "Confinement",
    "LandlockSandbox",
    "Launch",
    "Mode",
    "Network",
    "NetworkMethod",
    "ResourceLimits",
    "Sandbox",
    "SandboxFinder",
    "SandboxSettings",
    "SandboxUnavailable",
    "Unconfined",
    "bwrap_arguments",
    "command_environment",
    "find_sandbox",
    "probe_bubblewrap",
    "SeatbeltSandbox",
    "landlock_abi",
]
