"""Permission guards: the chain every tool call passes before its handler runs."""

from swarm.guards.base import AllowAllGuard, ConcurrentGuard, DenyAllGuard, PermissionGuard
from swarm.guards.chain import run_guards

__all__ = ["AllowAllGuard", "ConcurrentGuard", "DenyAllGuard", "PermissionGuard", "run_guards"]
