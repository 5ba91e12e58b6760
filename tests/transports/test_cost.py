"""What a run costs: recorded streams with prompt-cache usage give a ``cost_usd`` equal to
each part of the usage times its listed price, to the cent, for both dialects."""

from typing import Any

import pytest

from swarm import (
    Agent,
    MemoryContextStore,
    SessionEndEvent,
    StopReason,
    Usage,
    tool,
)
from swarm.models.registry import default_registry
from swarm.transports import AnthropicTransport, OpenAITransport
from swarm.transports.anthropic import AnthropicStreamDecoder
from swarm.transports.sse import SSEParser

from .recordings import cassette, conformance, sse_body
from .server import LLMServer, Reply


@tool
async def get_tide(harbour: str) -> str:
    """Return the time of high water at a harbour."""
    return f"High water at {harbour}: 14:05."


async def run_to_end(transport: Any) -> SessionEndEvent:
    agent = Agent("You read tide tables.", transport, [get_tide])
    async with transport, agent.run_stream("When is high water?", MemoryContextStore()) as stream:
        return await stream.get_session_end()


ANTHROPIC = "anthropic-messages__cache-write-5m-and-1h-then-read"
OPENAI = "openai-chat__cached-tokens__tool-then-answer"


@pytest.mark.anyio
async def test_anthropic_cache_writes_and_reads_are_priced_each_at_its_own_price() -> None:
    replies = [Reply.sse(sse_body(f"{ANTHROPIC}.{n}.sse.txt")) for n in (1, 2)]
    with LLMServer(replies) as server:
        transport = AnthropicTransport("claude-sonnet-4-5", base_url=server.url, api_key="k")
        end = await run_to_end(transport)
    assert end.stop_reason == StopReason.end_turn
    # both turns, parts as the provider reported them; input counts every prompt token
    assert end.total_usage == Usage(
        input_tokens=(1204 + 152_000) + (2310 + 4096 + 152_000),
        output_tokens=812 + 1530,
        cache_read_tokens=152_000,
        cache_write_tokens=152_000 + 4096,
        cache_write_1h_tokens=32_000,
    )
    # Anthropic's list prices for Sonnet 4.5, USD per million tokens
    base, write_5m, write_1h, read, out = 3.00, 3.75, 6.00, 0.30, 15.00
    expected = (
        (1204 + 2310) * base
        + (120_000 + 4096) * write_5m
        + 32_000 * write_1h
        + 152_000 * read
        + (812 + 1530) * out
    ) / 1_000_000
    assert end.cost_usd is not None
    assert round(end.cost_usd, 2) == round(expected, 2) == 0.75
    assert end.cost_usd == pytest.approx(expected, abs=1e-9)
    # all input at the input price (what was reported before) would be a third more
    assert round((313_610 * base + 2342 * out) / 1_000_000, 2) == 0.98


@pytest.mark.anyio
async def test_openai_cached_tokens_are_priced_at_the_cached_input_price() -> None:
    replies = [Reply.sse(sse_body(f"{OPENAI}.{n}.sse.txt")) for n in (1, 2)]
    with LLMServer(replies) as server:
        transport = OpenAITransport("gpt-4.1", base_url=server.url + "/v1", api_key="k")
        end = await run_to_end(transport)
    assert end.stop_reason == StopReason.end_turn
    assert end.total_usage == Usage(151_200 + 153_400, 900 + 1210, cache_read_tokens=151_040)
    base, cached, out = 2.00, 0.50, 8.00  # OpenAI's list prices for GPT-4.1
    expected = (
        (151_200 + 153_400 - 151_040) * base + 151_040 * cached + (900 + 1210) * out
    ) / 1_000_000
    assert end.cost_usd is not None
    assert round(end.cost_usd, 2) == round(expected, 2) == 0.40
    assert end.cost_usd == pytest.approx(expected, abs=1e-9)


@pytest.mark.anyio
async def test_a_model_without_a_price_costs_unknown_not_a_guess() -> None:
    replies = [Reply.sse(sse_body(f"{OPENAI}.{n}.sse.txt")) for n in (1, 2)]
    with LLMServer(replies) as server:
        transport = OpenAITransport("house-model", base_url=server.url + "/v1", api_key="k")
        end = await run_to_end(transport)
    assert end.total_usage.cache_read_tokens == 151_040
    assert end.cost_usd is None


def test_cache_reads_on_a_model_without_a_cached_price_cost_unknown() -> None:
    spec = default_registry.lookup("o3-pro")  # OpenAI lists no cached-input price for it
    assert spec is not None
    assert spec.cost(Usage(1000, 10)) == pytest.approx((1000 * 20 + 10 * 80) / 1e6)
    assert spec.cost(Usage(1000, 10, cache_read_tokens=512)) is None


def test_prices_can_be_set_and_overridden_per_model() -> None:
    registry = default_registry.with_prices(
        {
            "house-model": {"input_price": 1.0, "output_price": 2.0, "cache_read_price": 0.1},
            "gpt-4.1": {"cache_read_price": 0.2},
        }
    )
    assert registry.estimate_cost("house-model", Usage(2_000_000, 1_000_000, 1_000_000)) == (
        pytest.approx(1.0 + 0.1 + 2.0)
    )
    assert registry.estimate_cost("gpt-4.1", Usage(1_000_000, 0, 1_000_000)) == pytest.approx(0.2)
    # the shipped registry is untouched
    assert default_registry.lookup("house-model") is None
    assert default_registry.estimate_cost("gpt-4.1", Usage(1_000_000, 0, 1_000_000)) == (
        pytest.approx(0.5)
    )


@pytest.mark.parametrize(
    ("name", "usage"),
    [
        conformance(
            "anthropic-stream__thinking-signature-then-tool_use__tool_result-turn__haiku-4.5.vcr.yaml",
            Usage(598, 92),
            id="haiku-4.5",
        ),
        conformance(
            "anthropic-stream__tool_use-input_json_delta__padded-json__server-tool.vcr.yaml",
            Usage(1591, 175),
            id="sonnet-4.6-server-tool",
        ),
    ],
)
def test_recorded_anthropic_usage_with_cache_fields_decodes_to_its_parts(
    name: str, usage: Usage
) -> None:
    """Real streams carry ``cache_creation`` with its lifetimes (zero here): the parts
    come out as reported and input is priced as plain input."""
    decoder = AnthropicStreamDecoder()
    parser = SSEParser()
    for event in parser.feed(cassette(name)[0].body):
        decoder.feed(event)
    end = decoder.finish()[-1]
    assert end.usage == usage  # type: ignore[attr-defined]
    assert not end.usage.cached  # type: ignore[attr-defined]
