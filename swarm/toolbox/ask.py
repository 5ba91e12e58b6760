"""ask_user: a question to the person at the terminal, when there is one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from swarm.errors import ToolError
from swarm.tools import Field, Tool

__all__ = ["Ask", "ask_tool"]

Ask = Callable[[str], Awaitable[str]]
"""How ``ask_user`` reaches a person: an async function from question to answer."""


def ask_tool(ask: Ask | None) -> Tool[None]:
    """The ``ask_user`` tool. With no ``ask`` (nobody at a terminal) it answers with an
    error telling the model to go on without asking."""

    async def ask_user(
        question: Annotated[str, Field(description="One clear question for the user.")],
    ) -> str:
        if ask is None:
            raise ToolError(
                "No person can be asked in this run. Go on with your best judgement and"
                " state the assumption you made."
            )
        answer = (await ask(question)).strip()
        return answer or "(the user gave no answer)"

    return Tool(
        "ask_user",
        ask_user,
        "Ask the user a question when you cannot go on without their decision.",
    )
