"""Retries for model calls: which failures to retry, how long to wait, and the retry loop.

Retried: HTTP 408, 409, 429, every 5xx (Anthropic's 529 "overloaded" included), connection
errors, and timeouts or broken streams *before the first event reached the caller*. Not
retried: any other 4xx (the provider's message and the status end up in the
``TransportError``). A server's ``x-should-retry: true|false`` header overrides the status.

The wait is exponential backoff with jitter, unless the server says how long to wait
(``retry-after-ms``, or ``retry-after`` in seconds or as an HTTP date): then that, exactly.
A server that asks for a longer wait than ``RetryPolicy.max_retry_after`` is not retried.

A stream that breaks *after* events reached the caller is never retried here: a new
attempt would sample a different answer, and the caller has already acted on the first
one. The iteration fails with a retryable ``TransportError`` instead, so a caller that can
start the iteration over (it has not stored the partial turn) may do so.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TypeVar

import anyio

from swarm._log import logger
from swarm.errors import ProviderError, TransportError

__all__ = [
    "RETRYABLE_STATUSES",
    "ProviderError",
    "RetryPolicy",
    "is_retryable_status",
    "parse_retry_after",
    "retrying",
]

T = TypeVar("T")

RETRYABLE_STATUSES = frozenset({408, 409, 429})
"""4xx statuses worth retrying; every status >= 500 is retryable too."""

_log = logger("swarm.transports")


def is_retryable_status(status: int) -> bool:
    """Whether an HTTP status means the same request may succeed later."""
    return status in RETRYABLE_STATUSES or status >= 500


def parse_retry_after(
    headers: Mapping[str, str], *, now: Callable[[], float] = time.time
) -> float | None:
    """The wait (seconds) a response asks for: ``retry-after-ms``, else ``retry-after`` as
    seconds or an HTTP date. ``None`` when absent or unreadable; never negative."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now())


async def _anyio_sleep(delay: float) -> None:
    await anyio.sleep(delay)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How a transport retries a failed call.

    At most ``max_retries`` retries follow the first attempt. Attempt ``n`` (from 0) waits
    ``min(max_delay, initial_delay * multiplier**n)``, scaled by a random factor in
    ``[1 - jitter, 1]``, unless the server asked for a wait (used as is, if it is at most
    ``max_retry_after``; longer means give up). ``sleep`` does the waiting: tests inject a
    recorder so they never wait.
    """

    max_retries: int = 2
    initial_delay: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 20.0
    jitter: float = 0.5
    max_retry_after: float = 60.0
    sleep: Callable[[float], Awaitable[None]] = field(default=_anyio_sleep, compare=False)
    random: Callable[[], float] = field(default=random.random, compare=False)

    def delay(self, attempt: int, retry_after: float | None = None) -> float | None:
        """Seconds to wait before retry ``attempt`` (0-based), or ``None``: do not retry."""
        if attempt >= self.max_retries:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        base = min(self.max_delay, self.initial_delay * self.multiplier**attempt)
        return base * (1 - self.jitter * self.random())


def _retry_after(exc: TransportError) -> float | None:
    return exc.retry_after if isinstance(exc, ProviderError) else None


async def retrying(
    policy: RetryPolicy, attempt: Callable[[], AsyncGenerator[T, None]], *, what: str = "model call"
) -> AsyncIterator[T]:
    """Run ``attempt()`` and yield its items, starting it again on a retryable
    ``TransportError`` raised before its first item, as ``policy`` allows.

    Raises the last ``TransportError`` when retries run out or the failure is not
    retryable, and any failure after the first item as it is.
    """
    tries = 0
    while True:
        started = False
        try:
            async with aclosing(attempt()) as items:
                async for item in items:
                    started = True
                    yield item
            return
        except TransportError as exc:
            if started or not exc.retryable:
                raise
            wait = policy.delay(tries, _retry_after(exc))
            if wait is None:
                raise
            tries += 1
            _log.warning("transport.retry", what=what, status=exc.status, attempt=tries, delay=wait)
            await policy.sleep(wait)
