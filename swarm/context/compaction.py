"""Context compaction: summarise the middle of a long history so it fits the model again.

A compacted history keeps, verbatim, the first user message (the original task) at the
top and the last ``keep_recent`` messages at the bottom; the messages in between are
replaced by one summary that a model writes from a readable transcript of them. The cut
never separates a tool use from its result (the recent part grows to include the call),
and the summary is placed so that roles keep alternating: appended to the first user
message when the recent part starts with the assistant, or as an assistant message when
it starts with a user message. The system prompt is not part of the history and is never
touched. Compacting an already compacted history folds the earlier summary into the new
one.

``AutoCompactStore`` does this by itself when a model call's input grows past a threshold.
"""

from __future__ import annotations

import contextlib
import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, assert_never

import anyio

from swarm._log import logger
from swarm.context.base import ContextStore, MemoryContextStore, SessionInfo
from swarm.errors import CompactionError
from swarm.events import ContextCompacted, Error, IterationEnd, StreamEvent, TextDelta
from swarm.messages import (
    ImageBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from swarm.scope import current_scope, emit
from swarm.spend import hold_request
from swarm.transports.base import CompletionTransport, context_window_of

__all__ = [
    "DEFAULT_SUMMARY_PROMPT",
    "SUMMARY_HEADER",
    "AutoCompactStore",
    "CompactHook",
    "CompactionError",
    "compact_context",
]

_log = logger("swarm.context")

DEFAULT_SUMMARY_PROMPT = (
    "You are a conversation summarizer. You will see a conversation between a user and an"
    " AI assistant, including tool calls and their results. Produce a concise summary"
    " preserving: user goals, decisions made, key facts, tool outcomes, and state changes."
    " Write as narrative prose, not as a transcript."
)
"""The summariser's system prompt unless one is given."""

SUMMARY_HEADER = "[Summary of the earlier conversation]"
"""The first line of the text block that carries a summary in a compacted history."""

_CLIP = 2000  # characters of one text, tool input or tool result shown to the summariser

CompactHook = Callable[[list[Message]], Awaitable[None] | None]
"""``on_compact(history)``: sync or async, called with the history about to be compacted."""


@dataclass(frozen=True, slots=True)
class _Plan:
    head: list[Message]  # kept on top; its last message is the task, earlier summary removed
    earlier: str  # the summary an earlier compaction left in the head ("" if none)
    middle: list[Message]  # summarised
    tail: list[Message]  # kept at the bottom


@dataclass(frozen=True, slots=True)
class _Compaction:
    messages: list[Message]
    summary: str


async def compact_context(
    context: ContextStore,
    transport: CompletionTransport,
    *,
    keep_recent: int = 6,
    system_prompt: str = DEFAULT_SUMMARY_PROMPT,
) -> list[Message] | None:
    """Summarise the middle of ``context``'s history, keeping its start and end verbatim.

    Returns the compacted history (``context`` is not changed), or ``None`` when the
    history is too short to gain anything (fewer than two messages between the task and
    the recent part). Raises ``CompactionError`` when the summariser fails.
    """
    compaction = await _compact(await context.get_history(), transport, keep_recent, system_prompt)
    return None if compaction is None else compaction.messages


async def _compact(
    history: list[Message], transport: CompletionTransport, keep_recent: int, system_prompt: str
) -> _Compaction | None:
    plan = _plan(history, keep_recent)
    if plan is None:
        return None
    summary = await _summarise(transport, _request(plan), system_prompt)
    return _Compaction(_join(plan, summary), summary)


def _plan(history: list[Message], keep_recent: int) -> _Plan | None:
    """Where to cut: after the first user message, and before the recent part (moved
    back, never forward, until it parts no tool call from its result)."""
    size = len(history)
    first_user = next((i for i, m in enumerate(history) if m.role == "user"), None)
    start = 0 if first_user is None else first_user + 1
    head = history[:start]
    earlier = ""
    if head:
        head[-1], earlier = _split_summary(head[-1])
    blocked = _blocked_cuts(history)
    if start in blocked:
        return None
    task_on_top = bool(head) and head[-1].role == "user"

    def can_cut(cut: int) -> bool:
        if cut - start < 2 or cut in blocked:
            return False
        if cut == size:
            return True
        role = history[cut].role
        return role == "assistant" or (role == "user" and task_on_top)

    for cut in range(size - max(keep_recent, 0), start + 1, -1):
        if can_cut(cut):
            return _Plan(head, earlier, history[start:cut], history[cut:])
    return None


def _blocked_cuts(history: Sequence[Message]) -> set[int]:
    """Cut points (a cut at ``i`` keeps ``history[i:]``) that would part a tool use from
    its result."""
    used_at: dict[str, int] = {}
    blocked: set[int] = set()
    for j, message in enumerate(history):
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                used_at[block.id] = j
            elif isinstance(block, ToolResultBlock):
                i = used_at.get(block.tool_use_id)
                if i is not None:
                    blocked.update(range(i + 1, j + 1))
    return blocked


def _split_summary(message: Message) -> tuple[Message, str]:
    """The message without the summary blocks an earlier compaction added, and their text."""
    kept: list[Any] = []
    found: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock) and block.text.startswith(SUMMARY_HEADER):
            found.append(block.text[len(SUMMARY_HEADER) :].strip())
        else:
            kept.append(block)
    if not found:
        return message, ""
    return Message(message.role, kept), "\n\n".join(found)


