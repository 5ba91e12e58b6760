import pytest

from swarm import Usage
from swarm.models.registry import (
    ModelRegistry,
    ModelSpec,
    default_registry,
    estimate_cost,
    lookup_model,
)


@pytest.mark.parametrize(
    ("model", "registered"),
    [
        ("gpt-4o", "gpt-4o"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4.1-mini", "gpt-4.1-mini"),
        ("o3-mini", "o3-mini"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("anthropic/claude-3-7-sonnet-20250219", "claude-3-7-sonnet"),
    ],
)
def test_dated_and_routed_ids_find_their_model(model: str, registered: str) -> None:
    spec = lookup_model(model)
    assert spec is not None and spec.id == registered


def test_unknown_models_still_work() -> None:
    assert lookup_model("claude-sonnet-4-6") is None
    assert lookup_model("smollm2-135m-instruct") is None
    assert default_registry.context_window("smollm2-135m-instruct") == 128_000
    assert estimate_cost("smollm2-135m-instruct", Usage(10, 10)) is None


def test_cost_uses_the_price_per_million_tokens() -> None:
    assert estimate_cost("gpt-4o-mini", Usage(1_000_000, 1_000_000)) == pytest.approx(0.75)
    assert estimate_cost("claude-sonnet-4-5", Usage(2000, 1000)) == pytest.approx(0.021)


def test_a_registry_of_your_own_models() -> None:
    registry = ModelRegistry([ModelSpec("house-model", 32_000, 4_000, 0.0, 0.0, ("house",))])
    assert registry.context_window("house") == 32_000
    assert "house-model-latest" in registry
    assert [spec.id for spec in registry] == ["house-model"]
