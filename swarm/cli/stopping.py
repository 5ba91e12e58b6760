"""Stopping a run from outside: SIGTERM ends it as Ctrl-C does.

``timeout``, a container stop or a CI runner sends SIGTERM, which by default kills the
process where it stands: no run summary, an events log cut mid-line. ``run_until_stopped``
turns it into a cancellation, so every agent stops with a valid history and the run
record is written, then raises ``Terminated``.
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

__all__ = ["TERMINATED", "Terminated", "run_until_stopped"]

T = TypeVar("T")

TERMINATED = 128 + signal.SIGTERM
"""The exit code after SIGTERM, as a shell reports a process it ended."""


class Terminated(Exception):
    """The run was stopped by SIGTERM; its record is written."""


def run_until_stopped(work: Callable[[], Awaitable[T]]) -> T:
    """Run ``work`` in a new event loop; SIGTERM cancels it and raises ``Terminated``.
    Ctrl-C still raises ``KeyboardInterrupt`` after the same cleanup."""

    async def main() -> T:
        finished: list[T] = []
        failed: list[Exception] = []
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM) as signals:
                    async for _ in signals:
                        group.cancel_scope.cancel()  # the work cleans up, then ends
                        return

            group.start_soon(watch)
            try:
                finished.append(await work())
            except Exception as exc:  # raised as it is, not in an exception group
                failed.append(exc)
            group.cancel_scope.cancel()  # done: stop watching
        if failed:
            raise failed[0]
        if not finished:
            raise Terminated
        return finished[0]

    return anyio.run(main)
