"""OS sandboxes for every process a tool starts (see ``base`` for the model, ``select``
for how the tier is chosen)."""

from typing import TYPE_CHECKING

from swarm._lazy import lazy_exports
from swarm.sandbox.base import (
    TMPFS_SIZE,
    Confinement,
    Launch,
    Mode,
    Network,
    Overlay,
    Reads,
    Sandbox,
    SandboxSettings,
    SandboxUnavailable,
)

if TYPE_CHECKING:
    from swarm.sandbox.bubblewrap import (
        Bubblewrap,
        bwrap_arguments,
        probe_bubblewrap,
    )
    from swarm.sandbox.egress import (
        AllowList,
        Egress,
    )
    from swarm.sandbox.environment import (
        command_environment,
    )
    from swarm.sandbox.landlock import (
        LandlockSandbox,
        NetworkMethod,
        landlock_abi,
    )
    from swarm.sandbox.limits import (
        ResourceLimits,
    )
    from swarm.sandbox.proxy import (
        ConnectionRecord,
        EgressProxy,
        Resolver,
        mapped_resolver,
        system_resolver,
    )
    from swarm.sandbox.proxy_door import (
        ProxyDoor,
        proxy_environment,
    )
    from swarm.sandbox.seatbelt import (
        SeatbeltSandbox,
    )
    from swarm.sandbox.select import (
        HOW_TO_SANDBOX,
        TIERS,
        SandboxFinder,
        Unconfined,
        find_sandbox,
    )

__all__ = [
    "AllowList",
    "ConnectionRecord",
    "Egress",
    "EgressProxy",
    "ProxyDoor",
    "Resolver",
    "mapped_resolver",
    "proxy_environment",
    "system_resolver",
    "HOW_TO_SANDBOX",
    "TIERS",
    "Bubblewrap",
    "Confinement",
    "LandlockSandbox",
    "Launch",
    "Overlay",
    "Mode",
    "Network",
    "NetworkMethod",
    "Reads",
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
    "TMPFS_SIZE",
    "landlock_abi",
]

_LAZY: dict[str, tuple[str, ...]] = {
    "swarm.sandbox.bubblewrap": (
        "Bubblewrap",
        "bwrap_arguments",
        "probe_bubblewrap",
    ),
    "swarm.sandbox.egress": ("AllowList", "Egress"),
    "swarm.sandbox.environment": ("command_environment",),
    "swarm.sandbox.proxy": (
        "ConnectionRecord",
        "EgressProxy",
        "Resolver",
        "mapped_resolver",
        "system_resolver",
    ),
    "swarm.sandbox.proxy_door": ("ProxyDoor", "proxy_environment"),
    "swarm.sandbox.landlock": (
        "LandlockSandbox",
        "NetworkMethod",
        "landlock_abi",
    ),
    "swarm.sandbox.seatbelt": ("SeatbeltSandbox",),
    "swarm.sandbox.limits": ("ResourceLimits",),
    "swarm.sandbox.select": (
        "HOW_TO_SANDBOX",
        "TIERS",
        "SandboxFinder",
        "Unconfined",
        "find_sandbox",
    ),
}

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
