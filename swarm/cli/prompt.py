"""Asking the person at the terminal: approvals for ``ask`` decisions (from any agent of
the run), and ``ask_user``."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable

import anyio
import anyio.to_thread

from swarm._visible import visible
from swarm.approvals import os_user
from swarm.guards.approval import ApprovalDecision, ApprovalRequest

__all__ = ["TerminalPrompt", "interactive"]


def interactive() -> bool:
    """True when a person can answer: stdin and stderr are terminals."""
    return sys.stdin.isatty() and sys.stderr.isatty()


class TerminalPrompt:
    """Asks one question at a time on the terminal, however many agents ask at once.

    An approval takes ``y`` (allow once), ``a`` (allow this tool for this agent for the
    rest of the run), ``n`` with an optional reason the model sees (``n not on main``),
    or ``e`` with new arguments as JSON (``e {"command": "make test"}``), which pass the
    whole guard chain again; anything else denies. The question says how many other
    requests wait behind it. ``pause`` (settable later) gives a context manager held
    while a question waits for its answer: the live view's ``paused``, so no redraw lands
    on the prompt or the typed answer."""

    def __init__(
        self, *, pause: Callable[[], contextlib.AbstractContextManager[None]] | None = None
    ) -> None:
        self._lock = anyio.Lock()
        self.pause = pause
        self.waiting = 0
        self.allowed: set[tuple[str, str]] = set()

    async def _ask(self, question: str) -> str:
        async with self._lock:
            return await self._read_now(question)

    async def _read_now(self, question: str) -> str:
        with self.pause() if self.pause is not None else contextlib.nullcontext():
            return await anyio.to_thread.run_sync(self._read, question, abandon_on_cancel=True)

    @staticmethod
    def _read(question: str) -> str:
        sys.stderr.write(question)
        sys.stderr.flush()
        line = sys.stdin.readline()
        return line.strip()

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        """An ``Approver``: show the call, its reason and what else waits; take an answer."""
        key = (request.path, request.tool)
        self.waiting += 1
        try:
            async with self._lock:
                if key in self.allowed:  # allowed for the run while this one waited
                    return _for_the_run(request)
                question = _question(request, self.waiting - 1)
                while True:
                    answer = await self._read_now(question)
                    decision = self._decide(answer, request)
                    if isinstance(decision, ApprovalDecision):
                        return decision
                    question = f"  {decision}\n  allow? [y/a/e/N] "
        finally:
            self.waiting -= 1

    def _decide(self, answer: str, request: ApprovalRequest) -> ApprovalDecision | str:
        """The decision an answer stands for, or what was wrong with it."""
        word, _, rest = answer.partition(" ")
        word, rest = word.lower(), rest.strip()
        who = os_user()
        if word in ("y", "yes"):
            return ApprovalDecision.approve(reason="approved at the terminal", who=who, via=_VIA)
        if word in ("a", "always"):
            self.allowed.add((request.path, request.tool))
            return ApprovalDecision.approve(
                reason=f"{request.tool} allowed for {request.path} for the rest of the run",
                who=who,
                via=_VIA,
            )
        if word in ("e", "edit"):
            try:
                arguments = json.loads(rest)
            except ValueError as exc:
                return f'the new arguments are not JSON ({exc}); e.g. e {{"command": "ls"}}'
            if not isinstance(arguments, dict):
                return "the new arguments must be a JSON object: e {...}"
            return ApprovalDecision.approve(
                arguments,
                reason="approved at the terminal with edited arguments",
                who=who,
                via=_VIA,
            )
        said = rest or "the person at the terminal said no"
        return ApprovalDecision.deny(said, who=who, via=_VIA)

    async def ask_user(self, question: str) -> str:
        """The ``ask_user`` tool's way to reach the person."""
        return await self._ask(f"\nThe agents ask: {visible(question, multiline=True)}\n> ")


_VIA = "terminal"


def _question(request: ApprovalRequest, others: int) -> str:
    shown = json.dumps(dict(request.arguments), default=str)
    if len(shown) > 400:
        shown = shown[:399] + "…"
    who, tool, reason = (visible(str(v)) for v in (request.path, request.tool, request.reason))
    more = (
        f"  ({others} more {'request waits' if others == 1 else 'requests wait'})\n"
        if others
        else ""
    )
    return (
        f"\n[{who}] wants to call {tool} {visible(shown)}\n  {reason}\n{more}"
        f"  y: allow once  a: allow {tool} for this agent for the run"
        "  n [REASON]: deny  e JSON: edit the arguments\n  allow? [y/a/e/N] "
    )


def _for_the_run(request: ApprovalRequest) -> ApprovalDecision:
    return ApprovalDecision.approve(
        reason=f"{request.tool} allowed for {request.path} for the rest of the run",
        who=os_user(),
        via=_VIA,
    )
