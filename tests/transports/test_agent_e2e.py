"""An Agent with tools runs end to end against a local server that answers with recorded
streams: a tool call first, then text once it sees the tool result. Each test runs on our
own streams, and on the third-party recordings as the ``conformance`` layer."""

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
from swarm.models.spec import transport_from_spec
from swarm.scope import current_call
from swarm.transports import AnthropicTransport, OpenAITransport, on_user_turn

from .recordings import cassette, conformance, sse_body
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
    return {"UK": "London", "France": "Paris"}.get(country, "unknown")


OPENAI_CAPITAL = "openai-chat__capital-tool-then-answer.yaml"
OPENAI_CAPITAL_THEIRS = (
    "openai-chat-stream__tool-call-split-args__usage-chunk__gpt-4o-mini.vcr.yaml"
)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "country", "capital", "usage", "answer"),
    [
        pytest.param(
            OPENAI_CAPITAL,
            "France",
            "Paris",
            Usage(61 + 86, 14 + 8),
            "The capital of France is Paris.",
            id="ours",
        ),
        conformance(
            OPENAI_CAPITAL_THEIRS,
            "UK",
            "London",
            Usage(53 + 78, 15 + 9),
            "The capital of the UK is London.",
            id="theirs",
        ),
    ],
)
async def test_openai_agent_calls_the_tool_then_answers(
    name: str, country: str, capital: str, usage: Usage, answer: str
) -> None:
    first, second = cassette(name)

    def respond(received: Received) -> Reply:
        return Reply.sse(second.body if tool_messages(received) else first.body)

    task = first.request["messages"][0]["content"]
    with LLMServer(responder=respond) as server:
        transport = OpenAITransport("gpt-4o-mini", base_url=server.url + "/v1", api_key="k")
        async with transport:
            events, history = await run(Agent("", transport, [get_capital]), task)
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [(r.name, r.input, r.content) for r in results] == [
        ("get_capital", {"country": country}, capital)
    ]
    end = events[-1]
    assert isinstance(end, SessionEndEvent)
    assert (end.stop_reason, end.total_usage) == (StopReason.end_turn, usage)
    assert history[-1].text == answer
    # what the agent sent back is exactly what the client sent in the recording
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
async def get_region() -> str:
    """Return the region."""
    return "Kansai"


@tool
async def get_mascot() -> str:
    """Return the mascot."""
    return "a deer"


@tool
async def get_forecast(city: str) -> str:
    """Return the forecast for a city."""
    return "light rain"


@tool
async def final_result(answers: list[dict[str, str]]) -> str:
    """Record the final answers."""
    return "recorded"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "answer_name", "tools", "results", "answer"),
    [
        pytest.param(
            "openai-chat__parallel-tool-calls__multi-turn.yaml",
            OPENAI_CAPITAL,
            [get_forecast, get_region, get_mascot, final_result],
            [
                ("get_region", "Kansai"),
                ("get_mascot", "a deer"),
                ("get_forecast", "light rain"),
                ("final_result", "recorded"),
            ],
            "The capital of France is Paris.",
            id="ours",
        ),
        conformance(
            "openai-chat-stream__parallel-tool-calls__multi-turn__gpt-4o.vcr.yaml",
            OPENAI_CAPITAL_THEIRS,
            [get_weather, get_country, get_product_name, final_result],
            [
                ("get_country", "Mexico"),
                ("get_product_name", "Pydantic AI"),
                ("get_weather", "sunny"),
                ("final_result", "recorded"),
            ],
            "The capital of the UK is London.",
            id="theirs",
        ),
    ],
)
async def test_openai_agent_runs_parallel_calls_over_several_turns(
    name: str,
    answer_name: str,
    tools: list[Any],
    results: list[tuple[str, str]],
    answer: str,
) -> None:
    recorded = cassette(name)
    final = cassette(answer_name)[1]
    by_results = {0: recorded[0], 2: recorded[1], 3: recorded[2]}

    def respond(received: Received) -> Reply:
        return Reply.sse(by_results.get(tool_messages(received), final).body)

    task = recorded[0].request["messages"][0]["content"]
    with LLMServer(responder=respond) as server:
        transport = OpenAITransport("gpt-4o", base_url=server.url + "/v1", api_key="k")
        async with transport:
            events, history = await run(Agent("", transport, tools), task)
    assert [(e.name, e.content) for e in events if isinstance(e, ToolResult)] == results
    assert len(server.requests) == 4
    for sent, expected in zip(server.requests[1:3], recorded[1:3], strict=True):
        assert without_null_content(sent.body["messages"]) == expected.request["messages"]
    assert history[-1].text == answer


async def _version() -> str:
    return "0.32a0"


fixed_version = tool(name="fixed_version", description="Return a fixed test version string")(
    _version
)


async def _app_version() -> str:
    return "2.4.1"


