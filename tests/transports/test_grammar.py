"""tool_grammar: a forced call is one call under the tools' JSON schema (given back as a
tool call), and the answer after tool results is grammar-bound text without tools."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from swarm import Agent, IterationEnd, MemoryContextStore, Message, StopReason, TextDelta, Tool
from swarm.transports import OpenAITransport, for_tool_choice
from swarm.types import Usage


def _sse(*contents: str, finish: str = "stop") -> str:
    chunks = [
        json.dumps({"choices": [{"index": 0, "delta": {"content": c}, "finish_reason": None}]})
        for c in contents
    ]
    chunks.append(json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
    return "".join(f"data: {c}\n\n" for c in chunks) + "data: [DONE]\n\n"


async def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city}: sunny"


def _agent(requests: list[dict[str, Any]], replies: list[str]) -> tuple[Agent, Any]:
    def serve(request: httpx.Request) -> httpx.Response:
        requests.append(json.loads(request.content))
        body = replies[len(requests) - 1]
        return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})

    client = httpx.AsyncClient(transport=httpx.MockTransport(serve))
    base = OpenAITransport(
        "small", api_key="", client=client, tool_grammar=True, max_tokens=256,
        required_prefill="<tool_call>\n",
    )  # fmt: skip
    transport = for_tool_choice(base, "required")
    return Agent("s", transport, [Tool("lookup", lookup, "Look a city up.")]), client


@pytest.mark.anyio
async def test_the_forced_call_is_one_schema_bound_call_and_the_answer_is_bound_text() -> None:
    requests: list[dict[str, Any]] = []
    call = '{"name": "lookup", "arguments": {"city": "Oslo"}}'
    agent, client = _agent(requests, [_sse(call[:20], call[20:]), _sse("Oslo is sunny.")])
    store = MemoryContextStore()
    assert await agent.run("weather in Oslo?", store) == "Oslo is sunny."
    first, second = requests
    one_call = first["json_schema"]["anyOf"]
    assert [c["properties"]["name"] for c in one_call] == [{"const": "lookup"}]
    assert one_call[0]["properties"]["arguments"]["properties"]["city"]["maxLength"] == 120
    assert first["messages"][-1]["role"] == "user"  # no prefill before the grammar
    assert "tool_choice" not in first and first["tools"][0]["function"]["name"] == "lookup"
    assert "tools" not in second and "json_schema" not in second
    assert second["grammar"] == "root ::= [^<]{1,256}"
    assert second["messages"][-1] == {
        "role": "tool",
        "tool_call_id": second["messages"][-2]["tool_calls"][0]["id"],
        "content": "Oslo: sunny",
    }
    await client.aclose()


@pytest.mark.anyio
async def test_a_forced_call_cut_short_comes_back_as_text_with_its_stop_reason() -> None:
    requests: list[dict[str, Any]] = []
    agent, client = _agent(requests, [_sse('{"name": "look', finish="length")])
    tools = [Tool("lookup", lookup, "Look a city up.")]
    events = [e async for e in agent.transport.stream([Message.user("weather?")], tools, "")]
    assert events == [
        TextDelta(0, '{"name": "look'),
        IterationEnd(1, StopReason.max_tokens, Usage()),
    ]
    await client.aclose()
