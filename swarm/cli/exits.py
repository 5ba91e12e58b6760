"""How the command exits: its exit codes, and stopping a run from outside.

Ctrl-C and SIGTERM (``timeout``, a container stop, a CI runner) both stop a run the same
way: every agent is cancelled with a valid history and the run record is written, then
``run_until_stopped`` raises ``Stopped`` with the exit code a shell expects. SIGTERM's
default action would kill the process where it stands, with no summary and an events
log cut short.
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

__all__ = [
    "AWAITING_APPROVAL",
    "BAD_INPUT",
    "FAILED",
    "INTERRUPTED",
    "OK",
    "TERMINATED",
    "Stopped",
    "run_until_stopped",
]

T = TypeVar("T")

OK, FAILED, BAD_INPUT = 0, 1, 2
AWAITING_APPROVAL = 75  # EX_TEMPFAIL: the run waits for a person; answer and resume
INTERRUPTED = 128 + signal.SIGINT  # 130, as a shell reports a process stopped by Ctrl-C
TERMINATED = 128 + signal.SIGTERM  # 143


class Stopped(Exception):
    """The run was stopped from outside; its record is written. ``how`` says by what
    (``interrupted``, ``terminated``), ``code`` is the exit code."""

    def __init__(self, how: str, code: int) -> None:
        super().__init__(how)
        self.how = how
        self.code = code


def run_until_stopped(work: Callable[[], Awaitable[T]]) -> T:
    """Run ``work`` in a new event loop; raises ``Stopped`` when Ctrl-C or SIGTERM ended
    it (after its cleanup ran), and ``work``'s own errors as they are."""

    async def main() -> T:
        done: list[T] = []
        failed: list[Exception] = []
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM) as signals:
                    async for _ in signals:
                        group.cancel_scope.cancel()  # the work cleans up, then ends
                        return

            group.start_soon(watch)
            try:
                done.append(await work())
            except Exception as exc:  # kept out of the task group's exception group
                failed.append(exc)
            group.cancel_scope.cancel()  # finished: stop watching
        if failed:
            raise failed[0]
        if not done:
            raise Stopped("terminated", TERMINATED)
        return done[0]

    try:
        return anyio.run(main)
    except KeyboardInterrupt:
        raise Stopped("interrupted", INTERRUPTED) from None