def _join(plan: _Plan, summary: str) -> list[Message]:
    """Head, summary, tail, with roles alternating across both seams."""
    note = TextBlock(f"{SUMMARY_HEADER}\n{summary}")
    head, tail = plan.head, plan.tail
    if tail and tail[0].role == "user":  # the plan made sure the head ends with the task
        return [*head, Message("assistant", [note]), *tail]
    if head and head[-1].role == "user":
        return [*head[:-1], Message("user", [*head[-1].content, note]), *tail]
    return [*head, Message("user", [note]), *tail]


def _request(plan: _Plan) -> str:
    """What the summariser is asked, the middle of the conversation as a transcript."""
    parts = ["Summarise the conversation below."]
    task = plan.head[-1].text.strip() if plan.head and plan.head[-1].role == "user" else ""
    if task:
        parts.append(
            "It continues from the user's original request, which is kept verbatim and need"
            f" not be repeated:\n<request>\n{_clip(task)}\n</request>"
        )
    if plan.earlier:
        parts.append(
            "An earlier summary covers what came before it:\n"
            f"<earlier-summary>\n{plan.earlier}\n</earlier-summary>"
        )
    parts.append(f"<conversation>\n{_transcript(plan.middle)}\n</conversation>")
    return "\n\n".join(parts)


def _transcript(messages: Sequence[Message]) -> str:
    """Messages as plain text: who said what, which tools were called and what came back."""
    names = {use.id: use.name for m in messages for use in m.tool_uses}
    speakers = {"user": "User", "assistant": "Assistant", "system": "System"}
    lines: list[str] = []
    for message in messages:
        speaker = speakers[message.role]
        for block in message.content:
            match block:
                case TextBlock(text=text):
                    if text.strip():
                        lines.append(f"{speaker}: {_clip(text.strip())}")
                case ImageBlock(media_type=media_type, data=data):
                    lines.append(f"{speaker}: [an image, {media_type}, {len(data)} bytes]")
                case ReasoningBlock():
                    pass  # private reasoning; its conclusions show in what follows
                case ToolUseBlock(name=name, input=arguments):
                    rendered = json.dumps(arguments, ensure_ascii=False, default=str)
                    lines.append(f"{speaker} called tool {name} with {_clip(rendered)}")
                case ToolResultBlock(tool_use_id=call_id, is_error=is_error):
                    name = names.get(call_id, "(an earlier call)")
                    images = sum(isinstance(b, ImageBlock) for b in block.content)
                    shown = block.text + (f" [{images} image(s)]" if images else "")
                    outcome = "failed" if is_error else "returned"
                    lines.append(f"Tool {name} {outcome}: {_clip(shown.strip())}")
                case _:
                    assert_never(block)
    return "\n\n".join(lines)


def _clip(text: str, limit: int = _CLIP) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]} […{len(text) - limit} more characters]"


