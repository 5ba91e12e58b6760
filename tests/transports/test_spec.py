import pytest

from swarm import ConfigError
from swarm.models.spec import register_provider, transport_from_spec
from swarm.transports import AnthropicTransport, OpenAITransport, ReplayTransport


def test_openai_spec() -> None:
    transport = transport_from_spec("openai:gpt-4.1-mini", api_key="k")
    assert isinstance(transport, OpenAITransport)
    assert (transport.model, transport.base_url) == ("gpt-4.1-mini", "https://api.openai.com/v1")


def test_anthropic_spec_passes_options_on() -> None:
    transport = transport_from_spec("anthropic:claude-sonnet-4-5", api_key="k", max_tokens=999)
    assert isinstance(transport, AnthropicTransport)
    assert (transport.model, transport.max_tokens) == ("claude-sonnet-4-5", 999)


@pytest.mark.parametrize(
    ("spec", "url", "model"),
    [
        (
            "openai-compatible:http://127.0.0.1:11434/v1:qwen2.5",
            "http://127.0.0.1:11434/v1",
            "qwen2.5",
        ),
        (
            "openai-compatible:http://localhost:11434/v1:qwen2.5:7b",
            "http://localhost:11434/v1",
            "qwen2.5:7b",
        ),
        (
            "openai-compatible:https://api.groq.com/openai/v1:openai/gpt-oss-120b",
            "https://api.groq.com/openai/v1",
            "openai/gpt-oss-120b",
        ),
        ("openai-compatible:http://[::1]:8080:smollm2", "http://[::1]:8080", "smollm2"),
        ("openai-compatible:http://gpu-box:llama3", "http://gpu-box", "llama3"),
    ],
)
def test_openai_compatible_spec_splits_url_and_model(spec: str, url: str, model: str) -> None:
    transport = transport_from_spec(spec)
    assert isinstance(transport, OpenAITransport)
    assert (transport.base_url, transport.model) == (url, model)
    assert "authorization" not in transport._headers()


@pytest.mark.parametrize(
    "spec",
    [
        "gpt-4o",
        "mistral:large",
        "openai:",
        "anthropic",
        "openai-compatible:http://127.0.0.1:11434",
        "openai-compatible:127.0.0.1:11434/v1:qwen",
        "openai-compatible:http://127.0.0.1:11434/v1",
    ],
)
def test_bad_specs_raise_a_config_error(spec: str) -> None:
    with pytest.raises(ConfigError) as caught:
        transport_from_spec(spec)
    assert caught.value.field == "model"
    assert spec.split(":")[0] in str(caught.value) or "provider" in str(caught.value)


def test_providers_can_be_registered_by_prefix_and_longest_prefix_wins(tmp_path: object) -> None:
    built: list[tuple[str, str]] = []

    def local(rest: str, **options: object) -> ReplayTransport:
        built.append(("local", rest))
        return ReplayTransport("unused.jsonl")

    def local_anthropic(rest: str, **options: object) -> ReplayTransport:
        built.append(("local:anthropic", rest))
        return ReplayTransport("unused.jsonl")

    register_provider("test-local", local)
    register_provider("test-local:anthropic", local_anthropic)
    transport_from_spec("test-local")
    transport_from_spec("test-local:smollm2")
    transport_from_spec("test-local:anthropic:smollm2")
    assert built == [("local", ""), ("local", "smollm2"), ("local:anthropic", "smollm2")]
    with pytest.raises(ValueError, match="already registered"):
        register_provider("test-local", local)


@pytest.mark.parametrize(
    ("spec", "variable"),
    [("openai:gpt-4o", "OPENAI_API_KEY"), ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY")],
)
def test_a_provider_spec_without_its_key_fails_naming_the_variable(
    spec: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(ConfigError) as caught:
        transport_from_spec(spec)
    assert variable in str(caught.value) and caught.value.field == "model"
    monkeypatch.setenv(variable, "from-the-environment")
    assert transport_from_spec(spec).model == spec.split(":", 1)[1]
    monkeypatch.delenv(variable)
    assert transport_from_spec(spec, api_key="").model == spec.split(":", 1)[1]  # said: none


def test_a_compatible_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert transport_from_spec("openai-compatible:http://127.0.0.1:8080/v1:m").model == "m"
