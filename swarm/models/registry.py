"""What is known about models: context window, output limit and prices.

``lookup("gpt-4o-2024-08-06")`` finds ``gpt-4o``: a model id matches a registered id exactly,
or with a date or ``-latest`` suffix (``claude-sonnet-4-5-20250929``,
``claude-3-5-haiku-latest``), or behind an ``openai/`` or ``anthropic/`` routing prefix.
Unknown models still work everywhere: ``lookup`` returns ``None``, transports fall back to
a context window of ``DEFAULT_CONTEXT_WINDOW`` and ``estimate_cost`` to ``None`` (shown as
``cost unknown``, never a guess).

Prices are USD per million tokens, standard tier, no batch discount, one per part of a
bill: input not cached, cache reads, cache writes kept five minutes, cache writes kept an
hour, and output. The shipped figures are the providers' list prices as published on
``PRICES_AS_OF`` (Anthropic: platform.claude.com/docs/en/about-claude/pricing; OpenAI:
developers.openai.com/api/docs/pricing). A price the provider does not list (OpenAI bills
no cache writes; some older models no cached input) is ``None``: usage that needs it has
no known cost. Long-context surcharges (prompts over 200k tokens on some models) are not
modelled. Override any of them with ``default_registry.register(...)``, with
``ModelRegistry.with_prices(...)`` or with ``models:`` in a team or scenario file.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from swarm.types import Usage

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "PRICES_AS_OF",
    "ModelRegistry",
    "ModelSpec",
    "default_registry",
    "estimate_cost",
    "lookup_model",
]

DEFAULT_CONTEXT_WINDOW = 128_000
"""The context window assumed for a model the registry does not know."""

DEFAULT_MAX_OUTPUT_TOKENS = 4_096
"""The output limit assumed for a model added by its prices alone."""

PRICES_AS_OF = "2026-11-27"
"""The day the shipped prices were read from the providers' price pages."""

PRICE_FIELDS = (
    "input_price",
    "output_price",
    "cache_read_price",
    "cache_write_price",
    "cache_write_1h_price",
)
"""The price fields of ``ModelSpec`` (USD per million tokens)."""

_SUFFIX = re.compile(r"(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)")
_ROUTING_PREFIXES = ("openai/", "anthropic/")


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """One model: its id, limits and list prices (USD per million tokens, ``None``: not
    known). ``cache_write_price`` is for a write kept five minutes, ``cache_write_1h_price``
    for one kept an hour."""

    id: str
    context_window: int
    max_output_tokens: int
    input_price: float | None = None
    output_price: float | None = None
    aliases: tuple[str, ...] = ()
    cache_read_price: float | None = None
    cache_write_price: float | None = None
    cache_write_1h_price: float | None = None

    @property
    def priced(self) -> bool:
        """Whether the input and output prices are known."""
        return self.input_price is not None and self.output_price is not None

    def cost(self, usage: Usage) -> float | None:
        """The list price of ``usage`` on this model in USD, each part at its own price;
        ``None`` when a part ``usage`` has is not priced."""
        if self.input_price is None or self.output_price is None:
            return None
        total = usage.uncached_input_tokens * self.input_price
        total += usage.output_tokens * self.output_price
        write_1h = min(usage.cache_write_1h_tokens, usage.cache_write_tokens)
        for tokens, price in (
            (usage.cache_read_tokens, self.cache_read_price),
            (usage.cache_write_tokens - write_1h, self.cache_write_price),
            (write_1h, self.cache_write_1h_price),
        ):
            if tokens:
                if price is None:
                    return None
                total += tokens * price
        return total / 1_000_000

    def worst_case(self, input_tokens: int, max_output_tokens: int) -> float | None:
        """The most a request can cost: every input token at the highest input price
        (a cache write kept an hour costs more than plain input) and ``max_output_tokens``
        of output; ``None`` when the model is not priced."""
        if self.input_price is None or self.output_price is None:
            return None
        highest = max(
            p
            for p in (self.input_price, self.cache_write_price, self.cache_write_1h_price)
            if p is not None
        )
        return (input_tokens * highest + max_output_tokens * self.output_price) / 1_000_000

    def with_prices(self, **prices: float | None) -> ModelSpec:
        """A copy with the given fields replaced (``input_price=...``, ...)."""
        return dataclasses.replace(self, **prices)  # type: ignore[arg-type]


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

    def copy(self) -> ModelRegistry:
        """A registry with the same specs, to change without touching this one."""
        copy = ModelRegistry()
        copy._specs = dict(self._specs)
        return copy

    def with_prices(
        self, overrides: Mapping[str, Mapping[str, float | int | None]]
    ) -> ModelRegistry:
        """A copy where each model id in ``overrides`` has the given fields (prices in USD
        per million tokens, ``context_window``, ``max_output_tokens``) set over what is
        known of it; an unknown id is added, with the default limits. Raises ``ValueError``
        for a field ``ModelSpec`` does not have."""
        copy = self.copy()
        allowed = {*PRICE_FIELDS, "context_window", "max_output_tokens"}
        for model_id, fields in overrides.items():
            unknown = sorted(set(fields) - allowed)
            if unknown:
                raise ValueError(
                    f"model {model_id!r}: unknown field(s) {', '.join(unknown)}"
                    f" (expected some of {', '.join(sorted(allowed))})"
                )
            base = self.lookup(model_id) or ModelSpec(
                model_id, DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_OUTPUT_TOKENS
            )
            spec = dataclasses.replace(base, id=model_id, aliases=(), **fields)  # type: ignore[arg-type]
            copy._specs[model_id] = spec
        return copy

    def context_window(self, model_id: str) -> int:
        """The context window of ``model_id``, ``DEFAULT_CONTEXT_WINDOW`` when unknown."""
        spec = self.lookup(model_id)
        return spec.context_window if spec is not None else DEFAULT_CONTEXT_WINDOW

    def estimate_cost(self, model_id: str, usage: Usage) -> float | None:
        """The list price of ``usage`` on ``model_id`` in USD, ``None`` when the model or a
        price ``usage`` needs is unknown."""
        spec = self.lookup(model_id)
        return spec.cost(usage) if spec is not None else None


