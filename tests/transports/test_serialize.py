import json

import pytest

from swarm import (
    ContextCompacted,
    Error,
    GuardError,
    IterationEnd,
    ReasoningDelta,
    SessionEndEvent,
    StopReason,
    StreamEvent,
    SubAgentEvent,
    TextDelta,
    ToolInputDelta,
    ToolOutputDelta,
    ToolResult,
    ToolResultBlock,
    ToolUseStart,
    TransportError,
    Usage,
)
from swarm.transports import ProviderError, event_from_dict, event_to_dict

EVENTS: list[StreamEvent] = [
    TextDelta(0, "héllo 🦅"),
    ReasoningDelta(1, "hmm", "sig=="),
    ReasoningDelta(1, "", ""),
    ToolUseStart(2, "call_1", "echo"),
    ToolInputDelta(2, "call_1", '{"te'),
    IterationEnd(3, StopReason.max_tokens, Usage(10, 5)),
    ToolOutputDelta("call_1", "shell", "stdout", "line\n"),
    ToolResult(
        "call_1", "echo", False, "hi", {"text": "hi"}, {"ms": 3}, ToolResultBlock("call_1", "hi")
    ),
    ContextCompacted(10, 3, 5000, "summary"),
    SessionEndEvent(StopReason.end_turn, Usage(1, 2)),
    SubAgentEvent("lead/dev#2", SubAgentEvent("lead/dev#2/qa", TextDelta(0, "x"))),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_every_event_round_trips_through_json(event: StreamEvent) -> None:
    assert event_from_dict(json.loads(json.dumps(event_to_dict(event)))) == event


def test_transport_errors_keep_status_and_retryable() -> None:
    back = event_from_dict(event_to_dict(Error(TransportError("busy", status=529, retryable=True))))
    assert isinstance(back, Error) and isinstance(back.exception, TransportError)
    assert (str(back.exception), back.exception.status, back.exception.retryable) == (
        "busy",
        529,
        True,
    )


def test_provider_errors_keep_their_type_and_wait() -> None:
    error = ProviderError(
        "slow", status=429, retryable=True, error_type="rate_limit_error", retry_after=2.0
    )
    back = event_from_dict(event_to_dict(Error(error)))
    assert isinstance(back, Error) and isinstance(back.exception, ProviderError)
    assert (back.exception.error_type, back.exception.retry_after) == ("rate_limit_error", 2.0)


@pytest.mark.parametrize(
    ("exception", "kind"),
    [(RuntimeError("x"), RuntimeError), (GuardError("no"), GuardError), (KeyError("k"), KeyError)],
)
def test_other_exceptions_come_back_as_their_own_type(exception: Exception, kind: type) -> None:
    back = event_from_dict(event_to_dict(Error(exception)))
    assert isinstance(back, Error) and type(back.exception) is kind


def test_unknown_exception_types_become_transport_errors_naming_them() -> None:
    class Weird(Exception):
        pass

    back = event_from_dict(event_to_dict(Error(Weird("odd"))))
    assert isinstance(back, Error) and isinstance(back.exception, TransportError)
    assert str(back.exception) == "Weird: odd"


def test_unknown_event_type_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown event type"):
        event_from_dict({"type": "nope"})
