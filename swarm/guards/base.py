"""PermissionGuard and the simple guards every chain can use."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

import anyio

from swarm.errors import GuardError

if TYPE_CHECKING:
    from swarm.tools import Tool

__all__ = ["AllowAllGuard", "ConcurrentGuard", "DenyAllGuard", "PermissionGuard"]


class PermissionGuard(ABC):
    """Gate for tool calls: return the (possibly modified) arguments to allow, raise
    ``GuardError`` to deny.

    A tool invokes its guards as ``await guard(tool, **arguments)``, in order, each one
    seeing the previous one's output. Any exception other than ``GuardError`` also denies
    the call (guards fail closed).
    """

    @property
    def name(self) -> str:
        """How denials and audit records name this guard."""
        return type(self).__name__

    async def __call__(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        return await self.check(tool, **kwargs)

    __call__.forwards_to_check = True  # type: ignore[attr-defined]  # the chain awaits check

    @abstractmethod
    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        """Decide on one call: return the arguments to allow, raise ``GuardError`` to deny."""


class ConcurrentGuard(PermissionGuard, ABC):
    """A guard whose checks run at most ``concurrency`` at a time (default 1), for guards
    that ask a person or keep state."""

    concurrency: int = 1

    async def __call__(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        semaphore = self.__dict__.get("_semaphore")
        if semaphore is None:
            semaphore = self.__dict__["_semaphore"] = anyio.Semaphore(self.concurrency)
        async with semaphore:
            return await self.check(tool, **kwargs)


class AllowAllGuard(PermissionGuard):
    """Allows every call unchanged."""

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        return kwargs


class DenyAllGuard(PermissionGuard):
    """Denies every call."""

    def __init__(self, reason: str = "all tool calls are denied") -> None:
        self.reason = reason

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        raise GuardError(self.reason, guard=self.name)
