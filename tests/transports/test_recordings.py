"""Every stream, served byte for byte by a server on 127.0.0.1, through the transports: the
events must assemble into what the stream says. Our own streams always run; the
third-party recordings run as the ``conformance`` layer (see ``recordings.py``)."""

import json
from typing import Any

import pytest

from swarm import (
    Message,
    ProviderError,
    ReasoningDelta,
    StopReason,
    TextDelta,
    ToolUseStart,
    TransportError,
    Usage,
)
from swarm.transports import AnthropicTransport, HTTPTransport, OpenAITransport, RetryPolicy

from .recordings import Turn, assemble, cassette, conformance, sse_body
from .server import LLMServer, Reply


def transport_for(provider: str, server: LLMServer, retry: RetryPolicy) -> HTTPTransport:
    if provider == "anthropic":
        return AnthropicTransport("claude", base_url=server.url, api_key="test", retry=retry)
    return OpenAITransport("gpt", base_url=server.url + "/v1", api_key="test", retry=retry)


async def run_turn(provider: str, reply: Reply, retry: RetryPolicy) -> tuple[Turn, LLMServer]:
    with LLMServer([reply]) as server:
        async with transport_for(provider, server, retry) as transport:
            events = [e async for e in transport.stream([Message.user("hi")], [], "")]
    return assemble(events), server


def body_of(name: str, interaction: int | None) -> Reply:
    if interaction is None:
        return Reply.sse(sse_body(name))
    recorded = cassette(name)[interaction]
    return Reply.sse(recorded.body, gzip=recorded.gzipped)


def case_id(name: str, interaction: int | None) -> str:
    return f"{name.split('.')[0]}-{interaction}"


def anthropic_text(body: bytes) -> str:
    """What the recording's text deltas say, read independently of the transport."""
    text = []
    for line in body.decode().splitlines():
        if line.startswith("data:"):
            data = json.loads(line[5:])
            if data.get("delta", {}).get("type") == "text_delta":
                text.append(data["delta"]["text"])
    return "".join(text)


Case = tuple[str, int | None, str, str, list[tuple[str, Any]], Usage, StopReason]

