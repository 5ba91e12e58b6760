"""OS sandboxes for every process a tool starts (see ``base`` for the model)."""

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
from swarm.sandbox.landlock import LandlockSandbox, NetworkMethod, landlock_abi
from swarm.sandbox.seatbelt import SeatbeltSandbox

__all__ = [
    "Confinement",
    "LandlockSandbox",
    "Launch",
    "Mode",
    "Network",
    "NetworkMethod",
    "Sandbox",
    "SandboxSettings",
    "SandboxUnavailable",
    "SeatbeltSandbox",
    "landlock_abi",
]
