"""The approver of a run with a record: answers from the record first, then the person
(when one is there), else what ``on_ask`` says: ``deny``, or ``hold`` the call.

A held call writes its request to the run record and waits for an answer there (from
``swarm approve``/``swarm deny`` in another shell, the live view, an MCP client), while
the rest of the run goes on; ``ask_timeout`` seconds after it was first asked, an
unanswered request is denied. A request answered while the run was stopped is found in
the record when ``swarm sessions resume`` asks about the same call again.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal, TypeAlias

import anyio
import anyio.to_thread

from swarm.approvals.store import ApprovalStore, Pending, os_user
from swarm.events import ApprovalRequested
from swarm.scope import ApprovalDecision, ApprovalRequest, Approver, emit

__all__ = ["OnAsk", "RunApprover", "decision_of"]

OnAsk: TypeAlias = Literal["deny", "hold"]
"""What an ``ask`` does when nobody can be asked now."""

_POLL = 0.2  # seconds between looks at the record for an answer from another process


def decision_of(answer: dict[str, Any]) -> ApprovalDecision:
    """The decision an answer in the record stands for."""
    arguments = answer.get("arguments")
    return ApprovalDecision(
        bool(answer.get("approved")),
        str(answer.get("reason") or ""),
        dict(arguments) if isinstance(arguments, dict) else None,
        str(answer.get("who") or ""),
        str(answer.get("via") or ""),
        str(answer.get("time") or ""),
    )


def _tell(request: ApprovalRequest, pending: Pending, *, held: bool) -> None:
    """Say on the asking agent's stream that its call waits for an answer."""
    if request.call_id is not None:
        emit(ApprovalRequested(request.call_id, request.tool, pending.id, request.reason, held))


class RunApprover:
    """An ``Approver`` for a run that keeps its requests in ``store``.

    ``person`` (the terminal, a Python approver) is asked when given; its answer is
    recorded. Without one, ``on_ask`` decides: ``deny`` refuses, ``hold`` waits for an
    answer in the record (``timeout``: seconds, from the first ask, before an unanswered
    request is denied). ``on_held(request)`` is told of each call put on hold, before it
    waits. ``waiting`` counts the calls holding now; ``changed`` is set on each change.
    """

    def __init__(
        self,
        store: ApprovalStore,
        *,
        person: Approver | None = None,
        on_ask: OnAsk = "deny",
        timeout: float | None = None,
        on_held: Callable[[ApprovalRequest], None] | None = None,
    ) -> None:
        self.store = store
        self.person = person
        self.on_ask = on_ask
        self.timeout = timeout
        self.on_held = on_held
        self.waiting = 0
        self.held = 0
        self.changed = anyio.Event()

    def _changed(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def __call__(self, request: ApprovalRequest) -> ApprovalDecision:
        """Answer ``request`` from the record, the person, or by ``on_ask``."""
        store = self.store
        known = await anyio.to_thread.run_sync(store.find, request.path, request.call_id)
        if known is not None and known.answer is not None:
            return await self._use(known, known.answer)
        if self.person is not None:
            return await self._ask_person(request)
        if self.on_ask == "deny":
            return ApprovalDecision.deny(
                "nobody can approve it here (no person to ask, and on_ask is deny)",
                who="nobody",
                via="on_ask: deny",
            )
        pending = await anyio.to_thread.run_sync(store.add, request)
        if self.on_held is not None:
            self.on_held(request)
        _tell(request, pending, held=True)
        self.waiting += 1
        self.held += 1
        self._changed()
        try:
            answer = await self._wait(pending)
        finally:
            self.waiting -= 1
            self._changed()
        return await self._use(pending, answer)

    async def _ask_person(self, request: ApprovalRequest) -> ApprovalDecision:
        assert self.person is not None
        pending = await anyio.to_thread.run_sync(self.store.add, request)
        _tell(request, pending, held=False)
        answer = await self.person(request)
        decision = (
            answer if isinstance(answer, ApprovalDecision) else ApprovalDecision(bool(answer))
        )
        who = decision.who or getattr(self.person, "__qualname__", "") or os_user()
        await anyio.to_thread.run_sync(
            lambda: self.store.answer(
                pending.id,
                approved=decision.approved,
                who=who,
                via=decision.via or "python",
                reason=decision.reason,
                arguments=decision.arguments,
            )
        )
        found = await anyio.to_thread.run_sync(self.store.get, pending.id)
        if found is not None and found.answer is not None:  # another answer came first
            return await self._use(found, found.answer)
        return decision  # pragma: no cover - the answer was just written

    async def _use(self, pending: Pending, answer: dict[str, Any]) -> ApprovalDecision:
        if not pending.used:
            await anyio.to_thread.run_sync(self.store.mark_used, pending.id)
        return decision_of(answer)

    async def _wait(self, pending: Pending) -> dict[str, Any]:
        deadline = math.inf
        if self.timeout is not None:
            asked = datetime.fromisoformat(pending.time).timestamp()
            deadline = asked + self.timeout
        while True:
            found = await anyio.to_thread.run_sync(self.store.get, pending.id)
            if found is not None and found.answer is not None:
                return found.answer
            if datetime.now().timestamp() >= deadline:
                await anyio.to_thread.run_sync(
                    lambda: self.store.answer(
                        pending.id,
                        approved=False,
                        who="nobody",
                        via="ask_timeout",
                        reason=f"nobody answered within {self.timeout:g} seconds",
                    )
                )
                continue  # read back whichever answer came first
            await anyio.sleep(_POLL)