THEIRS: list[Case] = [
    (
        "openai-chat-stream__parallel-tool-calls-split-args__usage__gpt-4o.sse.txt",
        None,
        "openai",
        "",
        [
            ("GetWeatherArgs", {"city": "Edinburgh", "country": "GB", "units": "c"}),
            ("get_stock_price", {"ticker": "AAPL", "exchange": "NASDAQ"}),
        ],
        Usage(149, 60),
        StopReason.tool_use,
    ),
    (
        "openai-chat-stream__finish_reason-length__gpt-4o.sse.txt",
        None,
        "openai",
        '{"',
        [],
        Usage(79, 1),
        StopReason.max_tokens,
    ),
    (
        "openai-chat-stream__refusal-deltas__gpt-4o.sse.txt",
        None,
        "openai",
        "I'm sorry, I can't assist with that request.",
        [],
        Usage(79, 11),
        StopReason.end_turn,
    ),
    (
        "openai-chat-stream__n3-interleaved-choices__gpt-4o.sse.txt",
        None,
        "openai",
        '{"city":"San Francisco","temperature":65,"units":"f"}',
        [],
        Usage(79, 42),
        StopReason.end_turn,
    ),
    (
        "llamacpp-openai-compat-stream__smollm2-135m__parallel-tool-calls-split-args.sse.txt",
        None,
        "openai",
        "",
        [("get_time", {"city": "Tokyo"}), ("get_weather", {"city": "Tokyo"})],
        Usage(283, 69, cache_read_tokens=264),
        StopReason.tool_use,
    ),
    (
        "openai-chat-stream__tool-call-split-args__usage-chunk__gpt-4o-mini.vcr.yaml",
        0,
        "openai",
        "",
        [("get_capital", {"country": "UK"})],
        Usage(53, 15),
        StopReason.tool_use,
    ),
    (
        "openai-chat-stream__tool-call-split-args__usage-chunk__gpt-4o-mini.vcr.yaml",
        1,
        "openai",
        "The capital of the UK is London.",
        [],
        Usage(78, 9),
        StopReason.end_turn,
    ),
    (
        "openai-chat-stream__parallel-tool-calls__multi-turn__gpt-4o.vcr.yaml",
        0,
        "openai",
        "",
        [("get_country", {}), ("get_product_name", {})],
        Usage(364, 40),
        StopReason.tool_use,
    ),
    (
        "openai-compat-groq-stream__midstream-event-error__tool_use_failed.vcr.yaml",
        1,
        "openai",
        "",
        [("get_something_by_name", {"name": "example"})],
        Usage(304, 49),
        StopReason.tool_use,
    ),
    (
        "openai-compat-groq-stream__midstream-event-error__tool_use_failed.vcr.yaml",
        2,
        "openai",
        "The tool returned the expected result for the valid call.",
        [],
        Usage(339, 58),
        StopReason.end_turn,
    ),
    (
        "openai-compat-kimi-k2-stream__toolcall-no-arguments-key-then-args-without-id.vcr.yaml",
        0,
        "openai",
        "",
        [("llm_version", {})],
        Usage(56, 12),
        StopReason.tool_use,
    ),
    (
        "openai-compat-kimi-k2-stream__toolcall-sent-twice-args-empty-then-full__no-finish-reason.vcr.yaml",
        0,
        "openai",
        "",
        [("llm_version", {})],
        Usage(57, 17),
        StopReason.tool_use,
    ),
    (
        "openai-compat-kimi-k2-stream__toolcall-sent-twice-args-empty-then-full__no-finish-reason.vcr.yaml",
        1,
        "openai",
        "The current version of *llm* is **0.fixed-version**.",
        [],
        Usage(107, 15),
        StopReason.end_turn,
    ),
    (
        "anthropic-stream__text_delta-then-tool_use-input_json_delta__sonnet-4.sse.txt",
        None,
        "anthropic",
        "I'll check the current weather in Paris for you.",
        [("get_weather", {"location": "Paris"})],
        Usage(377, 65),
        StopReason.tool_use,
    ),
    (
        "llamacpp-anthropic-compat-stream__smollm2-135m__3-tool_use-blocks-stops-at-end.sse.txt",
        None,
        "anthropic",
        "",
        [
            ("get_time", {"city": "Takayama"}),
            ("get_weather", {"city": "Takayama"}),
            ("get_weather", {"city": "Takayama"}),
        ],
        Usage(264, 110, cache_read_tokens=6),
        StopReason.tool_use,
    ),
    (
        "anthropic-stream__2-parallel-tool_use-caller-field__gzip-body__haiku-4.5.vcr.yaml",
        0,
        "anthropic",
        "",
        [("pelican_name_generator", {}), ("pelican_name_generator", {})],
        Usage(542, 62),
        StopReason.tool_use,
    ),
    (
        "anthropic-stream__2-parallel-tool_use-caller-field__gzip-body__haiku-4.5.vcr.yaml",
        1,
        "anthropic",
        "*",
        [],
        Usage(678, 82),
        StopReason.end_turn,
    ),
    (
        "anthropic-stream__text-then-2-parallel-tool_use-empty-input__ratelimit-headers__haiku-3.5.vcr.yaml",
        0,
        "anthropic",
        "I'll help you generate two names for a pet pelican using the pelican name generator tool.",
        [("pelican_name_generator", {}), ("pelican_name_generator", {})],
        Usage(310, 82),
        StopReason.tool_use,
    ),
    (
        "anthropic-stream__text-then-2-parallel-tool_use-empty-input__ratelimit-headers__haiku-3.5.vcr.yaml",
        1,
        "anthropic",
        "*",
        [],
        Usage(465, 95),
        StopReason.end_turn,
    ),
    (
        "anthropic-stream__thinking_delta__signature_delta__text_delta.vcr.yaml",
        0,
        "anthropic",
        "*",
        [],
        Usage(43, 282),
        StopReason.end_turn,
    ),
    (
        "anthropic-stream__tool_use-input_json_delta__padded-json__server-tool.vcr.yaml",
        0,
        "anthropic",
        "*",
        [("get_exchange_rate", {"from_currency": "USD", "to_currency": "EUR"})],
        Usage(1591, 175),
        StopReason.tool_use,
    ),
    (
        "anthropic-stream__tool_use-input_json_delta__padded-json__server-tool.vcr.yaml",
        1,
        "anthropic",
        "*",
        [],
        Usage(1007, 59),
        StopReason.end_turn,
    ),
]


