"""Failures a real provider produces, served by a server on 127.0.0.1: rate limits,
overload, server errors, dropped and stalled streams, malformed data."""

import json
from typing import Any

import pytest

from swarm import Message, ProviderError, StopReason, TextDelta, TransportError
from swarm.transports import AnthropicTransport, OpenAITransport, RetryPolicy, Timeouts

from .recordings import Turn, assemble, cassette, sse_body
from .server import LLMServer, Reply, sse_chunks

TEXT = "openai-chat__capital-tool-then-answer.yaml"
ANTHROPIC = "anthropic-messages__text-then-tool_use-input_json_delta.sse.txt"
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def openai_text() -> Reply:
    return Reply.sse(cassette(TEXT)[1].body)


def openai(server: LLMServer, retry: RetryPolicy, **options: Any) -> OpenAITransport:
    return OpenAITransport(
        "gpt-4o-mini", base_url=server.url + "/v1", api_key="k", retry=retry, **options
    )


def anthropic(server: LLMServer, retry: RetryPolicy, **options: Any) -> AnthropicTransport:
    return AnthropicTransport(
        "claude-sonnet-4", base_url=server.url, api_key="k", retry=retry, **options
    )


async def turn_of(transport: OpenAITransport | AnthropicTransport) -> Turn:
    async with transport:
        return assemble([e async for e in transport.stream([Message.user("hi")], [], "")])


@pytest.mark.anyio
async def test_429_waits_as_long_as_retry_after_says_then_succeeds(
    no_wait: RetryPolicy, sleeps: list[float]
) -> None:
    limited = Reply.json(429, {"error": {"message": "Rate limit reached"}}, {"retry-after": "2"})
    with LLMServer([limited, openai_text()]) as server:
        turn = await turn_of(openai(server, no_wait))
    assert turn.text == "The capital of France is Paris."
    assert sleeps == [2.0]
    assert len(server.requests) == 2


@pytest.mark.anyio
async def test_retry_after_ms_wins_over_retry_after(
    no_wait: RetryPolicy, sleeps: list[float]
) -> None:
    limited = Reply.json(
        429, {"error": {"message": "slow down"}}, {"retry-after": "9", "retry-after-ms": "1500"}
    )
    with LLMServer([limited, openai_text()]) as server:
        await turn_of(openai(server, no_wait))
    assert sleeps == [1.5]


@pytest.mark.anyio
async def test_retry_after_longer_than_the_policy_allows_is_not_waited_for(
    sleeps: list[float],
) -> None:
    async def sleep(delay: float) -> None:
        sleeps.append(delay)

    policy = RetryPolicy(max_retries=3, max_retry_after=30, sleep=sleep)
    limited = Reply.json(429, {"error": {"message": "quota"}}, {"retry-after": "3600"})
    with LLMServer([limited]) as server, pytest.raises(ProviderError) as caught:
        await turn_of(openai(server, policy))
    assert (caught.value.status, caught.value.retryable, caught.value.retry_after) == (
        429,
        True,
        3600.0,
    )
    assert sleeps == []


@pytest.mark.anyio
async def test_500_then_success_backs_off_once(no_wait: RetryPolicy, sleeps: list[float]) -> None:
    failed = Reply.json(500, {"error": {"message": "internal", "type": "server_error"}})
    with LLMServer([failed, openai_text()]) as server:
        turn = await turn_of(openai(server, no_wait))
    assert turn.text == "The capital of France is Paris."
    assert sleeps == [0.5]


@pytest.mark.anyio
async def test_529_overloaded_is_retried_with_growing_backoff_then_raised(
    no_wait: RetryPolicy, sleeps: list[float]
) -> None:
    with LLMServer([Reply.json(529, OVERLOADED)]) as server, pytest.raises(ProviderError) as caught:
        await turn_of(anthropic(server, no_wait))
    assert caught.value.status == 529
    assert caught.value.error_type == "overloaded_error"
    assert caught.value.retryable
    assert "Overloaded" in str(caught.value)
    assert sleeps == [0.5, 1.0, 2.0]
    assert len(server.requests) == 4


@pytest.mark.anyio
async def test_529_then_success_returns_the_answer(no_wait: RetryPolicy) -> None:
    with LLMServer([Reply.json(529, OVERLOADED), Reply.sse(sse_body(ANTHROPIC))]) as server:
        turn = await turn_of(anthropic(server, no_wait))
    assert turn.text == "I'll look up the tide times for St Ives."