async def _summarise(transport: CompletionTransport, request: str, system_prompt: str) -> str:
    """The summariser's text; ``CompactionError`` on any failure (not on cancellation)."""
    parts: list[str] = []
    stream: AsyncIterator[StreamEvent] | None = None
    budget = current_scope().budget  # the summary is spent on the agent's budget
    held = 0.0
    try:
        messages = [Message.user(request)]
        if budget is not None and budget.dollar_limited:  # held before it is sent
            held = hold_request(budget, transport, messages, [], system_prompt)
        stream = transport.stream(messages, [], system_prompt)
        async for event in stream:
            if isinstance(event, TextDelta):
                parts.append(event.delta)
            elif isinstance(event, IterationEnd):
                if budget is not None:
                    budget.settle(held, event.usage, iteration=False)
                    held = 0.0
            elif isinstance(event, Error):
                raise CompactionError(f"the summariser failed: {event.message}") from (
                    event.exception
                )
    except CompactionError:
        raise
    except Exception as exc:
        raise CompactionError(f"the summariser failed: {type(exc).__name__}: {exc}") from exc
    finally:
        if budget is not None and held:  # no usage came: give the hold back
            budget.release(held)
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            with anyio.CancelScope(shield=True):
                await aclose()
    summary = "".join(parts).strip()
    if not summary:
        raise CompactionError("the summariser returned no text")
    return summary


_UNLOCKED: contextlib.AbstractAsyncContextManager[Any] = contextlib.nullcontext()


def _context_window(transport: CompletionTransport) -> int:
    return context_window_of(transport) or 128_000


