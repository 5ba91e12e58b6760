"""Role models: aliases, ``inherit``, bare ids, one pooled transport per model, and each
request of a team reaching the right server with the right model id."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from swarm import (
    AgentSpec,
    AnthropicTransport,
    CompletionTransport,
    ConfigError,
    OpenAITransport,
    SessionEndEvent,
    StopReason,
    Team,
    run_team,
)
from swarm.models.resolver import (
    BUILTIN_ALIASES,
    ModelResolver,
    is_provider,
    missing_key,
    model_spec,
)
from swarm.models.spec import transport_from_spec
from swarm.scenario import load_scenario, run_scenario
from swarm.testing import StubTransport
from swarm.transports import RecordingTransport

from .server import LLMServer, Received, Reply

# --- what a role's model names --------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "spec"),
    [
        ("sonnet", "anthropic:claude-sonnet-4-5"),
        ("opus", "anthropic:claude-opus-4-5"),
        ("haiku", "anthropic:claude-haiku-4-5"),
        ("inherit", None),
        ("default", None),
        ("claude-sonnet-4-5-20250929", "anthropic:claude-sonnet-4-5-20250929"),
        ("gpt-4o-mini", "openai:gpt-4o-mini"),
        ("o3-mini", "openai:o3-mini"),
        ("openai:gpt-4.1-mini", "openai:gpt-4.1-mini"),
        (
            "openai-compatible:http://127.0.0.1:8/v1:qwen",
            "openai-compatible:http://127.0.0.1:8/v1:qwen",
        ),
    ],
)
def test_a_role_model_names_a_spec(name: str, spec: str | None) -> None:
    assert model_spec(name) == spec


def test_team_aliases_come_before_the_built_in_ones_and_may_chain() -> None:
    aliases = {"sonnet": "openai:gpt-4.1", "fast": "cheap", "cheap": "gpt-4.1-nano"}
    assert model_spec("sonnet", aliases) == "openai:gpt-4.1"
    assert model_spec("fast", aliases) == "openai:gpt-4.1-nano"
    assert model_spec("opus", aliases) == BUILTIN_ALIASES["opus"]


def test_an_alias_loop_is_an_error() -> None:
    with pytest.raises(ConfigError, match="model alias loop: a -> b -> a"):
        model_spec("a", {"a": "b", "b": "a"})


def test_the_key_a_spec_needs_is_named_when_missing() -> None:
    assert missing_key("anthropic:claude-haiku-4-5", {}) == "ANTHROPIC_API_KEY"
    assert missing_key("openai:gpt-4o", {"OPENAI_API_KEY": "sk"}) is None
    assert missing_key("openai-compatible:http://127.0.0.1:1/v1:m", {}) is None


# --- the resolver ----------------------------------------------------------------------


def test_one_transport_per_model_spec() -> None:
    run = OpenAITransport("gpt-4.1", api_key="k")
    built: list[str] = []

    def build(spec: str) -> CompletionTransport:
        built.append(spec)
        return transport_from_spec(spec, api_key="k")

    resolver = ModelResolver(run, aliases={"fast": "gpt-4o-mini"}, build=build)
    first = resolver("fast")
    assert resolver("openai:gpt-4o-mini") is first
    assert resolver("gpt-4o-mini") is first
    assert resolver("sonnet") is not first
    assert resolver("inherit") is run and resolver("default") is run
    assert built == ["openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5"]


def test_the_run_spec_itself_is_the_run_transport() -> None:
    run = OpenAITransport("gpt-4.1", api_key="k")
    assert ModelResolver(run, run_spec="openai:gpt-4.1")("gpt-4.1") is run


def test_an_offline_run_answers_for_every_role_but_refuses_a_bad_spec() -> None:
    stub = StubTransport([])
    resolver = ModelResolver(stub)
    assert not is_provider(stub) and resolver.offline
    assert resolver("sonnet") is stub
    assert resolver.used == {"sonnet": "anthropic:claude-sonnet-4-5"}
    with pytest.raises(ConfigError, match="unknown model provider"):
        resolver("nonsense")


def test_a_recorded_provider_is_a_provider_and_a_recorded_stub_is_not(tmp_path: Path) -> None:
    provider = RecordingTransport(OpenAITransport("gpt-4.1", api_key="k"), tmp_path / "a.jsonl")
    stub = RecordingTransport(StubTransport([]), tmp_path / "b.jsonl")
    assert not ModelResolver(provider).offline
    assert ModelResolver(stub).offline
    assert (provider.model, stub.model) == ("gpt-4.1", "")


@pytest.mark.anyio
async def test_closing_the_resolver_closes_what_a_recording_wraps(tmp_path: Path) -> None:
    class Pooled(StubTransport):
        closed = False

        async def aclose(self) -> None:
            self.closed = True

    built: list[Pooled] = []

    def build(spec: str) -> CompletionTransport:
        built.append(Pooled([]))
        return built[-1]

    resolver = ModelResolver(
        OpenAITransport("gpt-4.1", api_key="k"),
        offline=False,
        build=build,
        wrap=lambda t: RecordingTransport(t, tmp_path / "c.jsonl"),
    )
    resolver("haiku")
    await resolver.aclose()
    assert [t.closed for t in built] == [True]


def test_an_offline_run_needs_no_key_for_the_models_it_never_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    stub = StubTransport([])
    resolver = ModelResolver(stub)
    assert resolver("sonnet") is stub and resolver("gpt-4.1") is stub
    online = ModelResolver(OpenAITransport("gpt-4.1-mini", api_key="k"))
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        online("sonnet")


def test_a_role_model_no_provider_understands_names_the_role_file(tmp_path: Path) -> None:
    role = AgentSpec(name="w", description="", system="s", model="mystery:x", source=tmp_path)
    lead = AgentSpec(name="lead", description="", system="s", delegates=("w",))
    with pytest.raises(ConfigError) as caught:
        run_team(Team([lead, role]), "go", transport=StubTransport([]))
    assert caught.value.field == "model" and caught.value.path == str(tmp_path)


# --- each request to the right server with the right model id -------------------------


def openai_turn(text: str = "", call: tuple[str, str, dict[str, Any]] | None = None) -> Reply:
    chunks = []
    if call is not None:
        name, call_id, args = call
        tool_call = {
            "index": 0,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [tool_call]}}]})
        finish = "tool_calls"
    else:
        chunks.append({"choices": [{"index": 0, "delta": {"content": text}}]})
        finish = "stop"
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    chunks.append({"choices": [], "usage": usage})
    body = "".join(f"data: {json.dumps({'id': 'c', **c})}\n\n" for c in chunks)
    return Reply.sse(body + "data: [DONE]\n\n")


def anthropic_turn(text: str) -> Reply:
    events = [
        (
            "message_start",
            {
                "message": {
                    "id": "m",
                    "role": "assistant",
                    "content": [],
                    "usage": {"input_tokens": 10, "output_tokens": 0},
                }
            },
        ),
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"index": 0}),
        ("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
        ("message_stop", {}),
    ]
    body = "".join(
        f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n" for kind, data in events
    )
    return Reply.sse(body)


def lead_responder(workers: list[str]) -> Callable[[Received], Reply]:
    """The lead delegates to each worker in turn (one call per turn), then answers."""

    def respond(received: Received) -> Reply:
        if received.body["model"] != "lead-model" and received.body["model"] != "gpt-4.1":
            return worker_responder(received)
        done = sum(1 for m in received.body["messages"] if m["role"] == "tool")
        if done < len(workers):
            return openai_turn(call=(workers[done], f"call_{done}", {"task": "help"}))
        return openai_turn("all done")

    return respond


def worker_responder(received: Received) -> Reply:
    if "max_tokens" in received.body and "messages" in received.body and "system" in received.body:
        return anthropic_turn(f"answer from {received.body['model']}")
    return openai_turn(f"answer from {received.body['model']}")


def model_ids(server: LLMServer) -> list[str]:
    return [r.body["model"] for r in server.requests]


@pytest.mark.anyio
async def test_each_role_request_goes_to_its_server_with_its_model_id() -> None:
    workers = ["fast-worker", "claude-worker", "bare-worker"]
    team = Team(
        [
            AgentSpec(name="lead", description="", system="lead", delegates=tuple(workers)),
            AgentSpec(name="fast-worker", description="", system="w", model="fast"),
            AgentSpec(name="claude-worker", description="", system="w", model="sonnet"),
            AgentSpec(name="bare-worker", description="", system="w", model="gpt-4o-mini"),
        ],
        models={"fast": "anthropic:claude-haiku-4-5"},
    )
    with (
        LLMServer(responder=lead_responder(workers)) as openai_lead,
        LLMServer(responder=worker_responder) as openai_server,
        LLMServer(responder=worker_responder) as anthropic_server,
    ):
        built: list[str] = []

        def build(spec: str) -> CompletionTransport:
            built.append(spec)
            provider, _, model = spec.partition(":")
            if provider == "anthropic":
                return AnthropicTransport(model, base_url=anthropic_server.url, api_key="a")
            return OpenAITransport(model, base_url=openai_server.url + "/v1", api_key="o")

        lead = OpenAITransport("gpt-4.1", base_url=openai_lead.url + "/v1", api_key="o")
        resolver = ModelResolver(lead, aliases=team.models, build=build)
        async with run_team(team, "go", transport=lead, resolve_model=resolver) as stream:
            events = [event async for event in stream]
        await resolver.aclose()
        await lead.aclose()
    end = events[-1]
    assert isinstance(end, SessionEndEvent) and end.stop_reason == StopReason.end_turn
    assert end.usage_tree is not None  # each role's usage counts under its own model
    models = {node.path: node.model for node in end.usage_tree.walk()}
    assert models == {
        "lead": "gpt-4.1",
        "lead/fast-worker#1": "claude-haiku-4-5",
        "lead/claude-worker#1": "claude-sonnet-4-5",
        "lead/bare-worker#1": "gpt-4o-mini",
    }
    assert end.usage_tree.total.input_tokens == 4 * 10 + 3 * 10
    assert model_ids(openai_lead) == ["gpt-4.1"] * 4
    assert model_ids(anthropic_server) == ["claude-haiku-4-5", "claude-sonnet-4-5"]
    assert model_ids(openai_server) == ["gpt-4o-mini"]
    assert all(r.path == "/v1/messages" for r in anthropic_server.requests)
    assert sorted(built) == [
        "anthropic:claude-haiku-4-5",
        "anthropic:claude-sonnet-4-5",
        "openai:gpt-4o-mini",
    ]


@pytest.mark.anyio
async def test_a_scenario_run_sends_each_role_to_its_own_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    team = tmp_path / "team"
    team.mkdir()
    (team / "lead.md").write_text(
        "---\ntools: []\ndelegates: fast-worker, big-worker\n---\nLead.\n"
    )
    (team / "fast-worker.md").write_text("---\ntools: Read\nmodel: fast\n---\nW.\n")
    (team / "big-worker.md").write_text("---\ntools: Read\nmodel: big\n---\nW.\n")
    with (
        LLMServer(responder=lead_responder(["fast-worker", "big-worker"])) as lead_server,
        LLMServer(responder=worker_responder) as small_server,
    ):
        (team / "team.yaml").write_text(
            f"models:\n  big: openai-compatible:{lead_server.url}/v1:big-model\n"
        )
        scenario = tmp_path / "s.yaml"
        scenario.write_text(
            f"team: team\ntask: go\nmodel: openai-compatible:{lead_server.url}/v1:lead-model\n"
            f"models:\n  fast: openai-compatible:{small_server.url}/v1:small-model\n"
        )
        cassette = tmp_path / "cassette.jsonl"
        outcome = await run_scenario(
            load_scenario(scenario),
            workspace=tmp_path / "ws",
            runs_dir=tmp_path / "runs",
            record=cassette,
        )
    assert outcome.stop_reason == StopReason.end_turn
    # every model's calls are in the cassette, and it replays with both servers gone
    recorded = [json.loads(line) for line in cassette.read_text().splitlines()]
    assert sorted(r["request"]["model"] for r in recorded) == sorted(
        ["big-model", "small-model"] + ["lead-model"] * 3
    )
    replayed = await run_scenario(
        load_scenario(scenario),
        workspace=tmp_path / "ws2",
        runs_dir=tmp_path / "runs",
        replay=cassette,
    )
    assert replayed.stop_reason == StopReason.end_turn
    assert replayed.final_text == outcome.final_text == "all done"
    # the lead's turns and the big worker's answer on one server, the fast worker's on the other
    assert sorted(model_ids(lead_server)) == ["big-model"] + ["lead-model"] * 3
    assert model_ids(small_server) == ["small-model"]
    # a role's model on another host never carries the OpenAI key
    for request in [*lead_server.requests, *small_server.requests]:
        assert "sk-must-not-leak" not in json.dumps(request.headers)
    manifest = json.loads((outcome.record_dir / "manifest.json").read_text())
    assert manifest["role_models"]["called"] is True
    assert manifest["role_models"]["roles"]["fast-worker"] == {
        "model": "fast",
        "spec": f"openai-compatible:{small_server.url}/v1:small-model",
    }
