"""An Agent with tools runs end to end against a local server that answers with real
recordings: a tool call first, then text once it sees the tool result."""

from typing import Any

import pytest

from swarm import (
    Agent,
    MemoryContextStore,
    Message,
    SessionEndEvent,
    StopReason,
    StreamEvent,
    TextDelta,
    ToolResult,
    Usage,
    tool,
)
from swarm.run import current_call
from swarm.transports import (
    AnthropicTransport,
    OpenAITransport,
    on_user_turn,
    transport_from_spec,
)

from .recordings import cassette, sse_body
from .server import LLMServer, Received, Reply, sse_chunks


async def run(agent: Agent, task: str) -> tuple[list[StreamEvent], list[Message]]:
    context = MemoryContextStore()
    async with agent.run_stream(task, context) as stream:
        events = [event async for event in stream]
    return events, await context.get_history()


def tool_messages(received: Received) -> int:
    return sum(1 for m in received.body["messages"] if m["role"] == "tool")


def has_tool_result(received: Received) -> bool:
    return any(
        isinstance(m["content"], list) and any(b.get("type") == "tool_result" for b in m["content"])
        for m in received.body["messages"]
    )


def without_null_content(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in m.items() if not (k == "content" and v is None)} for m in messages]


@tool
async def get_capital(country: str) -> str:
    """Return the capital of a country."""
    return {"UK": "London"}.get(country, "unknown")


@pytest.mark.anyio
async def test_openai_agent_calls_the_tool_then_answers() -> None:
    first, second = cassette(
        "openai-chat-stream__tool-call-split-args__usage-chunk__gpt-4o-mini.vcr.yaml"
    )

    def respond(received: Received) -> Reply:
        return Reply.sse(second.body if tool_messages(received) else first.body)

    task = first.request["messages"][0]["content"]
    with LLMServer(responder=respond) as server:
        transport = OpenAITransport("gpt-4o-mini", base_url=server.url + "/v1", api_key="k")
        async with transport:
            events, history = await run(Agent("", transport, [get_capital]), task)
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(r.name, r.input, r.content) for r in results] == [
        ("get_capital", {"country": "UK"}, "London")
    ]
    end = events[-1]
    assert isinstance(end, SessionEndEvent)
    assert (end.stop_reason, end.total_usage) == (StopReason.end_turn, Usage(53 + 78, 15 + 9))
    assert history[-1].text == "The capital of the UK is London."
    # what the agent sent back is exactly what the real client sent in the recording
    assert server.requests[1].body["messages"] == second.request["messages"]
    assert server.requests[1].body["tools"][0]["function"]["name"] == "get_capital"


@tool
async def get_country() -> str:
    """Return the country."""
    return "Mexico"


@tool
async def get_product_name() -> str:
    """Return the product name."""
    return "Pydantic AI"


@tool
async def get_weather(city: str) -> str:
    """Return the weather in a city."""
    return "sunny"


@tool
async def final_result(answers: list[dict[str, str]]) -> str:
    """Record the final answers."""
    return "recorded"


@pytest.mark.anyio
async def test_openai_agent_runs_parallel_calls_over_several_turns() -> None:
    recorded = cassette("openai-chat-stream__parallel-tool-calls__multi-turn__gpt-4o.vcr.yaml")
    answer = cassette(
        "openai-chat-stream__tool-call-split-args__usage-chunk__gpt-4o-mini.vcr.yaml"
    )[1]
    by_results = {0: recorded[0], 2: recorded[1], 3: recorded[2]}

    def respond(received: Received) -> Reply:
        return Reply.sse(by_results.get(tool_messages(received), answer).body)

    tools = [get_weather, get_country, get_product_name, final_result]
    task = recorded[0].request["messages"][0]["content"]
    with LLMServer(responder=respond) as server:
        transport = OpenAITransport("gpt-4o", base_url=server.url + "/v1", api_key="k")
        async with transport:
            events, history = await run(Agent("", transport, tools), task)
    results = [(e.name, e.content) for e in events if isinstance(e, ToolResult)]
    assert results == [
        ("get_country", "Mexico"),
        ("get_product_name", "Pydantic AI"),
        ("get_weather", "sunny"),
        ("final_result", "recorded"),
    ]
    assert len(server.requests) == 4
    for sent, expected in zip(server.requests[1:3], recorded[1:3], strict=True):
        assert without_null_content(sent.body["messages"]) == expected.request["messages"]
    assert history[-1].text == "The capital of the UK is London."


async def _fixed_version() -> str:
    return "0.32a0"


fixed_version = tool(name="fixed_version", description="Return a fixed test version string")(
    _fixed_version
)


@pytest.mark.anyio
async def test_anthropic_agent_sends_signed_thinking_back_with_the_tool_result() -> None:
    first, second = cassette(
        "anthropic-stream__thinking-signature-then-tool_use__tool_result-turn__haiku-4.5.vcr.yaml"
    )

    def respond(received: Received) -> Reply:
        return Reply.sse(second.body if has_tool_result(received) else first.body)

    task = first.request["messages"][0]["content"][0]["text"]
    with LLMServer(responder=respond) as server:
        transport = AnthropicTransport(
            "claude-haiku-4-5-20251001",
            base_url=server.url,
            api_key="k",
            max_tokens=64000,
            thinking_budget=1024,
        )
        async with transport:
            events, history = await run(Agent("", transport, [fixed_version]), task)
    assert [e.content for e in events if isinstance(e, ToolResult)] == ["0.32a0"]
    assert server.requests[1].body["messages"] == second.request["messages"]
    assert server.requests[1].body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert history[-1].text.startswith("The version is **0.32a0**.")
    end = events[-1]
    assert isinstance(end, SessionEndEvent) and end.stop_reason == StopReason.end_turn


