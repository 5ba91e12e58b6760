"""MemoryContextStore: history in a list, for tests and short-lived agents."""

from __future__ import annotations

import copy
from collections.abc import Sequence

from swarm.context.base import ContextStore
from swarm.messages import Message

__all__ = ["MemoryContextStore"]


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
