from datetime import UTC, datetime
from email.utils import format_datetime

import httpx
import pytest

from swarm import Message, ProviderError
from swarm.transports import AnthropicTransport, RetryPolicy, parse_retry_after


def test_retry_after_in_seconds() -> None:
    assert parse_retry_after({"retry-after": "7"}) == 7.0


def test_retry_after_as_an_http_date() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(datetime(2025, 1, 1, 12, 0, 30, tzinfo=UTC), usegmt=True)
    assert parse_retry_after({"retry-after": later}, now=now.timestamp) == 30.0


def test_retry_after_ms_is_preferred_and_past_dates_mean_now() -> None:
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    past = "Wed, 05 Jun 2024 16:28:54 GMT"
    assert parse_retry_after({"retry-after": past}) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


def test_backoff_grows_exponentially_up_to_the_cap_and_stops_after_max_retries() -> None:
    policy = RetryPolicy(max_retries=6, initial_delay=1, max_delay=10, jitter=0)
    assert [policy.delay(n) for n in range(7)] == [1, 2, 4, 8, 10, 10, None]


def test_jitter_shortens_the_wait_by_at_most_its_fraction() -> None:
    policy = RetryPolicy(initial_delay=2, jitter=0.5, random=lambda: 1.0)
    assert policy.delay(0) == 1.0
    assert RetryPolicy(initial_delay=2, jitter=0.5, random=lambda: 0.0).delay(0) == 2.0


def test_server_wait_is_used_as_is_unless_too_long() -> None:
    policy = RetryPolicy(max_retry_after=60)
    assert policy.delay(0, retry_after=3.5) == 3.5
    assert policy.delay(0, retry_after=61) is None


@pytest.mark.anyio
async def test_x_should_retry_header_overrides_the_status(sleeps: list[float]) -> None:
    async def sleep(delay: float) -> None:
        sleeps.append(delay)

    answers = iter([httpx.Response(400, headers={"x-should-retry": "true"}, json={})])

    def handler(request: httpx.Request) -> httpx.Response:
        return next(answers, httpx.Response(503, headers={"x-should-retry": "false"}, json={}))

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    transport = AnthropicTransport(
        "claude", api_key="k", client=client, retry=RetryPolicy(jitter=0, sleep=sleep)
    )
    with pytest.raises(ProviderError) as caught:
        _ = [e async for e in transport.stream([Message.user("x")], [], "")]
    assert (caught.value.status, caught.value.retryable) == (503, False)
    assert sleeps == [0.5]
