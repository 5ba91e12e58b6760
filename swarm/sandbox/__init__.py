"""OS sandboxes for every process a tool starts (see ``base`` for the model, ``select``
for how the tier is chosen)."""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from swarm._lazy import lazy_exports as _lazy_exports
from swarm.sandbox.base import (
    TMPFS_SIZE as TMPFS_SIZE,
    Confinement as Confinement,
    Launch as Launch,
    Mode as Mode,
    Network as Network,
    Overlay as Overlay,
    Reads as Reads,
    Sandbox as Sandbox,
    SandboxSettings as SandboxSettings,
    SandboxUnavailable as SandboxUnavailable,
)

if _TYPE_CHECKING:
    from swarm.sandbox.bubblewrap import (
        Bubblewrap as Bubblewrap,
        bwrap_arguments as bwrap_arguments,
        probe_bubblewrap as probe_bubblewrap,
    )
    from swarm.sandbox.egress import AllowList as AllowList, Egress as Egress
    from swarm.sandbox.environment import command_environment as command_environment
    from swarm.sandbox.landlock import (
        LandlockSandbox as LandlockSandbox,
        NetworkMethod as NetworkMethod,
        landlock_abi as landlock_abi,
    )
    from swarm.sandbox.limits import ResourceLimits as ResourceLimits
    from swarm.sandbox.proxy import (
        ConnectionRecord as ConnectionRecord,
        EgressProxy as EgressProxy,
        Resolver as Resolver,
        mapped_resolver as mapped_resolver,
        system_resolver as system_resolver,
    )
    from swarm.sandbox.proxy_door import (
        ProxyDoor as ProxyDoor,
        proxy_environment as proxy_environment,
    )
    from swarm.sandbox.seatbelt import SeatbeltSandbox as SeatbeltSandbox
    from swarm.sandbox.select import (
        HOW_TO_SANDBOX as HOW_TO_SANDBOX,
        TIERS as TIERS,
        SandboxFinder as SandboxFinder,
        ToolSandbox as ToolSandbox,
        Unconfined as Unconfined,
        find_sandbox as find_sandbox,
    )


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
        "ToolSandbox",
        "Unconfined",
        "find_sandbox",
    ),
}

__getattr__, __dir__, __all__ = _lazy_exports(__name__, _LAZY)
