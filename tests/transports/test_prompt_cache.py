"""Prompt caching in the requests swarm sends: Anthropic ``cache_control`` breakpoints on
the tools, the system prompt and the ends of the previous and the current turn (at most
four); OpenAI's ``prompt_cache_key``, one per role; none of either where caching is off
(for a transport, or for a role in its file)."""

import json
from pathlib import Path
from typing import Any

import pytest

from swarm import Agent, MemoryContextStore, Message, Team, run_team, tool
from swarm.transports import AnthropicTransport, OpenAITransport

from .server import LLMServer, Received, Reply


@tool
async def get_tide(harbour: str) -> str:
    """Return the time of high water at a harbour."""
    return "14:05"


def anthropic_reply(received: Received) -> Reply:
    """A tool call on the first request, an answer once a tool result came back."""
    answered = any(
        isinstance(m["content"], list) and any(b["type"] == "tool_result" for b in m["content"])
        for m in received.body["messages"]
    )
    usage = {"input_tokens": 10, "output_tokens": 5}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": {"usage": usage}}),
    ]
    if answered:
        block = {"type": "text", "text": "High water is at 14:05."}
        stop = "end_turn"
    else:
        block = {"type": "tool_use", "id": "toolu_1", "name": "get_tide", "input": {"harbour": "x"}}
        stop = "tool_use"
    events += [
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": usage},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    body = "".join(f"event: {kind}\ndata: {json.dumps(data)}\n\n" for kind, data in events)
    return Reply.sse(body)


def breakpoints(body: dict[str, Any]) -> list[str]:
    """Where the request's ``cache_control`` marks are, in prompt order."""
    found = [f"tool:{t['name']}" for t in body.get("tools", []) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list):
        found += ["system" for b in system if "cache_control" in b]
    for index, message in enumerate(body["messages"]):
        for block in message["content"]:
            if isinstance(block, dict) and "cache_control" in block:
                found.append(f"message {index}:{block['type']}")
    return found


async def two_turns(transport: Any) -> None:
    agent = Agent("You read tide tables.", transport, [get_tide])
    async with transport:
        await agent.run("When is high water?", MemoryContextStore())


@pytest.mark.anyio
async def test_anthropic_requests_carry_breakpoints_that_the_next_request_reuses() -> None:
    with LLMServer(responder=anthropic_reply) as server:
        await two_turns(AnthropicTransport("claude-sonnet-4-5", base_url=server.url, cache=True))
    first, second = (r.body for r in server.requests)
    assert breakpoints(first) == ["tool:get_tide", "system", "message 0:text"]
    assert breakpoints(second) == [
        "tool:get_tide",
        "system",
        "message 0:text",  # the end of the previous turn: what the first request wrote
        "message 2:tool_result",  # the end of this one: for the next request to read
    ]
    assert first["system"] == [
        {"type": "text", "text": "You read tide tables.", "cache_control": {"type": "ephemeral"}}
    ]
    # the second request starts with the bytes the first one cached
    assert second["tools"] == first["tools"] and second["system"] == first["system"]
    assert second["messages"][0] == first["messages"][0]


@pytest.mark.anyio
async def test_anthropic_cache_lifetime_of_an_hour_is_asked_for_on_every_breakpoint() -> None:
    with LLMServer(responder=anthropic_reply) as server:
        transport = AnthropicTransport(
            "claude-sonnet-4-5", base_url=server.url, cache=True, cache_ttl="1h"
        )
        await two_turns(transport)
    body = server.requests[1].body
    marks = [body["tools"][-1]["cache_control"], body["system"][0]["cache_control"]]
    marks += [m["content"][-1]["cache_control"] for m in body["messages"] if m["role"] == "user"]
    assert marks == [{"type": "ephemeral", "ttl": "1h"}] * 4


@pytest.mark.anyio
async def test_anthropic_requests_without_caching_carry_no_breakpoint() -> None:
    with LLMServer(responder=anthropic_reply) as server:
        await two_turns(AnthropicTransport("claude-sonnet-4-5", base_url=server.url, cache=False))
    for received in server.requests:
        assert "cache_control" not in json.dumps(received.body)
        assert received.body["system"] == "You read tide tables."


def test_caching_is_on_by_default_at_the_providers_only() -> None:
    messages = [Message.user("Hi")]
    official = AnthropicTransport("claude-sonnet-4-5", api_key="k")
    assert breakpoints(official.build_request(messages, [get_tide], "S")) == [
        "tool:get_tide",
        "system",
        "message 0:text",
    ]
    local = AnthropicTransport("claude-sonnet-4-5", base_url="http://127.0.0.1:9", api_key="")
    assert "cache_control" not in json.dumps(local.build_request(messages, [get_tide], "S"))
    assert "prompt_cache_key" in OpenAITransport("gpt-4.1", api_key="k").build_request(
        messages, [], "S"
    )
    compatible = OpenAITransport("qwen", base_url="http://127.0.0.1:9/v1", api_key="")
    assert "prompt_cache_key" not in compatible.build_request(messages, [], "S")


def test_at_most_four_breakpoints_in_a_long_history() -> None:
    history = [Message.user("task")]
    for n in range(6):
        history += [Message.assistant(f"step {n}"), Message.user(f"more {n}")]
    body = AnthropicTransport("claude-sonnet-4-5", api_key="k").build_request(
        history, [get_tide], "S"
    )
    assert breakpoints(body) == ["tool:get_tide", "system", "message 10:text", "message 12:text"]


def openai_reply(received: Received) -> Reply:
    def chunk(payload: dict[str, Any]) -> str:
        return f"data: {json.dumps(payload)}\n\n"

    system = received.body["messages"][0]["content"]
    done = any(m["role"] == "tool" for m in received.body["messages"])
    if system.startswith("You are lead") and not done:
        call = {"index": 0, "id": "call_1", "type": "function"}
        call["function"] = {"name": "reviewer", "arguments": json.dumps({"task": "review"})}
        delta: dict[str, Any] = {"role": "assistant", "tool_calls": [call]}
        finish = "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": "Done."}, "stop"
    body = chunk({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    body += chunk({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 2}})
    return Reply.sse(body + "data: [DONE]\n\n")


@pytest.mark.anyio
async def test_openai_requests_share_one_key_per_role_and_none_where_a_role_turns_it_off(
    tmp_path: Path,
) -> None:
    team_dir = tmp_path / "team"
    team_dir.mkdir()
    (team_dir / "lead.yaml").write_text(
        "description: Leads.\nsystem: You are lead.\ndelegates: [reviewer, helper]\n"
    )
    (team_dir / "reviewer.yaml").write_text(
        "description: Reviews.\nsystem: You are reviewer.\ncache: false\n"
    )
    (team_dir / "helper.yaml").write_text("description: Helps.\nsystem: You are helper.\n")
    team = Team.load(team_dir, entry="lead")
    with LLMServer(responder=openai_reply) as server:
        transport = OpenAITransport("gpt-4.1", base_url=server.url + "/v1", api_key="", cache=True)
        async with transport:
            for task in ("Review it.", "Review it again."):  # the lead's key stays the same
                async with run_team(team, task, transport=transport) as stream:
                    await stream.get_session_end()
    by_role: dict[str, list[str | None]] = {}
    for received in server.requests:
        role = received.body["messages"][0]["content"].split()[2].rstrip(".")
        by_role.setdefault(role, []).append(received.body.get("prompt_cache_key"))
    lead_keys = by_role["lead"]
    assert len(lead_keys) == 4 and len(set(lead_keys)) == 1 and lead_keys[0]
    assert by_role["reviewer"] == [None, None]  # `cache: false` in its role file
