"""RateLimitGuard and BudgetGuard: deny calls past a rate or once a budget is spent."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from swarm.errors import GuardError
from swarm.guards.base import PermissionGuard
from swarm.scope import current_call, current_scope, role_of

if TYPE_CHECKING:
    from swarm.tools import Tool

__all__ = ["BudgetGuard", "HasBudget", "RateLimitGuard", "role_of"]


class RateLimitGuard(PermissionGuard):
    """Allows at most ``calls`` calls per ``window`` seconds (a sliding window).

    ``per`` says what shares a window: ``"tool"`` (each tool its own), ``"role"`` (all
    calls of a role: the guard's ``role``, else the role in the calling agent's path) or
    ``"guard"`` (every call through this guard). A denied call does not count. ``clock``
    returns seconds (default ``time.monotonic``).
    """

    def __init__(
        self,
        calls: int,
        window: float,
        *,
        per: Literal["tool", "role", "guard"] = "tool",
        role: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if calls < 1 or window <= 0:
            raise ValueError("a rate limit needs calls >= 1 and window > 0")
        self.calls = calls
        self.window = window
        self.per = per
        self.role = role
        self.clock = clock
        self._seen: dict[str, deque[float]] = {}

    def _key(self, tool: Tool[Any]) -> str:
        if self.per == "tool":
            return tool.name
        if self.per == "role":
            if self.role is not None:
                return self.role
            call = current_call()
            return role_of(call.path if call is not None else current_scope().path)
        return ""

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        key = self._key(tool)
        now = self.clock()
        seen = self._seen.setdefault(key, deque())
        while seen and seen[0] <= now - self.window:
            seen.popleft()
        if len(seen) >= self.calls:
            wait = seen[0] + self.window - now
            what = {"tool": f"'{tool.name}'", "role": f"role '{key}'", "guard": "these tools"}
            raise GuardError(
                f"rate limit: at most {self.calls} calls of {what[self.per]} per"
                f" {self.window:g}s; try again in {wait:.0f}s",
                guard=self.name,
                rule=f"{self.calls}/{self.window:g}s per {self.per}",
            )
        seen.append(now)
        return kwargs


class HasBudget(Protocol):
    """Anything that can say why it is spent (``swarm.budget.Budget`` is one)."""

    @property
    def exceeded(self) -> str | None:
        """Why the budget is spent, or ``None`` while it is not."""
        ...


class BudgetGuard(PermissionGuard):
    """Denies every call once ``budget.exceeded`` gives a reason.

    Without a ``budget`` it uses the budget of the run scope the call runs in (and allows
    the call when the run has none).
    """

    def __init__(self, budget: HasBudget | None = None) -> None:
        self.budget = budget

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        budget = self.budget or current_scope().budget
        reason = budget.exceeded if budget is not None else None
        if reason:
            raise GuardError(f"budget spent: {reason}", guard=self.name, rule="budget")
        return kwargs