@tool
async def get_time(city: str) -> str:
    """Return the local time in a city."""
    return f"12:00 in {city}"


@tool
async def weather(city: str) -> str:
    """Return the weather in a city."""
    return f"rain in {city}"


@pytest.mark.anyio
async def test_small_local_model_is_forced_and_primed_on_its_first_turn_only() -> None:
    calls = sse_body(
        "llamacpp-openai-compat-stream__smollm2-135m__parallel-tool-calls-split-args.sse.txt"
    ).replace(b'"get_weather"', b'"weather"')
    answer = cassette(
        "openai-chat-stream__tool-call-split-args__usage-chunk__gpt-4o-mini.vcr.yaml"
    )[1].body

    def respond(received: Received) -> Reply:
        return Reply.sse(answer if tool_messages(received) else calls)

    with LLMServer(responder=respond) as server:
        transport = transport_from_spec(
            f"openai-compatible:{server.url}/v1:smollm2-135m-instruct",
            tool_choice=on_user_turn("required", otherwise="auto"),
            prefill=on_user_turn("<tool_call>\n"),
        )
        assert isinstance(transport, OpenAITransport)
        async with transport:
            events, history = await run(Agent("", transport, [get_time, weather]), "Tokyo?")
    first, second = (r.body for r in server.requests)
    assert first["tool_choice"] == "required"
    assert first["messages"][-1] == {"role": "assistant", "content": "<tool_call>\n"}
    assert second["tool_choice"] == "auto"
    assert second["messages"][-1]["role"] == "tool"
    assert "authorization" not in server.requests[0].headers
    assert [e.content for e in events if isinstance(e, ToolResult)] == [
        "12:00 in Tokyo",
        "rain in Tokyo",
    ]
    assert history[1].text == ""  # the prefill is not part of the answer


@pytest.mark.anyio
async def test_anthropic_agent_runs_parallel_calls_from_a_llamacpp_stream() -> None:
    calls = sse_body(
        "llamacpp-anthropic-compat-stream__smollm2-135m__3-tool_use-blocks-stops-at-end.sse.txt"
    ).replace(b'"get_weather"', b'"weather"')
    answer = cassette(
        "anthropic-stream__text-then-2-parallel-tool_use-empty-input__ratelimit-headers__haiku-3.5.vcr.yaml"
    )[1].body
    seen_ids: list[str] = []

    @tool
    async def traced_time(city: str) -> str:
        """Return the local time in a city."""
        call = current_call()
        seen_ids.append(call.call_id if call else "")
        return "noon"

    def respond(received: Received) -> Reply:
        return Reply.sse(answer if has_tool_result(received) else calls)

    with LLMServer(responder=respond) as server:
        transport = AnthropicTransport(
            "smollm2", base_url=server.url, api_key="", tool_choice="required"
        )
        agent = Agent("sys", transport, [traced_time.copy(name="get_time"), weather])
        async with transport:
            _, history = await run(agent, "Takayama?")
    assert seen_ids == ["EA9MLgpQ09GgkWmQaYENvGgeR070Fkei"]
    results = server.requests[1].body["messages"][-1]["content"]
    assert [r["tool_use_id"] for r in results] == [
        "EA9MLgpQ09GgkWmQaYENvGgeR070Fkei",
        "q6bsKWUARUJGRS6FHfSU3jOQgDGWL5Xs",
        "EzWABXusvrSBFbw39G7qBeu6mUgLO50c",
    ]
    assert [r["content"] for r in results] == ["noon", "rain in Takayama", "rain in Takayama"]
    assert server.requests[0].body["tool_choice"] == {"type": "any"}
    assert history[-1].text.startswith("Here are two fun names for your pet pelican")


@pytest.mark.anyio
async def test_interrupting_a_run_mid_stream_ends_it_cancelled_and_frees_the_transport() -> None:
    body = cassette("openai-chat-stream__tool-call-split-args__usage-chunk__gpt-4o-mini.vcr.yaml")[
        1
    ].body
    stalled = Reply(tuple(sse_chunks(body))[:3], end="stall")
    with LLMServer([stalled, Reply.sse(body)]) as server:
        transport = OpenAITransport("gpt-4o-mini", base_url=server.url + "/v1", api_key="k")
        async with transport:
            agent = Agent("", transport)
            context = MemoryContextStore()
            async with agent.run_stream("hi", context) as stream:
                async for event in stream:
                    if isinstance(event, TextDelta):
                        stream.interrupt()
                end = stream.session_end
            assert end is not None and end.stop_reason == StopReason.cancelled
            answer = await agent.run("again", MemoryContextStore())
    assert answer == "The capital of the UK is London."
