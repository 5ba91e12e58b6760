"""An agent with a tool and a guard, run offline against a scripted model.

Run it as it is: ``python examples/quickstart.py``.
"""

from typing import Annotated, Any

import anyio

from swarm import Agent, Field, GuardError, MemoryContextStore, PermissionGuard, Tool, tool
from swarm.testing import StubTransport, make_text_response, make_tool_uses_response


@tool
async def add(
    a: Annotated[int, Field(description="First number")],
    b: Annotated[int, Field(description="Second number")],
) -> str:
    """Add two integers."""
    return str(a + b)


class NoNegatives(PermissionGuard):
    """Denies additions of negative numbers."""

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        if min(kwargs.values()) < 0:
            raise GuardError("negative numbers are not allowed")
        return kwargs


async def main() -> None:
    model = StubTransport(
        [
            make_tool_uses_response(
                [("add", "c1", {"a": "2", "b": 3}), ("add", "c2", {"a": -1, "b": 1})]
            ),
            make_text_response("2 + 3 = 5; the other addition was refused."),
        ]
    )
    agent = Agent("You add numbers.", model, [add.copy(guards=(NoNegatives(),))])
    async with agent.run_stream("Add 2 and 3, and -1 and 1.", MemoryContextStore()) as stream:
        async for event in stream:
            print(event)


if __name__ == "__main__":
    anyio.run(main)