@pytest.mark.anyio
async def test_overloaded_error_event_before_any_output_is_retried(
    no_wait: RetryPolicy, sleeps: list[float]
) -> None:
    start = next(iter(sse_chunks(sse_body(ANTHROPIC))))
    error = f"event: error\ndata: {json.dumps(OVERLOADED)}\n\n".encode()
    with LLMServer([Reply((start, error)), Reply.sse(sse_body(ANTHROPIC))]) as server:
        turn = await turn_of(anthropic(server, no_wait))
    assert turn.calls[0][1] == "get_tide"
    assert len(sleeps) == 1


@pytest.mark.anyio
async def test_overloaded_error_event_after_output_fails_the_call_as_retryable(
    no_wait: RetryPolicy, sleeps: list[float]
) -> None:
    chunks = list(sse_chunks(sse_body(ANTHROPIC)))[:4]  # start, text block, ping, "I"
    error = f"event: error\ndata: {json.dumps(OVERLOADED)}\n\n".encode()
    seen: list[Any] = []
    with LLMServer([Reply((*chunks, error))]) as server:
        async with anthropic(server, no_wait) as transport:
            with pytest.raises(ProviderError) as caught:
                async for event in transport.stream([Message.user("hi")], [], ""):
                    seen.append(event)
    assert [e.delta for e in seen] == ["I"]
    assert (caught.value.status, caught.value.retryable) == (529, True)
    assert sleeps == []


@pytest.mark.anyio
async def test_connection_dropped_mid_stream_fails_cleanly_without_replaying_output(
    no_wait: RetryPolicy, sleeps: list[float]
) -> None:
    chunks = tuple(sse_chunks(cassette(TEXT)[1].body))[:4]
    seen: list[Any] = []
    with LLMServer([Reply(chunks, end="drop"), openai_text()]) as server:
        async with openai(server, no_wait) as transport:
            with pytest.raises(TransportError, match="stream broke") as caught:
                async for event in transport.stream([Message.user("hi")], [], ""):
                    seen.append(event)
    assert "".join(e.delta for e in seen) == "The capital of"
    assert caught.value.retryable
    assert sleeps == [] and len(server.requests) == 1


@pytest.mark.anyio
async def test_connection_dropped_before_any_output_is_retried(
    no_wait: RetryPolicy, sleeps: list[float]
) -> None:
    first = tuple(sse_chunks(cassette(TEXT)[1].body))[:1]  # only the role chunk
    with LLMServer([Reply(first, end="drop"), openai_text()]) as server:
        turn = await turn_of(openai(server, no_wait))
    assert turn.text == "The capital of France is Paris."
    assert len(sleeps) == 1


@pytest.mark.anyio
async def test_stream_that_ends_early_without_error_is_a_retryable_failure(
    no_wait: RetryPolicy,
) -> None:
    chunks = tuple(sse_chunks(cassette(TEXT)[1].body))[:4]
    with LLMServer([Reply(chunks)]) as server, pytest.raises(TransportError) as caught:
        await turn_of(openai(server, no_wait))
    assert "ended before the response was complete" in str(caught.value)
    assert caught.value.retryable


@pytest.mark.anyio
async def test_server_that_stalls_mid_stream_hits_the_idle_timeout(no_wait: RetryPolicy) -> None:
    chunks = tuple(sse_chunks(cassette(TEXT)[1].body))[:4]
    seen: list[Any] = []
    with LLMServer([Reply(chunks, end="stall")]) as server:
        async with openai(server, no_wait, timeout=Timeouts(first_byte=5, idle=0.2)) as transport:
            with pytest.raises(TransportError, match="stalled") as caught:
                async for event in transport.stream([Message.user("hi")], [], ""):
                    seen.append(event)
    assert len(seen) == 3
    assert caught.value.retryable