LISBON = {"city": "Lisbon"}
PELICAN = (
    "The pelican is a majestic creature with a long, slender body and a massive tail. It is a"
    " bird of prey that is native to the Americas, and it is a symbol of freedom and freedom"
)
OURS: list[Case] = [
    # recorded from llama.cpp's server (fixtures/record_local.py)
    (
        "llamacpp-openai__text__usage.sse.txt",
        None,
        "openai",
        PELICAN,
        [],
        Usage(27, 40),
        StopReason.max_tokens,
    ),
    (
        "llamacpp-openai__parallel-tool-calls-split-args__usage.sse.txt",
        None,
        "openai",
        "",
        [("get_time", LISBON), ("get_weather", LISBON)],
        Usage(265, 71, cache_read_tokens=9),
        StopReason.tool_use,
    ),
    (
        "llamacpp-openai__text-after-tool-result.sse.txt",
        None,
        "openai",
        "<tool_response>\nIt is 12:00 in Lisbon.",
        [],
        Usage(325, 18, cache_read_tokens=239),
        StopReason.end_turn,
    ),
    (
        "llamacpp-anthropic__text.sse.txt",
        None,
        "anthropic",
        PELICAN,
        [],
        Usage(27, 40, cache_read_tokens=26),
        StopReason.max_tokens,
    ),
    (
        "llamacpp-anthropic__tool_use-blocks.sse.txt",
        None,
        "anthropic",
        "",
        [("get_time", LISBON), ("get_weather", LISBON)],
        Usage(265, 71, cache_read_tokens=264),
        StopReason.tool_use,
    ),
    (
        "llamacpp-anthropic__text-after-tool-result.sse.txt",
        None,
        "anthropic",
        "<tool_response>\nIt is 12:00 in Lisbon.",
        [],
        Usage(325, 18, cache_read_tokens=276),
        StopReason.end_turn,
    ),
    # hand-written from the providers' documented formats
    (
        "openai-chat__parallel-tool-calls-split-args__usage.sse.txt",
        None,
        "openai",
        "",
        [
            ("get_tide", {"harbour": "St Ives", "day": "saturday"}),
            ("get_ferry_times", {"from": "Penzance", "to": "Scilly"}),
        ],
        Usage(132, 47),
        StopReason.tool_use,
    ),
    (
        "openai-chat__finish_reason-length.sse.txt",
        None,
        "openai",
        "Once",
        [],
        Usage(24, 1),
        StopReason.max_tokens,
    ),
    (
        "openai-chat__refusal-deltas.sse.txt",
        None,
        "openai",
        "I can't help with picking that lock.",
        [],
        Usage(37, 9),
        StopReason.end_turn,
    ),
    (
        "openai-chat__n3-interleaved-choices.sse.txt",
        None,
        "openai",
        "Red sky at night.",
        [],
        Usage(29, 15),
        StopReason.end_turn,
    ),
    (
        "openai-chat__capital-tool-then-answer.yaml",
        0,
        "openai",
        "",
        [("get_capital", {"country": "France"})],
        Usage(61, 14),
        StopReason.tool_use,
    ),
    (
        "openai-chat__capital-tool-then-answer.yaml",
        1,
        "openai",
        "The capital of France is Paris.",
        [],
        Usage(86, 8),
        StopReason.end_turn,
    ),
    (
        "openai-chat__parallel-tool-calls__multi-turn.yaml",
        0,
        "openai",
        "",
        [("get_region", {}), ("get_mascot", {})],
        Usage(318, 44),
        StopReason.tool_use,
    ),
    (
        "openai-chat__parallel-tool-calls__multi-turn.yaml",
        2,
        "openai",
        "",
        [
            (
                "final_result",
                {
                    "answers": [
                        {"topic": "region", "answer": "Kansai"},
                        {"topic": "forecast", "answer": "light rain"},
                    ]
                },
            )
        ],
        Usage(395, 38),
        StopReason.tool_use,
    ),
    (
        "openai-compat__reasoning-then-tool-call__usage-in-finish-chunk.sse.txt",
        None,
        "openai",
        "",
        [("lookup_order", {"order_id": 7})],
        Usage(211, 31),
        StopReason.tool_use,
    ),
    (
        "openai-compat__toolcall-no-arguments-key-then-args-without-id.sse.txt",
        None,
        "openai",
        "",
        [("app_version", {})],
        Usage(47, 9),
        StopReason.tool_use,
    ),
    (
        "openai-compat__toolcall-sent-twice__no-finish-reason.yaml",
        0,
        "openai",
        "",
        [("app_version", {})],
        Usage(48, 13),
        StopReason.tool_use,
    ),
    (
        "openai-compat__toolcall-sent-twice__no-finish-reason.yaml",
        1,
        "openai",
        "The app is at version **2.4.1**.",
        [],
        Usage(92, 11),
        StopReason.end_turn,
    ),
    (
        "openai-compat__arguments-null__finish-and-usage-in-one-chunk.sse.txt",
        None,
        "openai",
        "",
        [("app_version", {})],
        Usage(40, 7),
        StopReason.tool_use,
    ),
    (
        "anthropic-messages__text-then-tool_use-input_json_delta.sse.txt",
        None,
        "anthropic",
        "I'll look up the tide times for St Ives.",
        [("get_tide", {"harbour": "St Ives"})],
        Usage(402, 71),
        StopReason.tool_use,
    ),
    (
        "anthropic-messages__2-parallel-tool_use-caller-field__gzip.yaml",
        0,
        "anthropic",
        "",
        [("roll_die", {}), ("roll_die", {})],
        Usage(530, 58),
        StopReason.tool_use,
    ),
    (
        "anthropic-messages__2-parallel-tool_use-caller-field__gzip.yaml",
        1,
        "anthropic",
        "Two rolls: 2 and 5. Seven in all — lucky number for some!",
        [],
        Usage(664, 21),
        StopReason.end_turn,
    ),
    (
        "anthropic-messages__text-then-2-parallel-tool_use-empty-input.yaml",
        0,
        "anthropic",
        "I'll roll the die twice for you.",
        [("roll_die", {}), ("roll_die", {})],
        Usage(297, 77),
        StopReason.tool_use,
    ),
    (
        "anthropic-messages__text-then-2-parallel-tool_use-empty-input.yaml",
        1,
        "anthropic",
        "You rolled a 4 and a 6, ten in total — a good throw.",
        [],
        Usage(431, 19),
        StopReason.end_turn,
    ),
    (
        "anthropic-messages__thinking-signature-then-text.sse.txt",
        None,
        "anthropic",
        "Yes — take an umbrella: rain is expected in the afternoon, and a compact one fits in a"
        " day bag.",
        [],
        Usage(51, 148),
        StopReason.end_turn,
    ),
    (
        "anthropic-messages__thinking-signature-then-tool_use__tool_result-turn.yaml",
        0,
        "anthropic",
        "",
        [("app_version", {})],
        Usage(612, 74),
        StopReason.tool_use,
    ),
    (
        "anthropic-messages__server-tool-blocks-then-client-tool_use.sse.txt",
        None,
        "anthropic",
        "Let me find the right tool first.Now I will ask for the next sailing.",
        [("next_sailing", {"from_port": "Penzance", "to_port": "St Mary's"})],
        Usage(1204, 133),
        StopReason.tool_use,
    ),
]
CASES = [pytest.param(*c, id=case_id(c[0], c[1])) for c in OURS] + [
    conformance(*c, id=case_id(c[0], c[1])) for c in THEIRS
]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "interaction", "provider", "text", "calls", "usage", "stop"),
    CASES,
)
async def test_recorded_stream_assembles_into_the_recorded_turn(
    name: str,
    interaction: int | None,
    provider: str,
    text: str,
    calls: list[tuple[str, Any]],
    usage: Usage,
    stop: StopReason,
    no_wait: RetryPolicy,
) -> None:
    reply = body_of(name, interaction)
    turn, _ = await run_turn(provider, reply, no_wait)
    if text == "*":  # long answers: what the recording's own text deltas say
        text = anthropic_text(b"".join(reply.chunks))
        assert len(text) > 40
    assert turn.text == text
    assert turn.arguments == calls
    assert turn.end is not None
    assert (turn.end.usage, turn.end.stop_reason) == (usage, stop)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "ids"),
    [
        (
            "openai-chat__parallel-tool-calls-split-args__usage.sse.txt",
            ["call_swarmTide00000001", "call_swarmFerry0000002"],
        ),
        conformance(
            "openai-chat-stream__parallel-tool-calls-split-args__usage__gpt-4o.sse.txt",
            ["call_JMW1whyEaYG438VE1OIflxA2", "call_DNYTawLBoN8fj3KN6qU9N1Ou"],
        ),
    ],
)
async def test_parallel_calls_keep_the_ids_the_server_gave(
    name: str, ids: list[str], no_wait: RetryPolicy
) -> None:
    turn, _ = await run_turn("openai", Reply.sse(sse_body(name)), no_wait)
    assert [c[0] for c in turn.calls] == ids


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("openai-compat__toolcall-sent-twice__no-finish-reason.yaml", ("0", "app_version", "{}")),
        conformance(
            "openai-compat-kimi-k2-stream__toolcall-sent-twice-args-empty-then-full"
            "__no-finish-reason.vcr.yaml",
            ("0", "llm_version", "{}"),
        ),
    ],
)
async def test_a_call_sent_twice_is_one_call_with_its_arguments_appended(
    name: str, call: tuple[str, str, str], no_wait: RetryPolicy
) -> None:
    turn, _ = await run_turn("openai", body_of(name, 0), no_wait)
    assert turn.calls == [call]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "call"),
    [
        (
            "llamacpp-openai__tool-call-cut-by-max_tokens.sse.txt",
            ("pOf24eu9t2hf1TsY9VIQwN4gI3c9pYBc", "get_time", "{"),
        ),
        conformance(
            "llamacpp-openai-compat-stream__smollm2-135m__tool-call-cut-by-max_tokens"
            "-finish-length.sse.txt",
            ("w9YJv1BcvpMs8w3MRCpfbU6IkLwonBBn", "get_time", "{"),
        ),
    ],
)
async def test_tool_call_cut_by_the_token_limit_keeps_its_partial_arguments(
    name: str, call: tuple[str, str, str], no_wait: RetryPolicy
) -> None:
    turn, _ = await run_turn("openai", Reply.sse(sse_body(name)), no_wait)
    assert turn.calls == [call]
    assert turn.end is not None and turn.end.stop_reason == StopReason.max_tokens


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "tool_name", "start", "end", "usage"),
    [
        (
            "anthropic-messages__max_tokens-cuts-tool_use-partial-json.sse.txt",
            "write_list",
            '{"title": "Packing", "items": [',
            '"Map of the coa',
            Usage(388, 96),
        ),
        conformance(
            "anthropic-stream__max_tokens-truncated-tool_use-partial-json__sonnet-3.7.sse.txt",
            "make_file",
            '{"filename": "taxes.txt", "lines_of_text": [',
            '"Filing taxes',
            Usage(450, 124),
        ),
    ],
)
async def test_anthropic_tool_input_cut_by_max_tokens_is_reported_as_is(
    name: str, tool_name: str, start: str, end: str, usage: Usage, no_wait: RetryPolicy
) -> None:
    turn, _ = await run_turn("anthropic", Reply.sse(sse_body(name)), no_wait)
    ((_, called, raw),) = turn.calls
    assert called == tool_name
    assert raw.startswith(start)
    assert raw.endswith(end)
    assert turn.end is not None
    assert (turn.end.stop_reason, turn.end.usage) == (StopReason.max_tokens, usage)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "interaction", "reasoning", "signature"),
    [
        (
            "anthropic-messages__thinking-signature-then-text.sse.txt",
            None,
            "The question is whether to bring an umbrella.",
            "ErUBCkYIBxgCIkB0c3dh",
        ),
        conformance(
            "anthropic-stream__thinking_delta__signature_delta__text_delta.vcr.yaml",
            0,
            "This is a straightforward question about pedestrian safety.",
            "EvMCCkYICxgCKkCHP2cS",
        ),
    ],
)
async def test_thinking_and_its_signature_stream_as_reasoning(
    name: str, interaction: int | None, reasoning: str, signature: str, no_wait: RetryPolicy
) -> None:
    reply = body_of(name, interaction)
    with LLMServer([reply]) as server:
        async with transport_for("anthropic", server, no_wait) as transport:
            events = [e async for e in transport.stream([Message.user("hi")], [], "")]
    reasoning_events = [e for e in events if isinstance(e, ReasoningDelta)]
    assert {e.index for e in reasoning_events} == {0}
    assert {e.index for e in events if isinstance(e, TextDelta)} == {1}
    turn = assemble(events)
    assert turn.reasoning.startswith(reasoning)
    assert turn.signature.startswith(signature)
    assert len(turn.signature) > 100


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "interaction", "start"),
    [
        (
            "anthropic-messages__server-tool-blocks-then-client-tool_use.sse.txt",
            None,
            "next_sailing",
        ),
        conformance(
            "anthropic-stream__tool_use-input_json_delta__padded-json__server-tool.vcr.yaml",
            0,
            "get_exchange_rate",
        ),
    ],
)
async def test_server_side_tool_blocks_are_not_offered_to_the_agent(
    name: str, interaction: int | None, start: str, no_wait: RetryPolicy
) -> None:
    with LLMServer([body_of(name, interaction)]) as server:
        async with transport_for("anthropic", server, no_wait) as transport:
            events = [e async for e in transport.stream([Message.user("hi")], [], "")]
    starts = [e for e in events if isinstance(e, ToolUseStart)]
    assert [(s.index, s.name) for s in starts] == [(4, start)]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "interaction", "message"),
    [
        (
            "openai-compat__reasoning-then-event-error.sse.txt",
            None,
            "did not match schema: missing properties: 'order_id'",
        ),
        conformance(
            "openai-compat-groq-stream__midstream-event-error__tool_use_failed.vcr.yaml",
            0,
            "Tool call validation failed",
        ),
    ],
)
async def test_error_event_midstream_is_a_transport_error(
    name: str, interaction: int | None, message: str, no_wait: RetryPolicy, sleeps: list[float]
) -> None:
    with pytest.raises(ProviderError) as caught:
        await run_turn("openai", body_of(name, interaction), no_wait)
    assert message in str(caught.value)
    assert (caught.value.status, caught.value.retryable) == (400, False)
    assert sleeps == []


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "interaction", "reasoning"),
    [
        (
            "openai-compat__sse-comments__error-in-chunk.sse.txt",
            None,
            "Short greeting; answer politely",
        ),
        conformance(
            "openai-compat-openrouter-stream__sse-comments__error-in-chunk.vcr.yaml",
            0,
            "We need to respond to a greeting. The user",
        ),
    ],
)
async def test_error_object_inside_a_normal_chunk_fails_after_the_reasoning(
    name: str, interaction: int | None, reasoning: str, no_wait: RetryPolicy
) -> None:
    seen: list[Any] = []
    with LLMServer([body_of(name, interaction)]) as server:
        async with transport_for("openai", server, no_wait) as transport:
            with pytest.raises(ProviderError, match="Token limit reached") as caught:
                async for event in transport.stream([Message.user("hi")], [], ""):
                    seen.append(event)
    assert all(isinstance(e, ReasoningDelta) for e in seen)
    assert "".join(e.delta for e in seen) == reasoning
    assert caught.value.status == 400


