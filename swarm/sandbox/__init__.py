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

__all__ = [
    "Confinement",
    "Launch",
    "Mode",
    "Network",
    "Sandbox",
    "SandboxSettings",
    "SandboxUnavailable",
]
