"""ContextStore: where an agent's conversation history lives, and MemoryContextStore, the
store that keeps it in a list (the default every other store's ``fork`` falls back to)."""

from __future__ import annotations

import copy
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Self

from swarm.messages import Message

__all__ = ["ContextStore", "MemoryContextStore", "SessionInfo", "preview_of"]


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One stored session: its size, a preview of its first message, its token totals,
    and the session it was forked from (``parent_id``), if any."""

    session_id: str
    message_count: int
    preview: str
    created_at: str
    input_tokens: int = 0
    output_tokens: int = 0
    parent_id: str | None = None


def preview_of(history: Sequence[Message], limit: int = 80) -> str:
    """The first text of a history, cut to ``limit`` characters."""
    for message in history:
        text = message.text.strip()
        if text:
            text = " ".join(text.split())
            return text if len(text) <= limit else text[: limit - 1] + "…"
    return ""


def _new_session_id() -> str:
    """A random (version 4) UUID's hex, as ``uuid.uuid4().hex`` makes it but without the
    ``UUID`` object: a third of the cost, paid by every sub-agent of a fan-out."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    return raw.hex()


class ContextStore(ABC):
    """Conversation history storage.

    Subclasses implement ``append``, ``get_history`` and ``clear``; everything else has a
    working default. ``append_many`` must be atomic in stores that persist: the loop
    writes an assistant message with tool uses together with its tool results through it,
    so history never holds a call without its result.
    """

    _session_id: str
    _created_at: str

    @property
    def session_id(self) -> str:
        """This session's id (a UUID hex, made on first use)."""
        try:
            return self._session_id
        except AttributeError:
            self._session_id = _new_session_id()
            return self._session_id

    @property
    def created_at(self) -> str:
        try:
            return self._created_at
        except AttributeError:
            self._created_at = datetime.now(UTC).isoformat(timespec="seconds")
            return self._created_at

    @abstractmethod
    async def append(self, message: Message) -> None:
        """Add one message at the end."""

    @abstractmethod
    async def get_history(self) -> list[Message]:
        """The whole history, oldest first (a new list the caller may keep)."""

    async def _loop_history(self) -> list[Message]:
        """The history for the loop's own reading: a new list, its messages possibly
        shared with the store (the loop never changes them). Defaults to
        ``get_history()``."""
        return await self.get_history()

    @abstractmethod
    async def clear(self) -> None:
        """Remove every message."""

    async def append_many(self, messages: Sequence[Message]) -> None:
        """Add several messages at once (atomically, in stores that persist)."""
        for message in messages:
            await self.append(message)

    async def append_turn(
        self, messages: Sequence[Message], input_tokens: int, output_tokens: int
    ) -> None:
        """Store one iteration of the loop: its messages (atomically, in stores that
        persist) and the model call's usage, as ``append_many`` then
        ``add_context_tokens``. Persistent stores do both in one write; wrappers such
        as ``AutoCompactStore`` compact after it, as from ``add_context_tokens``."""
        if messages:
            await self.append_many(messages)
        await self.add_context_tokens(input_tokens, output_tokens)

    async def replace(self, messages: Sequence[Message]) -> None:
        """Replace the whole history (compaction uses this). Persistent stores archive the
        old history rather than lose it."""
        await self.clear()
        await self.append_many(messages)

    async def fork(self) -> ContextStore:
        """An independent copy of this history; a ``MemoryContextStore`` by default."""
        return MemoryContextStore(await self.get_history())

    async def set_context_tokens(self, input_tokens: int, output_tokens: int) -> None:
        """Set the token totals. Dropped by default."""

    async def get_context_tokens(self) -> tuple[int, int]:
        """The token totals ``(input, output)``; ``(0, 0)`` by default."""
        return (0, 0)

    async def add_context_tokens(self, input_tokens: int, output_tokens: int) -> None:
        """Add one model call's usage. The loop calls this after every iteration with that
        call's real input size; ``AutoCompactStore`` compacts from here."""
        total_in, total_out = await self.get_context_tokens()
        await self.set_context_tokens(total_in + input_tokens, total_out + output_tokens)

    async def list_sessions(self) -> list[SessionInfo]:
        """The sessions this store can reach; by default just this one."""
        history = await self.get_history()
        total_in, total_out = await self.get_context_tokens()
        return [
            SessionInfo(
                self.session_id,
                len(history),
                preview_of(history),
                self.created_at,
                total_in,
                total_out,
            )
        ]

    async def close(self) -> None:
        """Release resources. No-op by default."""

    @classmethod
    async def from_history(cls, history: list[Message], /, *args: Any, **kwargs: Any) -> Self:
        """A new store of this type holding ``history``; ``args`` and ``kwargs`` go to the
        constructor (``SQLiteContextStore.from_history(history, "ctx.db")``)."""
        store = cls(*args, **kwargs)
        await store.append_many(history)
        return store

    @classmethod
    async def from_context(cls, context: ContextStore, /, *args: Any, **kwargs: Any) -> Self:
        """A new store of this type holding a copy of another store's history and token
        totals; ``args`` and ``kwargs`` go to the constructor."""
        store = await cls.from_history(await context.get_history(), *args, **kwargs)
        await store.set_context_tokens(*await context.get_context_tokens())
        return store


class MemoryContextStore(ContextStore):
    """History kept in memory. ``fork()`` returns an independent copy.

    ``get_history()`` and ``fork()`` hand out copies of the messages (their content lists
    and tool arguments are mutable), so changing what they return never alters the store.
    """

    def __init__(self, history: list[Message] | None = None) -> None:
        self._messages: list[Message] = list(history) if history else []
        self._tokens = (0, 0)

    async def append(self, message: Message) -> None:
        self._messages.append(message)

    async def append_many(self, messages: Sequence[Message]) -> None:
        self._messages.extend(messages)

    async def append_turn(
        self, messages: Sequence[Message], input_tokens: int, output_tokens: int
    ) -> None:
        self._messages.extend(messages)
        self._tokens = (self._tokens[0] + input_tokens, self._tokens[1] + output_tokens)

    async def get_history(self) -> list[Message]:
        """A deep copy of the history: the caller may change it freely."""
        return copy.deepcopy(self._messages)

    async def _loop_history(self) -> list[Message]:
        return list(self._messages)

    async def clear(self) -> None:
        self._messages.clear()

    async def replace(self, messages: Sequence[Message]) -> None:
        self._messages = list(messages)

    async def fork(self) -> MemoryContextStore:
        forked = MemoryContextStore(copy.deepcopy(self._messages))
        forked._tokens = self._tokens
        return forked

    async def set_context_tokens(self, input_tokens: int, output_tokens: int) -> None:
        self._tokens = (input_tokens, output_tokens)

    async def get_context_tokens(self) -> tuple[int, int]:
        return self._tokens

    async def add_context_tokens(self, input_tokens: int, output_tokens: int) -> None:
        self._tokens = (self._tokens[0] + input_tokens, self._tokens[1] + output_tokens)