@pytest.mark.anyio
@pytest.mark.parametrize(
    "name",
    [
        "llamacpp-openai__midstream-error-no-done.sse.txt",
        conformance(
            "llamacpp-openai-compat-stream__midstream-error-object-no-done__http200.sse.txt"
        ),
    ],
)
async def test_llamacpp_error_object_without_done_is_retried_then_raised(
    name: str, no_wait: RetryPolicy, sleeps: list[float]
) -> None:
    with pytest.raises(ProviderError, match="peg-native format") as caught:
        await run_turn("openai", Reply.sse(sse_body(name)), no_wait)
    assert (caught.value.status, caught.value.retryable) == (500, True)
    assert len(sleeps) == 3  # nothing had reached the caller, so each retry was safe


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "provider", "status", "message"),
    [
        (
            "openai-error__401-invalid_api_key__stream-request.yaml",
            "openai",
            401,
            "Incorrect API key provided: sk-proj-****-9f3a.",
        ),
        (
            "anthropic-error__401-authentication_error.yaml",
            "anthropic",
            401,
            "invalid x-api-key",
        ),
        (
            "anthropic-error__400-invalid_request_error.yaml",
            "anthropic",
            400,
            "messages.0.content: Input should be a valid list",
        ),
        conformance(
            "openai-error__401-invalid_api_key__stream-true-request-gets-json-body.vcr.yaml",
            "openai",
            401,
            "Incorrect API key provided: sk-wrong****-key.",
        ),
        conformance(
            "anthropic-error__401-authentication_error__x-should-retry-false.vcr.yaml",
            "anthropic",
            401,
            "invalid x-api-key",
        ),
        conformance(
            "anthropic-error__400-invalid_request_error__x-should-retry-false.vcr.yaml",
            "anthropic",
            400,
            "messages.0: Input does not match the expected shape.",
        ),
        conformance(
            "anthropic-error__400-invalid_request_error.vcr.yaml",
            "anthropic",
            400,
            "This model does not support effort level 'xhigh'.",
        ),
    ],
)
async def test_recorded_http_error_raises_with_the_provider_message(
    name: str,
    provider: str,
    status: int,
    message: str,
    no_wait: RetryPolicy,
    sleeps: list[float],
) -> None:
    (recorded,) = cassette(name)
    reply = Reply(
        (recorded.body,),
        recorded.status,
        {
            "content-type": "application/json",
            **{k: v for k, v in recorded.headers.items() if k in ("x-should-retry", "request-id")},
        },
    )
    with pytest.raises(ProviderError) as caught:
        await run_turn(provider, reply, no_wait)
    assert caught.value.status == status
    assert message in str(caught.value)
    assert not caught.value.retryable
    assert sleeps == []


@pytest.mark.anyio
async def test_anthropic_stream_cut_after_a_block_is_a_retryable_failure_after_its_text(
    no_wait: RetryPolicy, sleeps: list[float]
) -> None:
    name = "anthropic-messages__stream-cut-after-first-block.sse.txt"
    seen: list[Any] = []
    with LLMServer([Reply.sse(sse_body(name))]) as server:
        async with transport_for("anthropic", server, no_wait) as transport:
            with pytest.raises(TransportError, match="ended before the response") as caught:
                async for event in transport.stream([Message.user("hi")], [], ""):
                    seen.append(event)
    assert "".join(e.delta for e in seen) == "Low tide is at 14:10."
    assert caught.value.retryable
    assert sleeps == []  # text had reached the caller: a retry would repeat it
