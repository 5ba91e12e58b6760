from typing import Any

import httpx
import pytest

from swarm import (
    ImageBlock,
    Message,
    ReasoningBlock,
    ReasoningDelta,
    TextBlock,
    Tool,
    ToolResultBlock,
    ToolUseBlock,
)
from swarm.errors import ConfigError
from swarm.transports import AnthropicTransport, anthropic_messages, on_user_turn

from .recordings import assemble, cassette, conformance


async def _version() -> str:
    return "0.32a0"


# each tool's schema exactly as its exchange's request offered it
fixed_version: Tool[object] = Tool(
    "fixed_version",
    _version,
    description="Return a fixed test version string",
    schema={"properties": {}, "type": "object"},
)
app_version: Tool[object] = Tool(
    "app_version",
    _version,
    description="Return the deployed app version.",
    schema={"type": "object", "properties": {}},
)

OURS = "anthropic-messages__thinking-signature-then-tool_use__tool_result-turn.yaml"
THEIRS = "anthropic-stream__thinking-signature-then-tool_use__tool_result-turn__haiku-4.5.vcr.yaml"
THINKING = [
    pytest.param(OURS, "toolu_01SwarmAppVersion00001", app_version, "2.4.1", id="ours"),
    conformance(THEIRS, "toolu_01825dXWLSoJwCst1qTsiWdb", fixed_version, "0.32a0", id="theirs"),
]


@pytest.mark.parametrize(("name", "tool_use_id", "tool", "result"), THINKING)
def test_signed_reasoning_goes_back_as_a_thinking_block_as_recorded(
    name: str, tool_use_id: str, tool: Tool[object], result: str
) -> None:
    _, second = cassette(name)
    recorded = second.request["messages"]
    thinking = recorded[1]["content"][0]
    history = [
        Message.user(recorded[0]["content"][0]["text"]),
        Message(
            "assistant",
            [
                ReasoningBlock(thinking["thinking"], thinking["signature"]),
                ToolUseBlock(tool_use_id, tool.name, {}),
            ],
        ),
        Message("user", [ToolResultBlock(tool_use_id, result)]),
    ]
    system, converted = anthropic_messages(history, "")
    assert system == ""
    assert converted == recorded


@pytest.mark.parametrize(
    ("name", "model", "tool", "options"),
    [
        pytest.param(
            OURS,
            "claude-haiku-4-5-20251001",
            app_version,
            {"max_tokens": 16000, "thinking_budget": 2048},
            id="ours",
        ),
        conformance(
            THEIRS,
            "claude-haiku-4-5-20251001",
            fixed_version,
            {
                "max_tokens": 64000,
                "thinking_budget": 1024,
                "temperature": 1.0,
                "extra_body": {
                    "thinking": {"type": "enabled", "budget_tokens": 1024, "display": "summarized"}
                },
            },
            id="theirs",
        ),
    ],
)
def test_request_matches_the_recorded_thinking_request(
    name: str, model: str, tool: Tool[object], options: dict[str, Any]
) -> None:
    first, _ = cassette(name)
    # the recorded client asked for no prompt caching (on by default at Anthropic's API)
    transport = AnthropicTransport(model, api_key="k", cache=False, **options)
    text = first.request["messages"][0]["content"][0]["text"]
    assert transport.build_request([Message.user(text)], [tool], "") == first.request


def test_consecutive_messages_of_one_role_are_merged() -> None:
    history = [
        Message.user("a"),
        Message.user("b"),
        Message("assistant", [ToolUseBlock("t1", "x", {})]),
        Message("user", [ToolResultBlock("t1", "r")]),
        Message.user("and now?"),
    ]
    _, converted = anthropic_messages(history, "")
    assert [m["role"] for m in converted] == ["user", "assistant", "user"]
    assert converted[0]["content"] == [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert converted[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "r"},
        {"type": "text", "text": "and now?"},
    ]


def test_system_messages_join_the_system_prompt() -> None:
    system, converted = anthropic_messages([Message("system", [TextBlock("Be terse.")])], "Base.")
    assert system == "Base.\n\nBe terse."
    assert converted == []


def test_unsigned_reasoning_empty_text_and_details_are_not_sent() -> None:
    history = [
        Message.user("hi"),
        Message(
            "assistant", [ReasoningBlock("from another provider"), TextBlock(""), TextBlock("ok")]
        ),
        Message("user", [ToolResultBlock("t", "out", is_error=True, details={"secret": 1})]),
    ]
    _, converted = anthropic_messages(history, "")
    assert converted[1]["content"] == [{"type": "text", "text": "ok"}]
    assert converted[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t", "content": "out", "is_error": True}
    ]


def test_tool_result_images_stay_inside_the_tool_result() -> None:
    result = ToolResultBlock("t", [TextBlock("shot"), ImageBlock("image/png", b"PNG")])
    _, converted = anthropic_messages([Message("user", [result])], "")
    assert converted[0]["content"][0]["content"] == [
        {"type": "text", "text": "shot"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "UE5H"}},
    ]


def test_required_tool_choice_is_any_and_prefill_is_an_assistant_turn() -> None:
    transport = AnthropicTransport(
        "smollm2",
        base_url="http://127.0.0.1:1",
        api_key="",
        tool_choice=on_user_turn("required", otherwise="auto"),
        prefill=on_user_turn("<tool_call>\n"),
    )
    body = transport.build_request([Message.user("go")], [fixed_version], "sys")
    assert body["tool_choice"] == {"type": "any"}
    assert body["system"] == "sys"
    assert body["messages"][-1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "<tool_call>\n"}],
    }
    later = [
        Message.user("go"),
        Message("assistant", [ToolUseBlock("t", "fixed_version", {})]),
        Message("user", [ToolResultBlock("t", "0.32a0")]),
    ]
    body = transport.build_request(later, [fixed_version], "sys")
    assert body["tool_choice"] == {"type": "auto"}
    assert body["messages"][-1]["role"] == "user"


def test_thinking_budget_must_fit_below_max_tokens() -> None:
    with pytest.raises(ConfigError, match="thinking_budget"):
        AnthropicTransport("claude-sonnet-4-5", max_tokens=1000, thinking_budget=2000)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "signature", "reasoning"),
    [
        pytest.param(OURS, "EpgCCkYIBxgCKkBzd2Fy", "The user asks which build", id="ours"),
        conformance(THEIRS, "EoQDCm0IDhgCKkCDzGs2", "The user wants me to:", id="theirs"),
    ],
)
async def test_headers_carry_key_and_version_and_signature_arrives_as_reasoning(
    name: str, signature: str, reasoning: str
) -> None:
    (first, _) = cassette(name)
    seen: list[httpx.Headers] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers)
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=first.body
        )

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    transport = AnthropicTransport("claude-haiku-4-5", api_key="sk-ant-xyz", client=client)
    events: list[Any] = [e async for e in transport.stream([Message.user("x")], [], "")]
    assert seen[0]["x-api-key"] == "sk-ant-xyz"
    assert seen[0]["anthropic-version"] == "2023-06-01"
    signatures = [e.signature for e in events if isinstance(e, ReasoningDelta) and e.signature]
    assert len(signatures) == 1 and signatures[0].startswith(signature)
    turn = assemble(events)
    assert turn.reasoning.startswith(reasoning)
    assert transport.context_window == 200_000
