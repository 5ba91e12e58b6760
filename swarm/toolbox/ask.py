"""ask_user: a question to the person at the terminal, when there is one.

The tool is always in the toolbox, so a role that lists it loads in any run; where nobody
can answer (no ``ask`` given: a non-interactive run, a scripted test) each call is an error
result telling the model to go on without asking.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from swarm.errors import ToolError
from swarm.tools import Field, Tool

__all__ = ["Ask", "ask_tool"]

Ask = Callable[[str], Awaitable[str]]
"""How ``ask_user`` reaches a person: an async function from question to answer."""

_GO_ON = "Go on with your best judgement and state the assumption you made."


def ask_tool(ask: Ask | None) -> Tool[None]:
    """The ``ask_user`` tool: ``ask`` puts the question to a person (``None``: nobody can
    be asked, so every call is an error result saying so)."""

    async def ask_user(
        question: Annotated[
            str,
            Field(description="One clear, self-contained question; offer the options if any."),
        ],
    ) -> str:
        if ask is None:
            raise ToolError(f"No person can be asked in this run. {_GO_ON}")
        if not question.strip():
            raise ToolError("question is empty; write the question to ask")
        try:
            answer = await ask(question.strip())
        except ToolError:
            raise
        except Exception as exc:
            raise ToolError(
                f"The question could not reach the user ({type(exc).__name__}: {exc}). {_GO_ON}"
            ) from None
        answer = answer.strip()
        return answer or f"(The user gave no answer. {_GO_ON})"

    return Tool(
        "ask_user",
        ask_user,
        "Ask the user a question and wait for the answer. Use it only when you cannot go on"
        " without their decision or information you cannot find yourself; in runs where"
        " nobody can answer it returns an error, and you go on without.",
    )
