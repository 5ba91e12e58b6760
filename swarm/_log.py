"""Loggers that import structlog on their first line, not at import.

structlog's package imports its dev console, and that imports rich when it is installed:
hundreds of milliseconds that a library user who never sees a warning should not pay at
``import swarm``. ``logger(name)`` returns a stand-in that imports structlog and binds the
real logger the first time a method is called on it.

The command line's logging setup (``configure``) waits for that moment too, so ``swarm
--help`` and a ``swarm validate`` that logs nothing never import structlog either. It is
applied only while nobody else has configured structlog (a test capturing logs has).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from typing import Any

__all__ = ["configure", "logger", "once", "quiet", "said"]

_pending: Callable[[], None] | None = None
_quiet = 0
_HUSHED = frozenset({"debug", "info", "warning"})
_said: set[str] = set()  # messages printed by the command, or logged already


def _ignore(*args: Any, **kwargs: Any) -> None:
    return None


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Within it, ``logger`` lines below error are not written: for a command that prints
    every warning itself (``swarm validate``), so none is shown twice."""
    global _quiet
    _quiet += 1
    try:
        yield
    finally:
        _quiet -= 1


def said(messages: Iterable[str]) -> None:
    """Note warnings the command printed itself (``warning: ...``): a log line saying one
    of them (after its ``team: `` word) is not written as well (see ``once``)."""
    _said.update(messages)


def once(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
    """A structlog processor for the command line: a line that says what the command
    printed itself (``said``), or what an earlier line said with the same values, is
    dropped. A team loaded twice in one command (once to print its warnings, once by
    the run) then warns once."""
    import structlog

    text = event.get("event")
    if isinstance(text, str):
        values = sorted((k, repr(v)) for k, v in event.items() if k != "event")
        key = f"{text}\0{values}"
        if text in _said or text.partition(": ")[2] in _said or key in _said:
            raise structlog.DropEvent
        _said.add(key)
    return event


def configure(setup: Callable[[], None]) -> None:
    """Run ``setup`` (which configures structlog) now if structlog is loaded, else before
    the first line logged through a ``logger``."""
    global _pending
    if "structlog" in sys.modules:
        _pending = None
        setup()
    else:
        _pending = setup


def _structlog() -> Any:
    global _pending
    import structlog

    setup, _pending = _pending, None
    if setup is not None and not structlog.is_configured():
        setup()
    return structlog


class _Logger:
    """A structlog logger bound on first use (``info``, ``warning``, ``bind``, ...)."""

    __slots__ = ("_name", "_real")

    def __init__(self, name: str) -> None:
        self._name = name
        self._real: Any = None

    def __getattr__(self, attribute: str) -> Any:
        if _quiet and attribute in _HUSHED:
            return _ignore
        if self._real is None:
            self._real = _structlog().get_logger(self._name)
        return getattr(self._real, attribute)


def logger(name: str) -> Any:
    """The logger ``name``; structlog is imported when it first logs."""
    return _Logger(name)
