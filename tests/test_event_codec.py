"""The events' JSON form: derived from each event's ``type`` and fields, lossless, and
able to read what earlier versions wrote."""

import dataclasses
import inspect
import json
import types
import typing
from pathlib import Path
from typing import Any

import pytest

from swarm import (
    ContextCompacted,
    Error,
    GuardError,
    IterationEnd,
    ProviderError,
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
    events as events_module,
)
from swarm.event_codec import EVENT_TYPES, event_from_dict, event_to_dict
from swarm.messages import Message, ReasoningBlock, TextBlock, ToolUseBlock
from swarm.types import UsageNode

OLD_RECORD = Path(__file__).parent / "data" / "events-before-event-codec.jsonl"

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


def event_classes() -> list[type]:
    """Every event class ``swarm.events`` defines (a dataclass with a ``type`` name)."""
    return [
        cls
        for _, cls in inspect.getmembers(events_module, inspect.isclass)
        if cls.__module__ == events_module.__name__
        and dataclasses.is_dataclass(cls)
        and isinstance(getattr(cls, "type", None), str)
    ]


def sample(hint: Any, depth: int = 0) -> Any:
    """A value of type ``hint`` unlike its default, so a field the codec dropped shows."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        present = [a for a in args if a is not type(None)]
        if len(present) > 1:  # the StreamEvent union: a nested event
            return TextDelta(4, "inner ✓")
        return sample(present[0], depth)
    if origin is tuple:
        return () if depth > 1 else (sample(args[0], depth + 1), sample(args[0], depth + 1))
    if origin is dict or hint is Any:
        return {"key": [1, "v", None, {"deep": True}]}
    simple: dict[Any, Any] = {
        int: 7,
        str: "héllo 🦅",
        float: 2.5,
        bool: True,
        StopReason: StopReason.max_tokens,
        BaseException: RuntimeError("boom"),
        ToolResultBlock: ToolResultBlock("call_9", "out", True),
        Message: Message(
            "assistant",
            [ReasoningBlock("why", "sig"), TextBlock("t"), ToolUseBlock("c", "shell", {"a": 1})],
        ),
    }
    if hint in simple:
        return simple[hint]
    if dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        fields = dataclasses.fields(hint)
        return hint(**{f.name: sample(hints[f.name], depth + 1) for f in fields})
    raise AssertionError(f"the test has no sample for {hint!r}: add one")


def test_every_event_class_is_a_stream_event_with_its_own_type_name() -> None:
    classes = event_classes()
    assert set(classes) == set(typing.get_args(StreamEvent))
    assert {cls.type: cls for cls in classes} == dict(EVENT_TYPES)
    assert all(name.isidentifier() and name.islower() for name in EVENT_TYPES)


@pytest.mark.parametrize("cls", event_classes(), ids=lambda cls: cls.type)
def test_every_event_type_round_trips_with_every_field_set(cls: type) -> None:
    hints = typing.get_type_hints(cls)
    event = cls(**{f.name: sample(hints[f.name]) for f in dataclasses.fields(cls)})
    data = json.loads(json.dumps(event_to_dict(event)))
    assert data["type"] == cls.type
    assert set(data) == {"type", *(f.name for f in dataclasses.fields(cls))}
    back = event_from_dict(data)
    assert type(back) is cls
    if cls in (Error, SessionEndEvent):  # exceptions compare by identity
        assert event_to_dict(back) == event_to_dict(event)
        assert isinstance(getattr(back, "exception", None) or back.error, RuntimeError)
    else:
        assert back == event


def test_a_usage_tree_survives_the_session_end() -> None:
    leaf = UsageNode("lead/dev#1", Usage(5, 6), Usage(5, 6), 1, 0, "m2", StopReason.budget)
    tree = UsageNode("lead", Usage(1, 2), Usage(6, 8), 2, 1, "m1", StopReason.end_turn, (leaf,))
    end = SessionEndEvent(StopReason.end_turn, Usage(1, 2), tree, final_text="ok")
    back = event_from_dict(json.loads(json.dumps(event_to_dict(end))))
    assert isinstance(back, SessionEndEvent) and back.usage_tree == tree
    assert back.usage_tree.children[0].stop_reason is StopReason.budget


def test_records_written_before_the_codec_still_load_and_keep_their_form() -> None:
    """The lines were written by the hand-written codec this one replaced; each loads, and
    writing it again gives the same dict with at most the fields it used to leave out."""
    lines = OLD_RECORD.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 20
    for line in lines:
        old = json.loads(line)
        new = event_to_dict(event_from_dict(old))
        assert {key: new[key] for key in old} == old
        assert set(new) - set(old) <= {"signature", "usage_tree", "output"}


def test_an_old_record_reads_as_the_events_it_held() -> None:
    loaded = [event_from_dict(json.loads(line)) for line in OLD_RECORD.read_text().splitlines()]
    assert loaded[4] == ReasoningDelta(1, "no signature", "")
    assert loaded[12] == ToolResult("call_2", "write", True, "denied")
    end = loaded[18]
    assert isinstance(end, SessionEndEvent)
    assert (end.stop_reason, end.final_text, end.iterations, end.cost_usd, end.usage_tree) == (
        StopReason.max_iterations,
        "done",
        2,
        0.5,
        None,
    )


def test_a_missing_field_with_a_default_takes_it() -> None:
    old = {"type": "tool_result", "tool_use_id": "c", "name": "n", "is_error": False}
    assert event_from_dict(old) == ToolResult("c", "n", False)
    assert event_from_dict({"type": "reasoning_delta", "index": 0, "delta": "d"}) == (
        ReasoningDelta(0, "d")
    )


def test_a_missing_field_without_a_default_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match="text_delta event is missing 'delta'"):
        event_from_dict({"type": "text_delta", "index": 0})


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"type": "iteration_end", "iteration": 1, "stop_reason": "bored", "usage": {}}, "stop_"),
        ({"type": "turn_end", "iteration": 1, "message": {"role": "x"}}, "message"),
        (
            {
                "type": "turn_end",
                "iteration": 1,
                "message": {"role": "user", "content": []},
                "tool_results": [{"type": "text", "text": "not a result"}],
            },
            "tool_results",
        ),
        ({"type": "sub_agent", "path": "a", "event": {"type": "nope"}}, "event"),
        (
            {"type": "session_end", "stop_reason": "end_turn", "total_usage": {}, "usage_tree": {}},
            "usage_tree",
        ),
    ],
)
def test_a_value_of_the_wrong_shape_is_a_value_error_naming_the_field(
    data: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValueError, match=f"bad '{field}"):
        event_from_dict(data)


def test_a_forged_record_nesting_events_deeply_is_a_value_error() -> None:
    data: dict[str, Any] = {"type": "text_delta", "index": 0, "delta": "x"}
    for _ in range(900):
        data = {"type": "sub_agent", "path": "p", "event": data}
    with pytest.raises(ValueError, match="nested too deeply"):
        event_from_dict(json.loads(json.dumps(data)))