class AutoCompactStore(ContextStore):
    """A ``ContextStore`` wrapper that compacts the wrapped store when its context grows.

    Compaction fires from ``add_context_tokens`` (the loop calls it after every model call)
    when that call's ``input_tokens`` reach ``threshold * max_tokens``; ``max_tokens``
    defaults to the transport's ``context_window`` (or 128 000). The summary is written
    from a snapshot of the history (an in-memory fork: a persistent ``fork()`` would
    leave a session in a SQLite file per compaction) while the wrapped store stays
    writable; then, under a
    ``on_compact(history)`` (sync or async) is called with the history about to be
    compacted, and the history is replaced through ``store.replace()`` (so a
    ``SQLiteContextStore`` archives the old one) under a lock that this wrapper's own
    writes also take, with anything added meanwhile kept after the compacted part. A
    ``ContextCompacted`` event goes to the running agent's stream.

    If summarising fails (or the hook raises, or there is too little to compact) the
    history is left untouched, the reason is logged (structlog, ``swarm.context``), and
    the next attempt waits until the input has grown by 5 % of ``max_tokens``, doubling
    with each further failure, so a failing summariser is not called on every iteration.
    Everything else (history, sessions, tokens, ``close``) is the wrapped store's.
    """

    def __init__(
        self,
        store: ContextStore,
        transport: CompletionTransport,
        *,
        keep_recent: int = 6,
        max_tokens: int | None = None,
        threshold: float = 0.75,
        on_compact: CompactHook | None = None,
        system_prompt: str = DEFAULT_SUMMARY_PROMPT,
    ) -> None:
        if not 0 < threshold <= 1:
            raise ValueError(f"threshold must be in (0, 1], not {threshold}")
        self.store = store
        self.transport = transport
        self.keep_recent = keep_recent
        self.max_tokens = max_tokens if max_tokens is not None else _context_window(transport)
        self.threshold = threshold
        self.on_compact = on_compact
        self.system_prompt = system_prompt
        # Writes wait while a compaction swaps the history in. A MemoryContextStore's
        # writes never suspend, so nothing can interleave with the swap: no lock (a
        # fan-out's every sub-agent has one of these stores).
        self._lock: contextlib.AbstractAsyncContextManager[Any] = (
            _UNLOCKED
            if type(store) is MemoryContextStore
            else anyio.Lock(fast_acquire=True)  # no checkpoint when uncontended
        )
        self._compacting = False
        self._failures = 0
        self._retry_at = 0

    @property
    def session_id(self) -> str:
        """The wrapped store's session id."""
        return self.store.session_id

    @property
    def created_at(self) -> str:
        """When the wrapped store's session was created."""
        return self.store.created_at

    async def append(self, message: Message) -> None:
        """Add one message to the wrapped store."""
        if self._lock is _UNLOCKED:  # (no two coroutines of a null lock per message)
            return await self.store.append(message)
        async with self._lock:
            await self.store.append(message)

    async def append_many(self, messages: Sequence[Message]) -> None:
        """Add several messages to the wrapped store at once."""
        async with self._lock:
            await self.store.append_many(messages)

    async def get_history(self) -> list[Message]:
        """The wrapped store's history."""
        return await self.store.get_history()

    async def _loop_history(self) -> list[Message]:
        return await self.store._loop_history()

    async def clear(self) -> None:
        """Clear the wrapped store."""
        async with self._lock:
            await self.store.clear()

    async def replace(self, messages: Sequence[Message]) -> None:
        """Replace the wrapped store's history."""
        async with self._lock:
            await self.store.replace(messages)

    async def fork(self) -> AutoCompactStore:
        """An ``AutoCompactStore`` with the same settings around a fork of the wrapped store."""
        return AutoCompactStore(
            await self.store.fork(),
            self.transport,
            keep_recent=self.keep_recent,
            max_tokens=self.max_tokens,
            threshold=self.threshold,
            on_compact=self.on_compact,
            system_prompt=self.system_prompt,
        )

    async def set_context_tokens(self, input_tokens: int, output_tokens: int) -> None:
        """Set the wrapped store's token totals."""
        await self.store.set_context_tokens(input_tokens, output_tokens)

    async def get_context_tokens(self) -> tuple[int, int]:
        """The wrapped store's token totals."""
        return await self.store.get_context_tokens()

    async def add_context_tokens(self, input_tokens: int, output_tokens: int) -> None:
        """Add one model call's usage to the wrapped store, then compact if that call's
        input reached the threshold (see the class docs)."""
        await self.store.add_context_tokens(input_tokens, output_tokens)
        if input_tokens >= self.threshold * self.max_tokens:  # else nothing to do
            await self._maybe_compact(input_tokens)

    async def append_turn(
        self, messages: Sequence[Message], input_tokens: int, output_tokens: int
    ) -> None:
        """Store an iteration in the wrapped store (one write there), then compact if the
        call's input reached the threshold."""
        await self.store.append_turn(messages, input_tokens, output_tokens)
        if input_tokens >= self.threshold * self.max_tokens:  # else nothing to do
            await self._maybe_compact(input_tokens)

    async def _maybe_compact(self, input_tokens: int) -> None:
        if (
            input_tokens >= self.threshold * self.max_tokens
            and input_tokens >= self._retry_at
            and not self._compacting
        ):
            self._compacting = True
            try:
                await self._compact(input_tokens)
            finally:
                self._compacting = False

    async def list_sessions(self) -> list[SessionInfo]:
        """The wrapped store's sessions."""
        return await self.store.list_sessions()

    async def close(self) -> None:
        """Close the wrapped store."""
        await self.store.close()

    async def _compact(self, input_tokens: int) -> None:
        snapshot = await self.store.get_history()
        try:
            compaction = await _compact(
                snapshot, self.transport, self.keep_recent, self.system_prompt
            )
        except CompactionError as exc:
            self._back_off(input_tokens, "the summariser failed", error=str(exc))
            return
        if compaction is None:
            self._back_off(input_tokens, "too little history to compact", warn=False)
            return
        if self.on_compact is not None:
            # Outside the lock, so that a hook may write to this store without deadlock;
            # whatever it (or anyone) adds meanwhile is kept after the compacted part.
            try:
                result = self.on_compact(await self.store.get_history())
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:
                self._back_off(input_tokens, "the on_compact hook failed", error=repr(exc))
                return
        async with self._lock:
            live = await self.store.get_history()
            if live[: len(snapshot)] != snapshot:
                self._back_off(input_tokens, "the history was replaced while summarising")
                return
            compacted = [*compaction.messages, *live[len(snapshot) :]]
            await self.store.replace(compacted)
        self._failures, self._retry_at = 0, 0
        _log.info(
            "context compacted",
            session_id=self.session_id,
            input_tokens=input_tokens,
            messages_before=len(live),
            messages_after=len(compacted),
        )
        emit(ContextCompacted(len(live), len(compacted), input_tokens, compaction.summary))

    def _back_off(self, input_tokens: int, reason: str, *, warn: bool = True, **kw: Any) -> None:
        """Leave the history alone and wait for the input to grow before trying again."""
        self._failures += 1
        step = max(1, self.max_tokens // 20) * 2 ** (self._failures - 1)
        self._retry_at = input_tokens + step
        report = _log.warning if warn else _log.info
        report(
            "context not compacted",
            reason=reason,
            session_id=self.session_id,
            input_tokens=input_tokens,
            retry_at=self._retry_at,
            **kw,
        )
