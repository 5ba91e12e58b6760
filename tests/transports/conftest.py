"""Fixtures for transport tests: a retry policy that records its waits instead of waiting."""

from collections.abc import Awaitable, Callable

import pytest

from swarm.transports import RetryPolicy


@pytest.fixture
def sleeps() -> list[float]:
    """The waits the retry policy asked for, in order."""
    return []


@pytest.fixture
def no_wait(sleeps: list[float]) -> RetryPolicy:
    """Three retries with deterministic backoff; sleeping only records the delay."""

    def recorder() -> Callable[[float], Awaitable[None]]:
        async def sleep(delay: float) -> None:
            sleeps.append(delay)

        return sleep

    return RetryPolicy(max_retries=3, jitter=0.0, sleep=recorder())
