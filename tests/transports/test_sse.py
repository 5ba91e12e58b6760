import pytest

from swarm.transports import SSEEvent, SSEParser

from .recordings import conformance, sse_body


def parse(*chunks: bytes) -> list[SSEEvent]:
    parser = SSEParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return events + parser.close()


def test_data_lines_of_one_event_join_with_newlines() -> None:
    assert parse(b"data: a\ndata: b\n\n") == [SSEEvent("message", "a\nb")]


def test_event_field_names_the_event_type() -> None:
    events = parse(b'event: message_start\ndata: {"x":1}\n\ndata: y\n\n')
    assert [(e.event, e.data) for e in events] == [("message_start", '{"x":1}'), ("message", "y")]


def test_comment_lines_are_ignored() -> None:
    events = parse(b": OPENROUTER PROCESSING\n\n: keep-alive\ndata: x\n\n")
    assert events == [SSEEvent("message", "x")]


def test_crlf_and_cr_line_endings_are_understood() -> None:
    assert parse(b"event: a\r\ndata: 1\r\n\r\ndata: 2\r\rdata: 3\n\n") == [
        SSEEvent("a", "1"),
        SSEEvent("message", "2"),
        SSEEvent("message", "3"),
    ]


def test_crlf_split_between_chunks_is_one_line_end() -> None:
    assert parse(b"data: 1\r", b"\n\r", b"\ndata: 2\r\n\r\n") == [
        SSEEvent("message", "1"),
        SSEEvent("message", "2"),
    ]


def test_done_marker_is_recognised() -> None:
    (event,) = parse(b"data: [DONE]\n\n")
    assert event.is_done


def test_value_keeps_everything_after_the_single_leading_space() -> None:
    assert parse(b"data:  two spaces\ndata:none\n\n") == [SSEEvent("message", " two spaces\nnone")]


def test_multibyte_character_split_across_chunks_survives() -> None:
    raw = "data: 🦅 café\n\n".encode()
    assert parse(raw[:8], raw[8:11], raw[11:]) == [SSEEvent("message", "🦅 café")]


def test_last_event_without_blank_line_is_delivered_at_the_end() -> None:
    assert parse(b'event: message_stop\ndata: {"type":"message_stop" }') == [
        SSEEvent("message_stop", '{"type":"message_stop" }')
    ]


def test_malformed_lines_are_ignored_not_fatal() -> None:
    events = parse(b"garbage without colon\nretry: 10\nnonsense: 1\ndata: ok\n\n\n\n")
    assert events == [SSEEvent("message", "ok")]


def test_leading_whitespace_before_a_field_is_tolerated() -> None:
    assert parse(b' data: {"a":1}\n\n') == [SSEEvent("message", '{"a":1}')]


def test_id_field_is_kept_on_following_events() -> None:
    assert parse(b"id: 7\ndata: a\n\ndata: b\n\n") == [
        SSEEvent("message", "a", "7"),
        SSEEvent("message", "b", "7"),
    ]


@pytest.mark.parametrize(
    ("name", "count"),
    [
        ("anthropic-messages__max_tokens-cuts-tool_use-partial-json.sse.txt", 14),
        ("llamacpp-openai__parallel-tool-calls-split-args__usage.sse.txt", 24),
        conformance(
            "anthropic-stream__max_tokens-truncated-tool_use-partial-json__sonnet-3.7.sse.txt", 16
        ),
    ],
)
def test_any_split_of_a_stream_gives_the_same_events(name: str, count: int) -> None:
    raw = sse_body(name)
    whole = parse(raw)
    assert len(whole) == count
    for size in (1, 2, 3, 7, 64):
        assert parse(*(raw[i : i + size] for i in range(0, len(raw), size))) == whole