def _openai(
    model_id: str,
    window: int,
    output: int,
    price_in: float,
    price_out: float,
    cached: float | None,
) -> ModelSpec:
    # OpenAI bills no cache writes: its cache fills as a side effect of a request
    return ModelSpec(model_id, window, output, price_in, price_out, (), cached)


def _anthropic(
    model_id: str,
    window: int,
    output: int,
    prices: tuple[float, float, float, float, float],
    *aliases: str,
) -> ModelSpec:
    """``prices``: input, 5-minute cache write, 1-hour cache write, cache read, output, in
    the order of Anthropic's price table."""
    price_in, write, write_1h, read, price_out = prices
    return ModelSpec(model_id, window, output, price_in, price_out, aliases, read, write, write_1h)


_GPT41_WINDOW = 1_047_576
_OPUS_4 = (15.00, 18.75, 30.00, 1.50, 75.00)
_SONNET = (3.00, 3.75, 6.00, 0.30, 15.00)

default_registry = ModelRegistry(
    [
        # OpenAI: input, output, cached input
        _openai("gpt-4o", 128_000, 16_384, 2.50, 10.00, 1.25),
        _openai("chatgpt-4o-latest", 128_000, 16_384, 5.00, 15.00, None),
        _openai("gpt-4o-mini", 128_000, 16_384, 0.15, 0.60, 0.075),
        _openai("gpt-4-turbo", 128_000, 4_096, 10.00, 30.00, None),
        _openai("gpt-4.1", _GPT41_WINDOW, 32_768, 2.00, 8.00, 0.50),
        _openai("gpt-4.1-mini", _GPT41_WINDOW, 32_768, 0.40, 1.60, 0.10),
        _openai("gpt-4.1-nano", _GPT41_WINDOW, 32_768, 0.10, 0.40, 0.025),
        _openai("gpt-5", 400_000, 128_000, 1.25, 10.00, 0.125),
        _openai("gpt-5-mini", 400_000, 128_000, 0.25, 2.00, 0.025),
        _openai("gpt-5-nano", 400_000, 128_000, 0.05, 0.40, 0.005),
        _openai("o1", 200_000, 100_000, 15.00, 60.00, 7.50),
        _openai("o1-mini", 128_000, 65_536, 1.10, 4.40, 0.55),
        _openai("o3", 200_000, 100_000, 2.00, 8.00, 0.50),
        _openai("o3-mini", 200_000, 100_000, 1.10, 4.40, 0.55),
        _openai("o3-pro", 200_000, 100_000, 20.00, 80.00, None),
        _openai("o4-mini", 200_000, 100_000, 1.10, 4.40, 0.275),
        # Anthropic: input, 5m cache write, 1h cache write, cache read, output
        _anthropic("claude-3-haiku", 200_000, 4_096, (0.25, 0.30, 0.50, 0.03, 1.25)),
        _anthropic("claude-3-opus", 200_000, 4_096, _OPUS_4),
        _anthropic("claude-3-5-haiku", 200_000, 8_192, (0.80, 1.00, 1.60, 0.08, 4.00)),
        _anthropic("claude-3-5-sonnet", 200_000, 8_192, _SONNET),
        _anthropic("claude-3-7-sonnet", 200_000, 64_000, _SONNET),
        _anthropic("claude-sonnet-4", 200_000, 64_000, _SONNET, "claude-sonnet-4-0"),
        _anthropic("claude-opus-4", 200_000, 32_000, _OPUS_4, "claude-opus-4-0"),
        _anthropic("claude-opus-4-1", 200_000, 32_000, _OPUS_4),
        _anthropic("claude-sonnet-4-5", 200_000, 64_000, _SONNET),
        _anthropic("claude-haiku-4-5", 200_000, 64_000, (1.00, 1.25, 2.00, 0.10, 5.00)),
        _anthropic("claude-opus-4-5", 200_000, 64_000, (5.00, 6.25, 10.00, 0.50, 25.00)),
    ]
)
"""The registry transports consult: well-known OpenAI and Anthropic models."""


def lookup_model(model_id: str) -> ModelSpec | None:
    """``default_registry.lookup(model_id)``: the spec, or ``None`` when unknown."""
    return default_registry.lookup(model_id)


def estimate_cost(model_id: str, usage: Usage) -> float | None:
    """The list price in USD of ``usage`` on ``model_id``; ``None`` for unknown models."""
    return default_registry.estimate_cost(model_id, usage)
