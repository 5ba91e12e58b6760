import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from swarm import (
    ImageBlock,
    Message,
    ProviderError,
    ReasoningBlock,
    TextBlock,
    TextDelta,
    ToolResultBlock,
    ToolUseBlock,
    TransportError,
    tool,
)
from swarm.transports import OpenAITransport, RetryPolicy, on_user_turn, openai_messages
from swarm.transports._http import tls_context

from .recordings import assemble, cassette, conformance, sse_body


@tool
async def get_capital(country: str) -> str:
    """Return the capital of a country."""
    return "London"


def mock_client(handler: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def sse_response(name: str) -> httpx.Response:
    return httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=sse_body(name)
    )


def drop_none_content(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in m.items() if not (k == "content" and v is None)} for m in messages]


@pytest.mark.parametrize(
    ("name", "country", "call_id", "capital"),
    [
        ("openai-chat__capital-tool-then-answer.yaml", "France", "call_swarmCapital0001", "Paris"),
        conformance(
            "openai-chat-stream__tool-call-split-args__usage-chunk__gpt-4o-mini.vcr.yaml",
            "UK",
            "call_ZR5UUuTt3pf61kjwAJIYdVMj",
            "London",
        ),
    ],
)
def test_history_converts_to_the_messages_openai_recorded(
    name: str, country: str, call_id: str, capital: str
) -> None:
    (first, second) = cassette(name)
    history = [
        Message.user(first.request["messages"][0]["content"]),
        Message("assistant", [ToolUseBlock(call_id, "get_capital", {"country": country})]),
        Message("user", [ToolResultBlock(call_id, capital)]),
    ]
    assert openai_messages(history[:1], "") == first.request["messages"]
    assert openai_messages(history, "") == second.request["messages"]


@pytest.mark.parametrize(
    ("name", "calls"),
    [
        (
            "openai-chat__parallel-tool-calls__multi-turn.yaml",
            [
                ("call_swarmRegion00000001", "get_region", "Kansai"),
                ("call_swarmMascot0000002", "get_mascot", "a deer"),
            ],
        ),
        conformance(
            "openai-chat-stream__parallel-tool-calls__multi-turn__gpt-4o.vcr.yaml",
            [
                ("call_q2UyBRP7eXNTzAoR8lEhjc9Z", "get_country", "Mexico"),
                ("call_b51ijcpFkDiTQG1bQzsrmtW5", "get_product_name", "Pydantic AI"),
            ],
        ),
    ],
)
def test_parallel_tool_results_follow_their_assistant_message_in_order(
    name: str, calls: list[tuple[str, str, str]]
) -> None:
    recorded = cassette(name)
    history = [
        Message.user(recorded[0].request["messages"][0]["content"]),
        Message("assistant", [ToolUseBlock(cid, tool_name, {}) for cid, tool_name, _ in calls]),
        Message("user", [ToolResultBlock(cid, result) for cid, _, result in calls]),
    ]
    converted = drop_none_content(openai_messages(history, ""))
    assert converted == recorded[1].request["messages"]


def test_system_prompt_comes_first_and_reasoning_and_details_stay_home() -> None:
    history = [
        Message.user("hi"),
        Message("assistant", [ReasoningBlock("secret thoughts", "sig"), TextBlock("hello")]),
        Message("user", [ToolResultBlock("c1", "out", details={"private": True})]),
    ]
    converted = openai_messages(history, "Be brief.")
    assert converted[0] == {"role": "system", "content": "Be brief."}
    assert converted[2] == {"role": "assistant", "content": "hello"}
    assert "secret" not in json.dumps(converted)
    assert "private" not in json.dumps(converted)


def test_images_in_tool_results_are_hoisted_into_a_user_message() -> None:
    png = b"\x89PNG fake"
    history = [
        Message("assistant", [ToolUseBlock("c1", "shot", {})]),
        Message(
            "user",
            [ToolResultBlock("c1", [TextBlock("a screenshot"), ImageBlock("image/png", png)])],
        ),
    ]
    _, tool_message, user = openai_messages(history, "")
    assert tool_message["role"] == "tool"
    assert tool_message["tool_call_id"] == "c1"
    assert tool_message["content"].startswith("a screenshot")
    assert user["role"] == "user"
    image = [part for part in user["content"] if part["type"] == "image_url"]
    assert image == [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORyBmYWtl"}}
    ]


def test_request_streams_with_usage_and_offers_tools() -> None:
    transport = OpenAITransport("gpt-4o-mini", api_key="k", max_tokens=100, temperature=0)
    body = transport.build_request([Message.user("hi")], [get_capital], "sys")
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_completion_tokens"] == 100
    assert body["temperature"] == 0
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_capital",
                "description": "Return the capital of a country.",
                "parameters": get_capital.input_schema,
            },
        }
    ]
    assert "tool_choice" not in body


