"""The exceptions swarm raises, as one tree users can catch.

::

    SwarmError
    ├── ConfigError          a bad role, policy or scenario file (path, line, field)
    ├── ToolError            a tool call failed; becomes an error result in the loop
    │   ├── GuardError       a guard denied the call (or crashed: guards fail closed)
    │   └── ToolTimeout      the call ran past its timeout
    ├── TransportError       the model provider failed (status, retryable)
    │   └── ProviderError    the provider said so: an error status or an error in a stream
    ├── CompactionError      summarising a context failed (the history is left as it was)
    ├── BudgetExceeded       a token, time or delegation budget is spent
    ├── MaxIterationsReached an agent used all its iterations
    └── InvalidOutput        an agent's final answer never met its ``output`` schema

Inside ``Agent.run``/``run_stream`` none of these escape: they end as events and a
``SessionEndEvent`` with a stop reason. They are raised by the APIs a user calls directly
(loading files, calling a ``Tool`` by hand, a transport outside the loop).
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "BudgetExceeded",
    "CompactionError",
    "ConfigError",
    "GuardError",
    "InvalidOutput",
    "MaxIterationsReached",
    "ProviderError",
    "SwarmError",
    "ToolError",
    "ToolTimeout",
    "TransportError",
]


class SwarmError(Exception):
    """The root of every error swarm raises on purpose."""


class ConfigError(SwarmError):
    """A file (role, policy, scenario) is invalid.

    ``path``, ``line`` and ``field`` say where, when known; ``str()`` reads like
    ``roles/dev.yaml:4: field 'tools': unknown tool 'shel' (known: read_file, shell)``.
    ``problems`` lists every problem found (itself when there is one).
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.problems: list[ConfigError] = [self]
        super().__init__(self._render())

    @classmethod
    def collect(cls, problems: list[ConfigError]) -> ConfigError:
        """One error standing for several: the first one's fields, every problem in
        ``problems`` and in the message (one per line)."""
        if len(problems) == 1:
            return problems[0]
        first = problems[0]
        error = cls(first.message, path=first.path, line=first.line, field=first.field)
        error.problems = list(problems)
        error.args = ("\n".join(str(p) for p in problems),)
        return error

    def _render(self) -> str:
        where = self.path or ""
        if where and self.line is not None:
            where = f"{where}:{self.line}"
        text = f"field '{self.field}': {self.message}" if self.field else self.message
        return f"{where}: {text}" if where else text


class ToolError(SwarmError):
    """A tool call could not produce a result."""


class GuardError(ToolError):
    """A permission guard denied a tool call.

    ``guard`` names the guard that decided, ``rule`` the policy rule when there is one.
    """

    def __init__(self, message: str, *, guard: str | None = None, rule: str | None = None) -> None:
        self.reason = message
        self.guard = guard
        self.rule = rule
        super().__init__(message)


class ToolTimeout(ToolError):
    """A tool call ran past its timeout and was cancelled."""


class TransportError(SwarmError):
    """The model provider failed.

    ``status`` is the HTTP status when there was one; ``retryable`` says whether trying
    the same request again may succeed (429, 5xx, dropped connections).
    """

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        self.status = status
        self.retryable = retryable
        super().__init__(message)


class BudgetExceeded(SwarmError):
    """A budget (tokens, wall-clock time, delegations, depth) is spent."""


class MaxIterationsReached(SwarmError):
    """An agent used all its iterations and still wanted to call tools."""


class InvalidOutput(SwarmError):
    """An agent with an ``output`` schema used all its ``output_retries`` without giving a
    final answer that meets it; the message names what was still wrong."""


class ProviderError(TransportError):
    """A ``TransportError`` the provider reported: an HTTP error status, or an error object
    inside a stream.

    ``error_type`` is the provider's own classification when it gave one
    (``rate_limit_error``, ``overloaded_error``, ``invalid_api_key``...); ``retry_after`` is
    the wait in seconds the server asked for, if it did.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        error_type: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, status=status, retryable=retryable)
        self.error_type = error_type
        self.retry_after = retry_after


class CompactionError(SwarmError):
    """Summarising failed: the summariser raised, reported an ``Error``, or wrote nothing.

    Whoever compacts leaves the history as it was.
    """


class ContextStoreError(SwarmError):
    """The context store could not read or write the history; the run ended there, with
    what was stored before it intact."""
