"""A scripted model for team tests: its turns depend on the agent and on how far it got."""

from collections.abc import Callable, Sequence
from typing import Any

from swarm import Message, StreamEvent
from swarm.testing import FunctionTransport

Step = list[StreamEvent] | Callable[[list[Message]], list[StreamEvent]]


def scripted(scripts: dict[str, Sequence[Step]]) -> FunctionTransport:
    """A model whose turns depend on the agent (its system prompt) and on how many
    turns that agent instance has had (its assistant messages so far)."""

    def respond(messages: list[Message], tools: Any, system: str) -> list[StreamEvent]:
        turn = sum(1 for m in messages if m.role == "assistant")
        script = scripts[system]
        step = script[min(turn, len(script) - 1)]
        return step(messages) if callable(step) else step

    return FunctionTransport(respond)
