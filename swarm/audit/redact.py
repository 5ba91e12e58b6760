"""Keeping secrets out of the audit log.

``redact`` returns a JSON-ready copy of a value in which the values of keys named like
secrets (``api_key``, ``password``, ``authorization``, ``token``, ``cookie``, ...) are
replaced, and in every string (dictionary keys too) anything that looks like a credential
is replaced: provider keys (``sk-...``, ``ghp_...``, ``AKIA...``, ``xoxb-...``), JWTs,
private key blocks, ``Bearer`` credentials, ``password=...`` pairs, passwords in URLs, and
long random-looking strings. Long strings are shortened; the audit record's argument hash
still covers the whole value. ``secrets`` (for instance ``environment_secrets()``: the values
of environment variables named like secrets) are replaced wherever they appear, whatever
their shape.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "REDACTED",
    "environment_secrets",
    "holds_credential",
    "redact",
    "redact_text",
    "secret_key",
]

REDACTED = "[REDACTED]"
MAX_STRING = 2000

_SECRET_WORDS = frozenset(
    {"password", "passwd", "pwd", "passphrase", "secret", "token", "authorization", "auth",
     "cookie", "credential", "credentials", "apikey", "bearer", "otp", "mfa"}
)  # fmt: skip
_SECRET_PAIRS = frozenset(
    {("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key"),
     ("session", "id"), ("client", "secret"), ("signing", "key")}
)  # fmt: skip
_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z])(?=[A-Z])")

_TOKENS = re.compile(
    "|".join(
        [
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
            r"\bsk-[A-Za-z0-9_\-]{16,}",
            r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",
            r"\bgh[pousr]_[A-Za-z0-9]{20,}",
            r"\bgithub_pat_[A-Za-z0-9_]{20,}",
            r"\bglpat-[A-Za-z0-9_\-]{20,}",
            r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            r"\bAIza[0-9A-Za-z_\-]{35}",
            r"\bhf_[A-Za-z0-9]{30,}",
            r"\bnpm_[A-Za-z0-9]{36}",
            r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
        ]
    )
)
# a credential after an auth scheme; the digit keeps prose ("the token expired") intact
_SCHEMES = re.compile(r"(?i)\b(bearer|basic|token)(\s+)(?=[^\s]*\d)[A-Za-z0-9._~+/=\-]{8,}")
_PAIRS = re.compile(
    r"(?i)\b((?:api[_-]?key|access[_-]?key|secret(?:[_-]?key)?|client[_-]?secret|password|passwd"
    r"|pwd|token|auth[_-]?token|access[_-]?token)[\"']?\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s&\"',;]+)"
)
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^/\s:@]+):[^@\s/]+@")
_RANDOM = re.compile(r"[A-Za-z0-9_\-+=]{32,}")


@functools.lru_cache(maxsize=4096)  # the same few keys, in every record of every run
def secret_key(key: str) -> bool:
    """Whether a mapping key names a secret (``api_key``, ``X-Auth-Token``, ``password``)."""
    words = [w.lower() for w in _WORD_SPLIT.split(key) if w]
    if any(w in _SECRET_WORDS for w in words) or "".join(words) in _SECRET_WORDS:
        return True
    return any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words))


MIN_SECRET = 8
"""Shorter values of secret-named variables are not redacted everywhere (``1``, ``true``)."""


def environment_secrets(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values of the variables in ``environ`` named like secrets (``OPENAI_API_KEY``,
    ``GITHUB_TOKEN``, ``DB_PASSWORD``) that are long enough to find in text, longest
    first."""
    values = {v for k, v in environ.items() if secret_key(k) and len(v) >= MIN_SECRET}
    return tuple(sorted(values, key=len, reverse=True))


def holds_credential(text: str) -> bool:
    """Whether ``text`` contains something shaped like a credential: a provider key
    (``sk-...``, ``ghp_...``, ``AKIA...``), a JWT, a private key block, or a password in a
    URL."""
    return bool(_TOKENS.search(text) or _URL_PASSWORD.search(text))


def _random_looking(match: re.Match[str]) -> str:
    text = match.group()
    mixed = (
        any(c.islower() for c in text)
        and any(c.isupper() for c in text)
        and any(c.isdigit() for c in text)
    )
    return REDACTED if mixed else text


def redact_text(text: str, *, secrets: Iterable[str] = ()) -> str:
    """``text`` with every one of ``secrets`` and everything that looks like a credential
    replaced, shortened to at most ``MAX_STRING`` characters."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    text = _TOKENS.sub(REDACTED, text)
    text = _SCHEMES.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    text = _PAIRS.sub(lambda m: m.group(1) + REDACTED, text)
    text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{REDACTED}@", text)
    text = _RANDOM.sub(_random_looking, text)
    if len(text) > MAX_STRING:
        text = f"{text[:MAX_STRING]}... [{len(text) - MAX_STRING} more characters]"
    return text


def redact(value: Any, *, secrets: tuple[str, ...] = ()) -> Any:
    """A JSON-ready copy of ``value`` without secrets (see the module docstring)."""
    if isinstance(value, str):
        return redact_text(value, secrets=secrets)
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {
            _redacted_key(str(k), secrets): REDACTED
            if secret_key(str(k)) and v not in (None, "")
            else redact(v, secrets=secrets)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple | set | frozenset):
        return [redact(v, secrets=secrets) for v in value]
    return redact_text(str(value), secrets=secrets)


@functools.lru_cache(maxsize=4096)  # a record's keys are the same few, record after record
def _redacted_key(key: str, secrets: tuple[str, ...]) -> str:
    return redact_text(key, secrets=secrets)