@pytest.mark.anyio
async def test_server_that_never_answers_hits_the_first_byte_timeout(
    sleeps: list[float],
) -> None:
    async def sleep(delay: float) -> None:
        sleeps.append(delay)

    policy = RetryPolicy(max_retries=1, jitter=0, sleep=sleep)
    with LLMServer([Reply(hold=True)]) as server:
        transport = anthropic(server, policy, timeout=Timeouts(first_byte=0.2, idle=5))
        with pytest.raises(TransportError, match=r"no response within 0\.2s") as caught:
            await turn_of(transport)
    assert caught.value.retryable
    assert sleeps == [0.5]


@pytest.mark.anyio
async def test_unreachable_server_is_a_retryable_transport_error(
    no_wait: RetryPolicy, sleeps: list[float]
) -> None:
    with LLMServer([openai_text()]) as server:
        url = server.url
    transport = OpenAITransport("m", base_url=url, api_key="k", retry=no_wait)
    with pytest.raises(TransportError, match="could not reach") as caught:
        await turn_of(transport)
    assert caught.value.retryable and len(sleeps) == 3


@pytest.mark.anyio
async def test_malformed_sse_lines_are_skipped(no_wait: RetryPolicy) -> None:
    body = cassette(TEXT)[1].body.replace(
        b"\n\ndata:", b"\n\nthis is not a field\nretry: soon\n:comment\n\ndata:", 3
    )
    with LLMServer([Reply.sse(body)]) as server:
        turn = await turn_of(openai(server, no_wait))
    assert turn.text == "The capital of France is Paris."


@pytest.mark.anyio
async def test_malformed_json_in_a_chunk_is_a_clear_transport_error(
    no_wait: RetryPolicy, sleeps: list[float]
) -> None:
    chunks = list(sse_chunks(cassette(TEXT)[1].body))
    chunks.insert(3, b'data: {"choices": [{"delta": {"content": "broken\n\n')
    with LLMServer([Reply(tuple(chunks))]) as server, pytest.raises(TransportError) as caught:
        await turn_of(openai(server, no_wait))
    assert "malformed JSON in the stream" in str(caught.value)
    assert '{"choices"' in str(caught.value)
    assert not caught.value.retryable and sleeps == []


@pytest.mark.anyio
async def test_unknown_event_types_are_ignored(no_wait: RetryPolicy) -> None:
    unknown = b'event: brand_new_thing\ndata: {"type":"brand_new_thing","x":[1,2]}\n\n'
    delta = (
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"citations_delta","citation":{}}}\n\n'
    )
    chunks = list(sse_chunks(sse_body(ANTHROPIC)))
    chunks[3:3] = [unknown, delta]
    with LLMServer([Reply(tuple(chunks))]) as server:
        turn = await turn_of(anthropic(server, no_wait))
    assert turn.text == "I'll look up the tide times for St Ives."
    assert turn.end is not None and turn.end.stop_reason == StopReason.tool_use


@pytest.mark.anyio
async def test_401_carries_the_provider_message_and_is_not_retried(
    no_wait: RetryPolicy, sleeps: list[float]
) -> None:
    denied = Reply.json(
        401,
        {
            "type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"},
        },
    )
    with LLMServer([denied]) as server, pytest.raises(ProviderError) as caught:
        await turn_of(anthropic(server, no_wait))
    assert (
        str(caught.value) == "anthropic returned HTTP 401 authentication_error: invalid x-api-key"
    )
    assert (caught.value.status, caught.value.retryable) == (401, False)
    assert sleeps == []


@pytest.mark.anyio
async def test_one_transport_serves_many_concurrent_streams(no_wait: RetryPolicy) -> None:
    import anyio

    texts: list[str] = []
    with LLMServer([openai_text()]) as server:
        async with openai(server, no_wait) as transport:

            async def one() -> None:
                events = [e async for e in transport.stream([Message.user("hi")], [], "")]
                texts.append("".join(e.delta for e in events if isinstance(e, TextDelta)))

            async with anyio.create_task_group() as group:
                for _ in range(20):
                    group.start_soon(one)
    assert texts == ["The capital of France is Paris."] * 20


@pytest.mark.anyio
async def test_a_server_that_ignores_streaming_is_a_clear_error(no_wait: RetryPolicy) -> None:
    whole = Reply.json(200, {"id": "x", "choices": [{"message": {"content": "hi"}}]})
    with LLMServer([whole]) as server, pytest.raises(TransportError) as caught:
        await turn_of(openai(server, no_wait))
    assert "expected an event stream" in str(caught.value)
    assert not caught.value.retryable
