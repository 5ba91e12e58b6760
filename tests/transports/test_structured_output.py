"""Typed answers through the Chat Completions structured output mode (``response_format``)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx

from swarm import Agent, MemoryContextStore, OpenAITransport, SessionEndEvent, tool
from swarm.types import StopReason

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "people": {"type": "integer"}},
    "required": ["city", "people"],
}


def _stream(content: str) -> bytes:
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": content}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 5}},
    ]
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def _run(answers: list[str], tools: list[Any]) -> tuple[list[dict[str, Any]], SessionEndEvent]:
    bodies: list[dict[str, Any]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        headers = {"content-type": "text/event-stream"}
        return httpx.Response(200, content=_stream(answers[len(bodies) - 1]), headers=headers)

    async def main() -> SessionEndEvent:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handle))
        transport = OpenAITransport(
            "m", base_url="http://127.0.0.1:9/v1", api_key="", client=client
        )
        agent = Agent("Answer.", transport, tools=tools, output=SCHEMA)
        async with agent.run_stream("Where?", MemoryContextStore()) as stream:
            end = await stream.get_session_end()
        await client.aclose()
        return end

    return bodies, anyio.run(main)


def test_a_typed_agent_without_tools_asks_for_the_json_schema() -> None:
    bodies, end = _run(['{"city": "Oslo", "people": 3}'], [])
    (body,) = bodies
    assert "tools" not in body
    assert body["response_format"]["type"] == "json_schema"
    sent = body["response_format"]["json_schema"]
    assert sent["name"] == "final_answer"
    assert sent["schema"]["required"] == ["city", "people"]
    assert sent["schema"]["additionalProperties"] is False
    assert end.stop_reason == StopReason.end_turn
    assert end.output == {"city": "Oslo", "people": 3}


def test_a_server_that_ignores_the_format_gets_the_answer_sent_back() -> None:
    bodies, end = _run(['{"city": "Oslo"}', '{"city": "Oslo", "people": 2}'], [])
    assert len(bodies) == 2
    assert "missing field 'people'" in bodies[1]["messages"][-1]["content"]
    assert end.output == {"city": "Oslo", "people": 2}


def test_with_other_tools_final_answer_is_offered_as_a_tool() -> None:
    @tool
    def lookup(name: str) -> str:
        """Look a name up."""
        return name

    bodies, _ = _run(['{"city": "Oslo", "people": 1}'], [lookup])
    names = [t["function"]["name"] for t in bodies[0]["tools"]]
    assert names == ["lookup", "final_answer"]
    assert "response_format" not in bodies[0]
