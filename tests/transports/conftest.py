"""Fixtures for transport tests: a retry policy that records its waits instead of waiting."""

from collections.abc import Awaitable, Callable

import pytest

from swarm.transports import RetryPolicy

from .recordings import THIRD_PARTY_ABSENT, skip_conformance


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


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a test on a third-party recording when ``shared/`` is absent, never in CI."""
    if item.get_closest_marker("conformance") is not None and skip_conformance():
        pytest.skip(THIRD_PARTY_ABSENT)
