"""A role's tool_choice reaches its transport: 'required' on the first call of a user
turn (with the transport's required_prefill), 'auto' after tool results."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from swarm import Agent, MemoryContextStore, Tool
from swarm.transports import OpenAITransport, for_tool_choice

TOOL_CALL = (
    'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function",'
    '"function":{"name":"ping","arguments":"{}"}}]},"finish_reason":null}]}\n\n'
    'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
    "data: [DONE]\n\n"
)
TEXT = (
    'data: {"choices":[{"index":0,"delta":{"content":"pong"},"finish_reason":null}]}\n\n'
    'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    "data: [DONE]\n\n"
)


async def ping() -> str:
    return "pong"


@pytest.mark.anyio
async def test_required_applies_to_the_first_call_with_the_prefill_then_auto() -> None:
    requests: list[dict[str, Any]] = []

    def serve(request: httpx.Request) -> httpx.Response:
        requests.append(json.loads(request.content))
        body = TOOL_CALL if len(requests) == 1 else TEXT
        return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})

    client = httpx.AsyncClient(transport=httpx.MockTransport(serve))
    base = OpenAITransport("small", api_key="", client=client, required_prefill="<tool_call>\n")
    transport = for_tool_choice(base, "required")
    agent = Agent("s", transport, [Tool("ping", ping)])
    assert await agent.run("go", MemoryContextStore()) == "pong"
    first, second = requests
    assert first["tool_choice"] == "required"
    assert first["messages"][-1] == {"role": "assistant", "content": "<tool_call>\n"}
    assert second["tool_choice"] == "auto"
    assert second["messages"][-1]["role"] == "tool"
    await client.aclose()


def test_other_choices_apply_to_every_call_and_keep_the_pool() -> None:
    base = OpenAITransport("m", api_key="")
    none = for_tool_choice(base, "none")
    assert none.tool_choice == "none" and none.prefill is None
    assert none._pool is base._pool
