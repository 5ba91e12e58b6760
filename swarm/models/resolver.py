"""Role models: what a role's ``model:`` names, and one pooled transport per model.

A role's ``model`` is resolved in this order:

- ``inherit``, ``default`` (or no model) mean the run's model: the transport the team is
  run with;
- an alias: the team's or scenario's ``models:`` map first, then ``BUILTIN_ALIASES``
  (``sonnet``, ``opus``, ``haiku``: current Anthropic models); an alias may name another;
- a bare ``claude-...`` id is ``anthropic:<id>``, a bare ``gpt-...`` id ``openai:<id>``, and
  another id the model registry knows (``o3-mini``) is its provider's;
- anything else is a model spec for ``transport_from_spec`` (``openai:gpt-4.1-mini``).

``ModelResolver`` builds each distinct spec's transport once per run, so the roles that
share a model share its connection pool. A run whose transport is not a real provider (a
scripted model, a replayed cassette, a test stub) answers for every role: role models are
then resolved and checked (a bad one is still an error) but never called, and ``used``
records them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType

from swarm.errors import ConfigError
from swarm.models.registry import lookup_model
from swarm.models.spec import check_model_spec, transport_from_spec
from swarm.transports.base import (
    ClosableTransport,
    CompletionTransport,
    WrapsTransport,
)
from swarm.transports.options import API_KEY_VARIABLES

__all__ = [
    "BUILTIN_ALIASES",
    "INHERIT",
    "ModelResolver",
    "is_provider",
    "key_variable",
    "missing_key",
    "model_spec",
    "spec_for",
]

BUILTIN_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "sonnet": "anthropic:claude-sonnet-4-5",
        "opus": "anthropic:claude-opus-4-5",
        "haiku": "anthropic:claude-haiku-4-5",
    }
)
"""Claude Code's model names and the Anthropic models they stand for."""

INHERIT = frozenset({"inherit", "default"})
"""Model names that mean the run's model."""

_BARE = (("claude-", "anthropic"), ("gpt-", "openai"))
_KEYS = API_KEY_VARIABLES


def model_spec(name: str, aliases: Mapping[str, str] = MappingProxyType({})) -> str | None:
    """The model spec a role's ``model`` names; ``None`` for the run's model.

    Raises ``ConfigError`` for an alias that leads back to itself.
    """
    seen: list[str] = []
    spec = name.strip()
    while True:
        if not spec or spec in INHERIT:
            return None
        target = aliases.get(spec, BUILTIN_ALIASES.get(spec))
        if target is None:
            break
        seen.append(spec)
        if target.strip() in seen:
            chain = " -> ".join([*seen, target.strip()])
            raise ConfigError(f"model alias loop: {chain}", field="models")
        spec = target.strip()
    if ":" not in spec and "/" not in spec:  # openai/gpt-4.1-mini is a provider's typo
        for prefix, provider in _BARE:
            if spec.startswith(prefix):
                return f"{provider}:{spec}"
        known = lookup_model(spec)  # o3-mini, chatgpt-4o-latest: a model the registry knows
        if known is not None:
            return f"{'anthropic' if known.id.startswith('claude') else 'openai'}:{spec}"
    return spec


def spec_for(name: str) -> str:
    """The model spec a ``--model`` value stands for, the way a role's ``model`` is read
    (``sonnet``, ``claude-sonnet-4-5``, ``gpt-4.1-mini``, ``openai:gpt-4.1-mini``), checked
    without building its transport. Raises ``ConfigError`` for an unknown provider (saying
    what was probably meant) or when the provider's key variable is unset."""
    spec = model_spec(name) or name.strip()
    check_model_spec(spec)
    variable = missing_key(spec)
    if variable is not None:
        shown = spec if spec == name.strip() else f"{name.strip()} ({spec})"
        raise ConfigError(
            f"the model {shown} needs an API key: set {variable} (it is not set)", field="model"
        )
    return spec


def key_variable(spec: str) -> str | None:
    """The environment variable holding the API key ``spec`` needs (``None``: none)."""
    provider = spec.partition(":")[0]
    return _KEYS.get(provider)


def missing_key(spec: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The key variable ``spec`` needs when it is unset or empty, else ``None``."""
    variable = key_variable(spec)
    env = os.environ if environ is None else environ
    return variable if variable is not None and not env.get(variable) else None


def is_provider(transport: object) -> bool:
    """Whether ``transport`` (or the one it wraps, for a recording) calls a real provider,
    as opposed to a scripted model, a replayed cassette or a test stub."""
    if isinstance(transport, WrapsTransport):
        inner: object = transport.inner
        if inner is not transport:
            return is_provider(inner)
    http = sys.modules.get("swarm.transports._http")  # none exists before it is loaded
    return http is not None and isinstance(transport, http.HTTPTransport)


class ModelResolver:
    """Resolves a role's ``model`` to a transport: one per distinct spec (pooled).

    ``transport`` is the run's (returned for ``inherit``/``default``, for ``run_spec``
    itself, and for every model when ``offline``; ``offline`` defaults to the transport
    not being a real provider). ``build(spec)`` makes a transport (default
    ``transport_from_spec``); ``wrap`` is applied to each one built (a recording).
    ``used`` maps each model name asked for to the spec it resolved to (``None``: the
    run's). Calling it raises ``ConfigError`` for a spec no provider understands.
    ``aclose()`` closes the connection pools of the transports it built, and the run's
    when ``owns_transport``.
    """

    def __init__(
        self,
        transport: CompletionTransport,
        *,
        aliases: Mapping[str, str] = MappingProxyType({}),
        run_spec: str | None = None,
        offline: bool | None = None,
        build: Callable[[str], CompletionTransport] = transport_from_spec,
        wrap: Callable[[CompletionTransport], CompletionTransport] | None = None,
        owns_transport: bool = False,
    ) -> None:
        self.transport = transport
        self.aliases = dict(aliases)
        self.run_spec = run_spec
        self.offline = not is_provider(transport) if offline is None else offline
        self.build = build
        self.wrap = wrap
        self.owns_transport = owns_transport
        self.used: dict[str, str | None] = {}
        self._pool: dict[str, CompletionTransport] = {}

    def spec_of(self, model: str) -> str | None:
        """The spec ``model`` resolves to (``None``: the run's model)."""
        spec = model_spec(model, self.aliases)
        self.used[model] = spec
        return spec

    def __call__(self, model: str) -> CompletionTransport:
        spec = self.spec_of(model)
        if spec is None or spec == self.run_spec:
            return self.transport
        if self.offline:
            # the spec is still built (cheap: no connection opens) so a bad one fails; no
            # key is needed for a model that is never called
            transport_from_spec(spec, api_key="")
            return self.transport
        if spec not in self._pool:
            built = self.build(spec)
            self._pool[spec] = self.wrap(built) if self.wrap is not None else built
        return self._pool[spec]

    async def aclose(self) -> None:
        """Close the transports this resolver built (and the run's, when it owns it)."""
        owned = [*self._pool.values(), *([self.transport] if self.owns_transport else [])]
        for transport in owned:
            await _close(transport)


async def _close(transport: object) -> None:
    if isinstance(transport, ClosableTransport):
        await transport.aclose()
    elif isinstance(transport, WrapsTransport) and isinstance(transport.inner, ClosableTransport):
        await transport.inner.aclose()
