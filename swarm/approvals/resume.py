"""Going on from held calls once they are answered, without re-running what finished.

A run that stopped while calls were held (it ended waiting for approval, or it was
killed) has, in the session of each agent on the way from the entry agent to a held
call, a last turn whose calls have results: the real ones for calls that finished, and
"cancelled"/"interrupted" for the held call and the delegations waiting on it.
``continue_held`` walks that tree from the bottom: it runs each answered held call
(through its whole guard chain, which finds the answer in the record and writes the
receipt), puts its result in place, lets the agent that made it go on to its end, and
gives that agent's final answer to its caller's delegation the same way, up to the
entry agent, whose run the caller then continues from its history.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from swarm._text import plural
from swarm._visible import visible
from swarm.approvals.store import ApprovalStore, Pending
from swarm.budget import BudgetLimits
from swarm.context.base import ContextStore
from swarm.control import Control
from swarm.errors import ConfigError
from swarm.events import Error, SessionEndEvent, StreamEvent, SubAgentEvent
from swarm.loop.agent import Agent
from swarm.loop.calls import complete, decide, error_result, result_event
from swarm.loop.loop import run_loop
from swarm.messages import ContentBlock, Message, ToolResultBlock, ToolUseBlock
from swarm.scope import RunScope, role_of
from swarm.transports.base import model_name
from swarm.types import StopReason

__all__ = ["HeldRun", "check_answered", "continue_held", "open_requests"]


@dataclass(frozen=True, slots=True)
class HeldRun:
    """What going on from held calls needs of the run: the entry agent's path, each
    role's agent, each agent's session (by path), a way to open an agent's context
    (``open_context(path, session)``), each role's budget limits, the root scope, and
    where the events of the agents it runs go (``emit``)."""

    entry: str
    agents: Mapping[str, Agent]
    sessions: Mapping[str, str]
    open_context: Callable[[str, str], ContextStore]
    limits: Callable[[str], BudgetLimits]
    scope: RunScope
    emit: Callable[[StreamEvent], None]


def open_requests(store: ApprovalStore) -> list[Pending]:
    """The requests whose call has not gone on yet (answered or not)."""
    return [p for p in store.requests() if not p.used]


def check_answered(store: ApprovalStore, timeout: float | None, run_id: str, where: Path) -> bool:
    """Before a resume: whether held calls are to be run (each is answered). A request
    older than ``timeout`` seconds that nobody answered is denied now. Raises
    ``ConfigError`` (naming ``where``, the record's approvals file) listing the requests
    that still wait, with the commands that answer them."""
    now = datetime.now(UTC).timestamp()
    for pending in store.pending():
        asked = datetime.fromisoformat(pending.time).timestamp()
        if timeout is not None and now - asked >= timeout:
            store.answer(
                pending.id,
                approved=False,
                who="nobody",
                via="ask_timeout",
                reason=f"nobody answered within {timeout:g} seconds",
            )
    waiting = store.pending()
    if waiting:
        lines = [f"  {p.id}: {p.path} wants {p.tool} ({p.reason})" for p in waiting]
        raise ConfigError(
            f"{plural(len(waiting), 'call')} still wait for approval:\n"
            + "\n".join(visible(line) for line in lines)
            + f"\nAnswer with `swarm approve {run_id} ID` or `swarm deny {run_id} ID"
            " --reason ...` (`--all` for every one), then resume.",
            path=where,
        )
    return bool(open_requests(store))


async def continue_held(run: HeldRun, store: ApprovalStore) -> list[str]:
    """Run every answered held call of ``run`` and the agents waiting on them, up to the
    entry agent (whose last turn gets its results; the caller continues it). Returns
    the paths of the agents whose turn was completed. Unanswered requests are left as
    they are (their call is asked about again)."""
    held = {(p.path, p.call_id): p for p in open_requests(store) if p.answer is not None}
    if not held:
        return []
    return await _Walk(run, held).finish_turn(run.entry)


class _Walk:
    def __init__(self, run: HeldRun, held: dict[tuple[str, str | None], Pending]) -> None:
        self.run = run
        self.held = held
        self.paths = {path for path, _ in held}
        self.scopes: dict[str, RunScope] = {}
        self.done: list[str] = []

    def involved(self, path: str) -> bool:
        return any(p == path or p.startswith(path + "/") for p in self.paths)

    def scope(self, path: str) -> RunScope:
        """The scope the agent at ``path`` runs in (one per agent, kept)."""
        found = self.scopes.get(path)
        if found is not None:
            return found
        root, emit = self.run.scope, self.run.emit
        if path == self.run.entry:
            found = root
        else:
            agent = self.run.agents[role_of(path)]
            above = self.scope(path.rsplit("/", 1)[0]).budget  # usage rolls up the tree
            budget = None
            if above is not None:
                budget = above.child(
                    path, self.run.limits(role_of(path)), model=model_name(agent.transport)
                )

            def sink(event: StreamEvent) -> None:
                emit(event if isinstance(event, SubAgentEvent) else SubAgentEvent(path, event))

            found = root.child(path=path, budget=budget, sink=sink)
        self.scopes[path] = found
        return found

    async def finish_turn(self, path: str) -> list[str]:
        """Give the last turn of the agent at ``path`` its held calls' and waiting
        delegations' results."""
        session = self.run.sessions.get(path)
        if session is None:
            return self.done
        context = self.run.open_context(path, session)
        try:
            history = await context.get_history()
            at = next((i for i in range(len(history) - 1, -1, -1) if history[i].tool_uses), None)
            if at is None or at + 2 < len(history):
                return self.done  # no cut turn at the end of this history
            uses = history[at].tool_uses
            after = history[at + 1].content if at + 1 < len(history) else []
            old = {b.tool_use_id: b for b in after if isinstance(b, ToolResultBlock)}
            results: list[ContentBlock] = []
            for use in uses:
                results.append(await self._result(path, use, old.get(use.id)))
            kept = [b for b in after if not isinstance(b, ToolResultBlock)]
            await context.replace([*history[: at + 1], Message("user", [*results, *kept])])
        finally:
            await context.close()
        self.done.append(path)
        return self.done

    async def _result(
        self, path: str, use: ToolUseBlock, old: ToolResultBlock | None
    ) -> ToolResultBlock:
        if (path, use.id) in self.held:
            return await self._run_held(path, use)
        child = self._child(path, use)
        if child is not None:
            return await self._run_child(child, use)
        return old or error_result(use.id, "Interrupted: the run stopped before this call ended.")

    def _child(self, path: str, use: ToolUseBlock) -> str | None:
        """The sub-agent a delegation ``use`` started that waits on a held call."""
        prefix = f"{path}/{use.name}#"
        found = sorted(
            p for p in self.run.sessions if p.startswith(prefix) and "/" not in p[len(prefix) :]
        )
        return next((p for p in found if self.involved(p) and p not in self.done), None)

    async def _run_held(self, path: str, use: ToolUseBlock) -> ToolResultBlock:
        agent = self.run.agents[role_of(path)]
        scope = self.scope(path)
        tools = {t.name: t for t in agent.tools}
        decided = await decide(tools, use, scope)
        if (start := decided.start) is not None:
            self._emit(path, start)
        block = await complete(decided, scope, agent.call_settings)
        self._emit(path, result_event(use, block))
        return block

    def _emit(self, path: str, event: StreamEvent) -> None:
        self.run.emit(event if path == self.run.entry else SubAgentEvent(path, event))

    async def _run_child(self, child: str, use: ToolUseBlock) -> ToolResultBlock:
        """Complete the sub-agent's cut turn, let it go on to its end; its final answer
        (or why it did not finish) is the delegation's result."""
        await self.finish_turn(child)
        session = self.run.sessions[child]
        agent = self.run.agents[role_of(child)]
        scope = self.scope(child)
        assert scope.sink is not None
        end: SessionEndEvent | None = None
        error = ""
        context = self.run.open_context(child, session)
        try:
            events = run_loop(agent, None, context, Control(), scope)
            async with aclosing(events) as stream:
                async for event in stream:
                    if isinstance(event, Error):
                        error = event.message
                    elif isinstance(event, SessionEndEvent):
                        end = event
                    scope.sink(event)
        finally:
            await context.close()
        if end is not None and end.stop_reason in (StopReason.end_turn, StopReason.max_tokens):
            details: dict[str, Any] = {"path": child, "stop_reason": end.stop_reason.value}
            return ToolResultBlock(use.id, end.final_text, False, details)
        reason = end.stop_reason.value if end is not None else "stopped"
        text = f"Sub-agent '{child}' did not finish ({reason})" + (f": {error}" if error else "")
        return error_result(use.id, text + ".")
