"""Asking the person at the terminal: approvals for ``ask`` decisions, and ``ask_user``."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable

import anyio
import anyio.to_thread

from swarm._visible import visible
from swarm.guards.approval import ApprovalDecision, ApprovalRequest

__all__ = ["TerminalPrompt", "interactive"]


def interactive() -> bool:
    """True when a person can answer: stdin and stderr are terminals."""
    return sys.stdin.isatty() and sys.stderr.isatty()


class TerminalPrompt:
    """Asks one question at a time on the terminal, however many agents ask at once.

    ``pause`` (settable later) gives a context manager held while a question waits for
    its answer: the live view's ``paused``, so no redraw lands on the prompt or the
    typed answer."""

    def __init__(
        self, *, pause: Callable[[], contextlib.AbstractContextManager[None]] | None = None
    ) -> None:
        self._lock = anyio.Lock()
        self.pause = pause

    async def _ask(self, question: str) -> str:
        async with self._lock:
            with self.pause() if self.pause is not None else contextlib.nullcontext():
                return await anyio.to_thread.run_sync(self._read, question, abandon_on_cancel=True)

    @staticmethod
    def _read(question: str) -> str:
        sys.stderr.write(question)
        sys.stderr.flush()
        line = sys.stdin.readline()
        return line.strip()

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        """An ``Approver``: show the call and its reason, take y/n."""
        shown = json.dumps(dict(request.arguments), default=str)
        if len(shown) > 400:
            shown = shown[:399] + "…"
        who, tool, reason = (visible(str(v)) for v in (request.path, request.tool, request.reason))
        answer = await self._ask(
            f"\n[{who}] wants to call {tool} {shown}\n  {reason}\n  allow? [y/N] "
        )
        if answer.lower() in ("y", "yes"):
            return ApprovalDecision.approve(reason="approved at the terminal")
        return ApprovalDecision.deny("the person at the terminal said no")

    async def ask_user(self, question: str) -> str:
        """The ``ask_user`` tool's way to reach the person."""
        return await self._ask(f"\nThe agents ask: {visible(question, multiline=True)}\n> ")
