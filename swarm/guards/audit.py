"""AuditGuard: a call runs only when the run keeps an audit log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swarm.errors import GuardError
from swarm.guards.base import PermissionGuard
from swarm.scope import current_scope

if TYPE_CHECKING:
    from swarm.tools import Tool

__all__ = ["AuditGuard"]


class AuditGuard(PermissionGuard):
    """Denies calls made in a run without an open ``swarm.audit.AuditLog`` among its
    observers, so a policy that says "everything is audited" cannot run unaudited.

    The log itself records the calls (it sees every decision, this guard's included).
    """

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        from swarm.audit import AuditLog  # swarm.audit builds on this package

        for observer in current_scope().observers:
            if isinstance(observer, AuditLog) and not observer.closed:
                return kwargs
        raise GuardError(
            "every call must be audited and this run has no audit log (attach a"
            " swarm.audit.AuditLog to the run scope's observers)",
            guard=self.name,
            rule="audit",
        )
