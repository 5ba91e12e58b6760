"""What is known about models: context window, output limit and price.

``lookup("gpt-4o-2024-08-06")`` finds ``gpt-4o``: a model id matches a registered id exactly,
or with a date or ``-latest`` suffix (``claude-sonnet-4-5-20250929``,
``claude-3-5-haiku-latest``), or behind an ``openai/`` or ``anthropic/`` routing prefix.
Unknown models still work everywhere: ``lookup`` returns ``None``, transports fall back to
a context window of ``DEFAULT_CONTEXT_WINDOW`` and ``estimate_cost`` to ``None``.

Figures are the providers' published list prices (USD per million tokens, standard tier,
no caching or batch discounts) as of late 2025; register your own with
``default_registry.register(...)`` when they change or for other models.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from swarm.types import Usage

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "ModelRegistry",
    "ModelSpec",
    "default_registry",
    "estimate_cost",
    "lookup_model",
]

DEFAULT_CONTEXT_WINDOW = 128_000
"""The context window assumed for a model the registry does not know."""

_SUFFIX = re.compile(r"(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)")
_ROUTING_PREFIXES = ("openai/", "anthropic/")


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """One model: its id, limits and list price (USD per million tokens)."""

    id: str
    context_window: int
    max_output_tokens: int
    input_price: float
    output_price: float
    aliases: tuple[str, ...] = ()

    def cost(self, usage: Usage) -> float:
        """The list price of ``usage`` on this model, in USD."""
        return (
            usage.input_tokens * self.input_price + usage.output_tokens * self.output_price
        ) / 1_000_000


class ModelRegistry:
    """Model specs by id, with lenient lookup of dated and routed ids."""

    def __init__(self, specs: Iterable[ModelSpec] = ()) -> None:
        self._specs: dict[str, ModelSpec] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: ModelSpec) -> None:
        """Add ``spec`` (and its aliases), replacing any spec with the same id."""
        self._specs[spec.id] = spec
        for alias in spec.aliases:
            self._specs[alias] = spec

    def __iter__(self) -> Iterator[ModelSpec]:
        seen: set[str] = set()
        for spec in self._specs.values():
            if spec.id not in seen:
                seen.add(spec.id)
                yield spec

    def __contains__(self, model_id: object) -> bool:
        return isinstance(model_id, str) and self.lookup(model_id) is not None

    def lookup(self, model_id: str) -> ModelSpec | None:
        """The spec of ``model_id``, or ``None`` when the model is unknown."""
        for prefix in _ROUTING_PREFIXES:
            if model_id.startswith(prefix):
                model_id = model_id[len(prefix) :]
                break
        spec = self._specs.get(model_id)
        if spec is not None:
            return spec
        base, dash, suffix = model_id, "-", ""
        while dash:
            base, dash, tail = base.rpartition("-")
            suffix = f"{tail}-{suffix}" if suffix else tail
            if base and _SUFFIX.fullmatch(suffix):
                spec = self._specs.get(base)
                if spec is not None:
                    return spec
        return None

    def context_window(self, model_id: str) -> int:
        """The context window of ``model_id``, ``DEFAULT_CONTEXT_WINDOW`` when unknown."""
        spec = self.lookup(model_id)
        return spec.context_window if spec is not None else DEFAULT_CONTEXT_WINDOW

    def estimate_cost(self, model_id: str, usage: Usage) -> float | None:
        """The list price of ``usage`` on ``model_id`` in USD, ``None`` when unknown."""
        spec = self.lookup(model_id)
        return spec.cost(usage) if spec is not None else None


def _m(
    model_id: str, window: int, output: int, price_in: float, price_out: float, *aliases: str
) -> ModelSpec:
    return ModelSpec(model_id, window, output, price_in, price_out, aliases)


_GPT41_WINDOW = 1_047_576

default_registry = ModelRegistry(
    [
        # OpenAI
        _m("gpt-4o", 128_000, 16_384, 2.50, 10.00, "chatgpt-4o-latest"),
        _m("gpt-4o-mini", 128_000, 16_384, 0.15, 0.60),
        _m("gpt-4-turbo", 128_000, 4_096, 10.00, 30.00),
        _m("gpt-4.1", _GPT41_WINDOW, 32_768, 2.00, 8.00),
        _m("gpt-4.1-mini", _GPT41_WINDOW, 32_768, 0.40, 1.60),
        _m("gpt-4.1-nano", _GPT41_WINDOW, 32_768, 0.10, 0.40),
        _m("gpt-5", 400_000, 128_000, 1.25, 10.00),
        _m("gpt-5-mini", 400_000, 128_000, 0.25, 2.00),
        _m("gpt-5-nano", 400_000, 128_000, 0.05, 0.40),
        _m("o1", 200_000, 100_000, 15.00, 60.00),
        _m("o1-mini", 128_000, 65_536, 1.10, 4.40),
        _m("o3", 200_000, 100_000, 2.00, 8.00),
        _m("o3-mini", 200_000, 100_000, 1.10, 4.40),
        _m("o3-pro", 200_000, 100_000, 20.00, 80.00),
        _m("o4-mini", 200_000, 100_000, 1.10, 4.40),
        # Anthropic
        _m("claude-3-haiku", 200_000, 4_096, 0.25, 1.25),
        _m("claude-3-opus", 200_000, 4_096, 15.00, 75.00),
        _m("claude-3-5-haiku", 200_000, 8_192, 0.80, 4.00),
        _m("claude-3-5-sonnet", 200_000, 8_192, 3.00, 15.00),
        _m("claude-3-7-sonnet", 200_000, 64_000, 3.00, 15.00),
        _m("claude-sonnet-4", 200_000, 64_000, 3.00, 15.00, "claude-sonnet-4-0"),
        _m("claude-opus-4", 200_000, 32_000, 15.00, 75.00, "claude-opus-4-0"),
        _m("claude-opus-4-1", 200_000, 32_000, 15.00, 75.00),
        _m("claude-sonnet-4-5", 200_000, 64_000, 3.00, 15.00),
        _m("claude-haiku-4-5", 200_000, 64_000, 1.00, 5.00),
        _m("claude-opus-4-5", 200_000, 64_000, 5.00, 25.00),
    ]
)
"""The registry transports consult: well-known OpenAI and Anthropic models."""


def lookup_model(model_id: str) -> ModelSpec | None:
    """``default_registry.lookup(model_id)``: the spec, or ``None`` when unknown."""
    return default_registry.lookup(model_id)


def estimate_cost(model_id: str, usage: Usage) -> float | None:
    """The list price in USD of ``usage`` on ``model_id``; ``None`` for unknown models."""
    return default_registry.estimate_cost(model_id, usage)
