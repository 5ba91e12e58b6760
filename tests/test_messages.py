import json

import pytest

from swarm import (
    ImageBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)


def test_every_block_round_trips_through_json() -> None:
    message = Message(
        "assistant",
        [
            TextBlock("hello"),
            ReasoningBlock("thinking…", signature="sig=="),
            ReasoningBlock("unsigned"),
            ImageBlock("image/png", b"\x89PNG\x00\xff"),
            ToolUseBlock("call_1", "read_file", {"path": "a.txt", "n": [1, 2]}),
            ToolResultBlock(
                "call_1",
                [TextBlock("text"), ImageBlock("image/jpeg", b"\x00\x01")],
                is_error=True,
                details={"rows": 3},
            ),
            ToolResultBlock("call_2", "plain"),
        ],
    )
    wire = json.dumps(message.to_dict())
    assert Message.from_dict(json.loads(wire)) == message


def test_image_bytes_are_base64_in_the_dict() -> None:
    data = Message("user", [ImageBlock("image/gif", b"GIF89a")]).to_dict()
    assert data["content"][0]["data"] == "R0lGODlh"


def test_unknown_block_type_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown content block type 'video'"):
        Message.from_dict({"role": "user", "content": [{"type": "video"}]})


def test_missing_block_field_is_named() -> None:
    with pytest.raises(ValueError, match="tool_use block is missing 'name'"):
        Message.from_dict({"role": "assistant", "content": [{"type": "tool_use", "id": "x"}]})


def test_bad_role_is_refused() -> None:
    with pytest.raises(ValueError, match="role"):
        Message.from_dict({"role": "robot", "content": []})


def test_message_text_and_tool_helpers() -> None:
    message = Message("assistant", [TextBlock("a"), ToolUseBlock("1", "t", {}), TextBlock("b")])
    assert message.text == "ab"
    assert [u.id for u in message.tool_uses] == ["1"]