app_version = tool(name="app_version", description="Return the deployed app version.")(_app_version)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "version_tool", "budget", "answer"),
    [
        pytest.param(
            "anthropic-messages__thinking-signature-then-tool_use__tool_result-turn.yaml",
            app_version,
            2048,
            "The deployed build is **2.4.1**.",
            id="ours",
        ),
        conformance(
            "anthropic-stream__thinking-signature-then-tool_use__tool_result-turn__haiku-4.5"
            ".vcr.yaml",
            fixed_version,
            1024,
            "The version is **0.32a0**.",
            id="theirs",
        ),
    ],
)
async def test_anthropic_agent_sends_signed_thinking_back_with_the_tool_result(
    name: str, version_tool: Any, budget: int, answer: str
) -> None:
    first, second = cassette(name)

    def respond(received: Received) -> Reply:
        return Reply.sse(second.body if has_tool_result(received) else first.body)

    task = first.request["messages"][0]["content"][0]["text"]
    version = second.request["messages"][2]["content"][0]["content"]
    with LLMServer(responder=respond) as server:
        transport = AnthropicTransport(
            "claude-haiku-4-5-20251001",
            base_url=server.url,
            api_key="k",
            max_tokens=64000,
            thinking_budget=budget,
        )
        async with transport:
            events, history = await run(Agent("", transport, [version_tool]), task)
    assert [e.content for e in events if isinstance(e, ToolResult)] == [version]
    assert server.requests[1].body["messages"] == second.request["messages"]
    assert server.requests[1].body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert history[-1].text.startswith(answer)
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
@pytest.mark.parametrize(
    ("calls_name", "answer_name", "interaction", "city"),
    [
        pytest.param(
            "llamacpp-openai__parallel-tool-calls-split-args__usage.sse.txt",
            "llamacpp-openai__text-after-tool-result.sse.txt",
            None,
            "Lisbon",
            id="ours",
        ),
        conformance(
            "llamacpp-openai-compat-stream__smollm2-135m__parallel-tool-calls-split-args.sse.txt",
            OPENAI_CAPITAL_THEIRS,
            1,
            "Tokyo",
            id="theirs",
        ),
    ],
)
async def test_small_local_model_is_forced_and_primed_on_its_first_turn_only(
    calls_name: str, answer_name: str, interaction: int | None, city: str
) -> None:
    calls = sse_body(calls_name).replace(b'"get_weather"', b'"weather"')
    answer = sse_body(answer_name) if interaction is None else cassette(answer_name)[1].body

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
            events, history = await run(Agent("", transport, [get_time, weather]), f"{city}?")
    first, second = (r.body for r in server.requests)
    assert first["tool_choice"] == "required"
    assert first["messages"][-1] == {"role": "assistant", "content": "<tool_call>\n"}
    assert second["tool_choice"] == "auto"
    assert second["messages"][-1]["role"] == "tool"
    assert "authorization" not in server.requests[0].headers
    assert [e.content for e in events if isinstance(e, ToolResult)] == [
        f"12:00 in {city}",
        f"rain in {city}",
    ]
    assert history[1].text == ""  # the prefill is not part of the answer


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("calls_name", "answer_name", "city", "ids", "answer"),
    [
        pytest.param(
            "llamacpp-anthropic__tool_use-blocks.sse.txt",
            "llamacpp-anthropic__text-after-tool-result.sse.txt",
            "Lisbon",
            ["GKBaRTUal3WyWTvWTl34nrTiIp1p7QII", "ZGLPPq5AxJTT6FOvBVIbMeEJp6UPiFjF"],
            "<tool_response>\nIt is 12:00 in Lisbon.",
            id="ours",
        ),
        conformance(
            "llamacpp-anthropic-compat-stream__smollm2-135m__3-tool_use-blocks-stops-at-end"
            ".sse.txt",
            "anthropic-stream__text-then-2-parallel-tool_use-empty-input__ratelimit-headers"
            "__haiku-3.5.vcr.yaml",
            "Takayama",
            [
                "EA9MLgpQ09GgkWmQaYENvGgeR070Fkei",
                "q6bsKWUARUJGRS6FHfSU3jOQgDGWL5Xs",
                "EzWABXusvrSBFbw39G7qBeu6mUgLO50c",
            ],
            "Here are two fun names for your pet pelican",
            id="theirs",
        ),
    ],
)
async def test_anthropic_agent_runs_parallel_calls_from_a_llamacpp_stream(
    calls_name: str, answer_name: str, city: str, ids: list[str], answer: str
) -> None:
    calls = sse_body(calls_name).replace(b'"get_weather"', b'"weather"')
    if answer_name.endswith(".vcr.yaml"):
        answer_body = cassette(answer_name)[1].body
    else:
        answer_body = sse_body(answer_name)
    seen_ids: list[str] = []

    @tool
    async def traced_time(city: str) -> str:
        """Return the local time in a city."""
        call = current_call()
        seen_ids.append(call.call_id if call else "")
        return "noon"

    def respond(received: Received) -> Reply:
        return Reply.sse(answer_body if has_tool_result(received) else calls)

    with LLMServer(responder=respond) as server:
        transport = AnthropicTransport(
            "smollm2", base_url=server.url, api_key="", tool_choice="required"
        )
        agent = Agent("sys", transport, [traced_time.copy(name="get_time"), weather])
        async with transport:
            _, history = await run(agent, f"{city}?")
    assert seen_ids == ids[:1]
    results = server.requests[1].body["messages"][-1]["content"]
    assert [r["tool_use_id"] for r in results] == ids
    assert [r["content"] for r in results] == ["noon"] + [f"rain in {city}"] * (len(ids) - 1)
    assert server.requests[0].body["tool_choice"] == {"type": "any"}
    assert history[-1].text.startswith(answer)


@pytest.mark.anyio
async def test_interrupting_a_run_mid_stream_ends_it_cancelled_and_frees_the_transport() -> None:
    body = cassette(OPENAI_CAPITAL)[1].body
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
    assert answer == "The capital of France is Paris."
