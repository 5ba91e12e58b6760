"""Content blocks and messages: the conversation history, and its JSON form.

Every block round-trips losslessly through ``to_dict``/``from_dict`` (bytes as base64), so
stores and cassettes can keep history as JSON.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from swarm.types import ToolCallID, ToolName

__all__ = [
    "ContentBlock",
    "ImageBlock",
    "Message",
    "ReasoningBlock",
    "TextBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "block_from_dict",
    "block_to_dict",
]

ImageMediaType: TypeAlias = Literal["image/jpeg", "image/png", "image/gif", "image/webp"]
Role: TypeAlias = Literal["user", "assistant", "system"]


@dataclass(frozen=True, slots=True)
class TextBlock:
    """Plain text."""

    text: str


@dataclass(frozen=True, slots=True)
class ImageBlock:
    """An image, as raw bytes with its media type."""

    media_type: ImageMediaType
    data: bytes


@dataclass(frozen=True, slots=True)
class ReasoningBlock:
    """The model's visible reasoning ("thinking"), kept so providers that sign it can
    verify it when it is sent back (Anthropic's ``signature``)."""

    text: str
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    """A tool call the model made: its id, the tool's name and the parsed arguments."""

    id: ToolCallID
    name: ToolName
    input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    """The result of one tool call.

    ``content`` is what the model sees; ``details`` is data for programs and UIs that is
    kept in history and events but never sent to the model.
    """

    tool_use_id: ToolCallID
    content: str | list[TextBlock | ImageBlock]
    is_error: bool = False
    details: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        """The text of the content (images left out)."""
        if isinstance(self.content, str):
            return self.content
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))


ContentBlock: TypeAlias = TextBlock | ImageBlock | ReasoningBlock | ToolUseBlock | ToolResultBlock


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of the conversation."""

    role: Role
    content: list[ContentBlock] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The concatenated text blocks of this message."""
        content = self.content
        if len(content) == 1 and type(block := content[0]) is TextBlock:  # most answers
            return block.text
        return "".join(b.text for b in content if isinstance(b, TextBlock))

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        return [b for b in self.content if isinstance(b, ToolResultBlock)]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict; ``Message.from_dict`` reverses it exactly."""
        return {"role": self.role, "content": [block_to_dict(b) for b in self.content]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        """Rebuild a message from ``to_dict`` output. Raises ``ValueError`` on bad data."""
        role = data.get("role")
        if role not in ("user", "assistant", "system"):
            raise ValueError(f"message role must be user, assistant or system, not {role!r}")
        return cls(role=role, content=[block_from_dict(b) for b in data.get("content", [])])

    @classmethod
    def user(cls, text: str) -> Message:
        return cls("user", [TextBlock(text)])

    @classmethod
    def assistant(cls, text: str) -> Message:
        return cls("assistant", [TextBlock(text)])


def block_to_dict(block: ContentBlock) -> dict[str, Any]:
    """Serialise one content block to a JSON-safe dict."""
    match block:
        case TextBlock(text=text):
            return {"type": "text", "text": text}
        case ImageBlock(media_type=media_type, data=data):
            return {
                "type": "image",
                "media_type": media_type,
                "data": base64.b64encode(data).decode("ascii"),
            }
        case ReasoningBlock(text=text, signature=signature):
            out: dict[str, Any] = {"type": "reasoning", "text": text}
            if signature is not None:
                out["signature"] = signature
            return out
        case ToolUseBlock(id=id_, name=name, input=input_):
            return {"type": "tool_use", "id": id_, "name": name, "input": input_}
        case ToolResultBlock(tool_use_id=tid, content=content, is_error=is_error, details=det):
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": tid,
                "content": content
                if isinstance(content, str)
                else [block_to_dict(b) for b in content],
                "is_error": is_error,
            }
            if det is not None:
                result["details"] = det
            return result
        case _:
            raise TypeError(f"not a content block: {block!r}")


def block_from_dict(data: dict[str, Any]) -> ContentBlock:
    """Rebuild a content block from ``block_to_dict`` output. Raises ``ValueError``."""
    kind = data.get("type")
    try:
        if kind == "text":
            return TextBlock(data["text"])
        if kind == "image":
            return ImageBlock(data["media_type"], base64.b64decode(data["data"]))
        if kind == "reasoning":
            return ReasoningBlock(data["text"], data.get("signature"))
        if kind == "tool_use":
            return ToolUseBlock(data["id"], data["name"], dict(data["input"]))
        if kind == "tool_result":
            raw = data["content"]
            content: str | list[TextBlock | ImageBlock]
            if isinstance(raw, str):
                content = raw
            else:
                content = []
                for item in raw:
                    inner = block_from_dict(item)
                    if not isinstance(inner, TextBlock | ImageBlock):
                        raise ValueError("tool result content holds only text and images")
                    content.append(inner)
            return ToolResultBlock(
                data["tool_use_id"], content, bool(data.get("is_error", False)), data.get("details")
            )
    except KeyError as exc:
        raise ValueError(f"{kind} block is missing {exc.args[0]!r}") from None
    raise ValueError(f"unknown content block type {kind!r}")