def test_compatible_server_gets_max_tokens_and_extra_body_last() -> None:
    transport = OpenAITransport(
        "qwen", base_url="http://127.0.0.1:1/v1", max_tokens=12, extra_body={"seed": 7}
    )
    body = transport.build_request([Message.user("hi")], [], "")
    assert body["max_tokens"] == 12
    assert body["seed"] == 7
    assert "tools" not in body and "tool_choice" not in body


def test_prefill_and_tool_choice_apply_on_the_user_turn_only() -> None:
    transport = OpenAITransport(
        "smollm2",
        base_url="http://127.0.0.1:1/v1",
        tool_choice=on_user_turn("required", otherwise="auto"),
        prefill=on_user_turn("<tool_call>\n"),
    )
    first = transport.build_request([Message.user("weather?")], [get_capital], "")
    assert first["tool_choice"] == "required"
    assert first["messages"][-1] == {"role": "assistant", "content": "<tool_call>\n"}
    after_tools = [
        Message.user("weather?"),
        Message("assistant", [ToolUseBlock("c1", "get_capital", {"country": "UK"})]),
        Message("user", [ToolResultBlock("c1", "London")]),
    ]
    later = transport.build_request(after_tools, [get_capital], "")
    assert later["tool_choice"] == "auto"
    assert later["messages"][-1]["role"] == "tool"


@pytest.mark.anyio
async def test_prefill_text_is_not_emitted_as_model_text() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return sse_response("openai-chat__refusal-deltas.sse.txt")

    async with OpenAITransport("m", api_key="k", client=mock_client(handler), prefill="Sure:") as t:
        events = [e async for e in t.stream([Message.user("x")], [], "")]
    text = "".join(e.delta for e in events if isinstance(e, TextDelta))
    assert text == "I can't help with picking that lock."


@pytest.mark.anyio
async def test_api_key_comes_from_the_environment_and_goes_in_the_header(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-1234")
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["authorization"])
        return sse_response("openai-chat__finish_reason-length.sse.txt")

    transport = OpenAITransport("gpt-4o", client=mock_client(handler))
    turn = assemble([e async for e in transport.stream([Message.user("x")], [], "")])
    assert seen == ["Bearer sk-from-env-1234"]
    assert turn.text == "Once"
    assert "sk-from-env" not in repr(transport)


@pytest.mark.anyio
async def test_the_api_key_never_appears_in_an_error(no_wait: RetryPolicy) -> None:
    secret = "sk-live-very-secret-key"

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"error": {"message": f"bad key {secret}"}})

    transport = OpenAITransport("gpt-4o", api_key=secret, client=mock_client(handler))
    with pytest.raises(ProviderError) as caught:
        _ = [e async for e in transport.stream([Message.user("x")], [], "")]
    assert secret not in str(caught.value)
    assert caught.value.status == 401


@pytest.mark.anyio
async def test_missing_key_is_named_in_an_auth_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert "authorization" not in request.headers
        return httpx.Response(401, json={"error": {"message": "no key"}})

    transport = OpenAITransport("gpt-4o", api_key="", client=mock_client(handler))
    with pytest.raises(TransportError, match="OPENAI_API_KEY"):
        _ = [e async for e in transport.stream([Message.user("x")], [], "")]


@pytest.mark.anyio
async def test_copy_changes_the_model_and_shares_the_connection_pool() -> None:
    models: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        models.append(json.loads(request.content)["model"])
        return sse_response("openai-chat__finish_reason-length.sse.txt")

    base = OpenAITransport("gpt-4o", api_key="k", client=mock_client(handler))
    mini = base.copy(model="gpt-4o-mini")
    for transport in (base, mini):
        _ = [e async for e in transport.stream([Message.user("x")], [], "")]
    assert models == ["gpt-4o", "gpt-4o-mini"]
    assert mini.context_window == 128_000
    assert OpenAITransport("gpt-4.1", api_key="k").context_window == 1_047_576
    assert OpenAITransport("my-own-model", api_key="k").context_window == 128_000


@pytest.mark.anyio
async def test_transports_share_one_tls_setup_that_follows_ssl_cert_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    clients = []
    for _ in range(2):  # a batch makes a transport per task
        transport = OpenAITransport("gpt-4o", api_key="k")
        clients.append(transport._pool.get(transport.timeouts))
        await transport.aclose()
    contexts = {id(c._transport._pool._ssl_context) for c in clients}  # type: ignore[attr-defined]
    assert contexts == {id(tls_context())}  # the roots were loaded once
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "roots.pem"))  # not there
    with pytest.raises(FileNotFoundError):  # the variable is still read
        OpenAITransport("gpt-4o", api_key="k")._pool.get(transport.timeouts)
