"""Model specs: one string names a provider and a model, e.g. in a role or scenario file.

Forms understood out of the box::

    openai:gpt-4.1-mini
    anthropic:claude-sonnet-4-5
    openai-compatible:http://127.0.0.1:11434/v1:qwen2.5:7b
    local                      (SmolLM2-135M on llama.cpp's server, started on first use)
    local:anthropic            (the same server, Anthropic dialect)

The last form is ``openai-compatible:<base URL>:<model>``: the base URL is ``http://`` or
``https://``, a host, an optional ``:port`` and an optional path *without* colons; the model
is everything after the next colon, so it may hold colons itself (``qwen2.5:7b``). Such a
server gets no API key unless ``api_key=`` is passed (a local server needs none, and the
OpenAI key must not leak to another host).

``openai:`` and ``anthropic:`` need their key: without ``api_key=`` and with the variable
unset (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``), ``transport_from_spec`` raises a
``ConfigError`` naming the variable at once, before any request is sent.

``register_provider("local", factory)`` adds a provider: the longest registered prefix
followed by ``:`` (or the whole spec) wins, so ``local`` and ``local:anthropic`` can
coexist. The factory gets the rest of the spec (``""`` when there is none) and the options.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable
from typing import Any

from swarm.errors import ConfigError
from swarm.transports.base import CompletionTransport
from swarm.transports.options import API_KEY_VARIABLES

__all__ = [
    "TransportFactory",
    "check_model_spec",
    "provider_prefixes",
    "register_provider",
    "transport_from_spec",
]

TransportFactory = Callable[..., CompletionTransport]
"""``factory(rest_of_spec, **options)`` returns a transport; raises ``ConfigError``."""

_COMPATIBLE = re.compile(
    r"(?P<url>https?://(?:\[[^\]/]+\]|[^/:\s\[\]]+)(?::\d+)?(?:/[^:\s]*)?):(?P<model>\S+)"
)
_providers: dict[str, TransportFactory] = {}


def _need_model(spec: str, model: str, example: str) -> str:
    if not model:
        raise ConfigError(f"model spec {spec!r} names no model (e.g. {example!r})", field="model")
    return model


def _need_key(spec: str, variable: str, options: dict[str, Any]) -> None:
    """A provider spec with no key to send fails now, not after an unauthenticated
    request and its retries."""
    if options.get("api_key") is None and not os.environ.get(variable):
        raise ConfigError(
            f"model spec {spec!r} needs an API key: set {variable} (it is not set)",
            field="model",
        )


# Each factory imports its provider's module (and httpx) when a transport is made.


def _openai(model: str, **options: Any) -> CompletionTransport:
    from swarm.transports.openai import OpenAITransport

    spec = f"openai:{model}"
    _need_model(spec, model, "openai:gpt-4.1-mini")
    _need_key(spec, API_KEY_VARIABLES["openai"], options)
    return OpenAITransport(model, **options)


def _anthropic(model: str, **options: Any) -> CompletionTransport:
    from swarm.transports.anthropic import AnthropicTransport

    spec = f"anthropic:{model}"
    _need_model(spec, model, "anthropic:claude-sonnet-4-5")
    _need_key(spec, API_KEY_VARIABLES["anthropic"], options)
    return AnthropicTransport(model, **options)


def _compatible(rest: str) -> re.Match[str]:
    example = "openai-compatible:http://127.0.0.1:11434/v1:qwen2.5"
    match = _COMPATIBLE.fullmatch(rest)
    # a model that reads like a port (and path) means the real model was left out
    if match is None or re.match(r"\d+(?:/|$)", match["model"]):
        raise ConfigError(
            f"model spec 'openai-compatible:{rest}' must read"
            f" openai-compatible:<http(s) base URL>:<model>, e.g. {example!r}",
            field="model",
        )
    return match


def _openai_compatible(rest: str, **options: Any) -> CompletionTransport:
    match = _compatible(rest)
    options.setdefault("api_key", "")
    from swarm.transports.openai import OpenAITransport

    return OpenAITransport(match["model"], base_url=match["url"], **options)


def register_provider(prefix: str, factory: TransportFactory, *, replace: bool = False) -> None:
    """Make ``transport_from_spec`` build ``<prefix>:<rest>`` specs with ``factory``.

    Raises ``ValueError`` if ``prefix`` is taken and ``replace`` is false.
    """
    if not prefix or prefix.endswith(":"):
        raise ValueError(f"a provider prefix must be non-empty and not end in ':': {prefix!r}")
    if prefix in _providers and not replace:
        raise ValueError(f"provider {prefix!r} is already registered")
    _providers[prefix] = factory


def provider_prefixes() -> list[str]:
    """The registered provider prefixes, sorted."""
    return sorted(_providers)


def _provider_of(spec: str) -> str:
    """The registered prefix ``spec`` starts with (the longest); raises ``ConfigError``
    naming the providers, with the spec it was probably meant to be."""
    best = ""
    for prefix in _providers:
        if (spec == prefix or spec.startswith(prefix + ":")) and len(prefix) > len(best):
            best = prefix
    if best:
        return best
    head, colon, rest = spec.partition(":")
    if not colon and "/" in spec:  # openai/gpt-4.1-mini, as other tools write it
        head, _, rest = spec.partition("/")
    close = difflib.get_close_matches(head, provider_prefixes(), n=1)
    hint = f"; did you mean '{close[0]}:{rest}'?" if close and rest else ""
    known = ", ".join(provider_prefixes())
    raise ConfigError(
        f"unknown model provider in {spec!r}: expected <provider>:<model>"
        f" with provider one of {known}{hint}",
        field="model",
    )


def check_model_spec(spec: str) -> None:
    """Check that ``spec`` names a known provider in a form it understands, without
    building its transport (``local`` would start its server). Raises ``ConfigError``."""
    spec = spec.strip()
    provider = _provider_of(spec)
    rest = spec[len(provider) + 1 :]
    if provider == "openai":
        _need_model(spec, rest, "openai:gpt-4.1-mini")
    elif provider == "anthropic":
        _need_model(spec, rest, "anthropic:claude-sonnet-4-5")
    elif provider == "openai-compatible":
        _compatible(rest)


def transport_from_spec(spec: str, **options: Any) -> CompletionTransport:
    """Build the transport a model spec names; ``options`` go to its constructor.

    Raises ``ConfigError`` for a spec with an unknown provider or without a model, and for
    a provider whose API key variable is unset when ``api_key`` is not given.
    """
    spec = spec.strip()
    best = _provider_of(spec)
    return _providers[best](spec[len(best) + 1 :], **options)


register_provider("openai", _openai)
register_provider("anthropic", _anthropic)


def _local(rest: str, **options: Any) -> CompletionTransport:
    # imported here, on the first `local` spec: swarm.local starts llama.cpp's server and
    # builds on the transports, which a plain `openai:` spec must not pay for
    from swarm.local import local_transport

    return local_transport(rest, **options)


register_provider("openai-compatible", _openai_compatible)
register_provider("local", _local)  # `local` and `local:anthropic`: swarm.local on first use
