"""What is known about models: context window, output limit and prices. The registry lives
in ``swarm.model_registry`` (beside the budgets that charge at its prices, below the
transports); this module keeps the names where transports and users have found them."""

from swarm.model_registry import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAX_OUTPUT_TOKENS,
    PRICE_FIELDS,
    PRICES_AS_OF,
    ModelRegistry,
    ModelSpec,
    default_registry,
    estimate_cost,
    lookup_model,
)

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "PRICES_AS_OF",
    "PRICE_FIELDS",
    "ModelRegistry",
    "ModelSpec",
    "default_registry",
    "estimate_cost",
    "lookup_model",
]
