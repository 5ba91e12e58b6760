"""Whether awaiting a callable can suspend, read from its bytecode.

A coroutine gives the event loop a chance to run something else (and a cancel scope a
chance to cancel it) only where its own code awaits: ``await``, ``async for`` and
``async with``. A coroutine function whose code has none of them runs to completion in
one step, so wrapping a call of it in a cancel scope (an interrupt, a time limit) can
change nothing. The loop uses this to skip a scope around guards and handlers that
cannot wait, which is most guards. The answer errs towards "may suspend": anything but
a plain coroutine function (or a bound method of one) may.
"""

from __future__ import annotations

import dis
import inspect
from collections.abc import Callable
from types import CodeType
from typing import Any

__all__ = ["may_suspend"]

# Every way a coroutine's own code hands control to the event loop goes through one of
# these (``await`` is GET_AWAITABLE then SEND or YIELD_FROM; the async loops and context
# managers have their own). A bare ``yield`` cannot appear in a coroutine function.
_SUSPENDING = frozenset(
    {"GET_AWAITABLE", "GET_AITER", "GET_ANEXT", "BEFORE_ASYNC_WITH", "SEND", "YIELD_FROM"}
)
_known: dict[CodeType, bool] = {}


def may_suspend(fn: Callable[..., Any]) -> bool:
    """False only when ``fn`` is a coroutine function (or a method of one) whose own
    code never awaits: calling and awaiting it completes without yielding to the loop."""
    function = getattr(fn, "__func__", fn)  # a bound method: its function
    if not inspect.isfunction(function):
        return True
    code = function.__code__
    if not code.co_flags & inspect.CO_COROUTINE:  # sync, or returns some other awaitable
        return True
    known = _known.get(code)
    if known is None:
        known = _known[code] = any(i.opname in _SUSPENDING for i in dis.get_instructions(code))
    return known
