"""What the HTTP providers share: the connection pool, timeouts, retries, errors, options."""

from __future__ import annotations

import contextlib
import functools
import json
import os
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self

import anyio
import httpx

from swarm.errors import ConfigError, TransportError
from swarm.events import StreamEvent
from swarm.messages import Message
from swarm.models.registry import default_registry
from swarm.tools import Tool
from swarm.transports.options import CacheTTL, PerRequest, Timeouts, ToolChoice, resolve_option
from swarm.transports.retry import (
    ProviderError,
    RetryPolicy,
    is_retryable_status,
    parse_retry_after,
    retrying,
)
from swarm.transports.sse import SSEEvent, SSEParser

if TYPE_CHECKING:
    import ssl

__all__ = ["HTTPTransport", "StreamDecoder", "error_details"]

_USER_AGENT = "swarm/0.1"
_DRAIN_SECONDS = 0.5


class StreamDecoder(Protocol):
    """Turns one provider's SSE events into stream events; one per model call."""

    @property
    def done(self) -> bool:
        """Whether the provider's end-of-response event has arrived."""
        ...

    def feed(self, sse: SSEEvent) -> list[StreamEvent]: ...

    def finish(self) -> list[StreamEvent]:
        """The stream ended: the final events (``IterationEnd``), or raise
        ``TransportError`` if the response was cut short."""
        ...


def error_details(payload: Any) -> tuple[str, str | None, int | None]:
    """``(message, error type or code, status)`` from a provider's error JSON, in any of
    the shapes seen (``{"error": {...}}``, ``{"type": "error", "error": {...}}``,
    ``{"message": ...}``)."""
    error = payload.get("error", payload) if isinstance(payload, dict) else payload
    if isinstance(error, str):
        return error, None, None
    if not isinstance(error, dict):
        return json.dumps(payload)[:500], None, None
    message = str(error.get("message") or json.dumps(error)[:500])
    code = error.get("code")
    kind = error.get("type") or (code if isinstance(code, str) else None)
    status = error.get("status_code") or error.get("status")
    if not isinstance(status, int):
        status = code if isinstance(code, int) else None
    return message, str(kind) if kind else None, status


def tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (certifi's roots, or those ``SSL_CERT_FILE`` or
    ``SSL_CERT_DIR`` name), made once per process and setting: each client would
    otherwise load the roots again, about 20 ms, even for an ``http://`` address (a
    batch makes a client per task)."""
    return _tls(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _tls(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    # reads the same two variables; httpcore sets the context's ALPN at each connection,
    # the same ("http/1.1") for every client made here, so sharing it changes nothing
    return httpx.create_ssl_context()


class _Pool:
    """The ``httpx.AsyncClient`` a transport and its copies share, created on first use."""

    def __init__(self, client: httpx.AsyncClient | None, max_connections: int | None) -> None:
        self._client = client
        self._owned = client is None
        self._max_connections = max_connections

    def get(self, timeouts: Timeouts) -> httpx.AsyncClient:
        if self._client is None or (self._owned and self._client.is_closed):
            self._client = httpx.AsyncClient(
                verify=tls_context(),
                timeout=httpx.Timeout(
                    connect=timeouts.connect, read=None, write=timeouts.write, pool=None
                ),
                limits=httpx.Limits(
                    max_connections=self._max_connections, max_keepalive_connections=64
                ),
            )
        return self._client

    async def aclose(self) -> None:
        if self._owned and self._client is not None:
            client, self._client = self._client, None
            await client.aclose()


class HTTPTransport(ABC):
    """The base of the HTTP providers: streams a model call over SSE with retries.

    One ``httpx.AsyncClient`` (created lazily, or the ``client`` you pass) serves every
    call, so one transport can be shared by concurrent agents; ``copy(**overrides)`` makes
    a variant (another model, other options) on the same connection pool. ``aclose()``
    closes the pool if the transport created it. The API key is never shown in ``repr``,
    logs or error messages.

    A provider subclass sets the class variables, implements ``build_request``,
    ``_auth_headers`` and ``_decoder``, and passes its own constructor arguments as
    ``args`` (``dict(locals())``) so ``copy`` can rebuild it.
    """

    provider: ClassVar[str]
    api_key_env: ClassVar[str]
    default_base_url: ClassVar[str]
    path: ClassVar[str]

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        client: httpx.AsyncClient | None,
        timeout: Timeouts | float | None,
        max_retries: int,
        retry: RetryPolicy | None,
        max_tokens: int | None,
        temperature: float | None,
        tool_choice: ToolChoice | PerRequest[ToolChoice] | None,
        prefill: str | PerRequest[str] | None,
        required_prefill: str | None,
        extra_body: dict[str, Any] | None,
        extra_headers: dict[str, str] | None,
        context_window: int | None,
        max_connections: int | None,
        args: dict[str, Any],
        cache: bool | None = None,
        cache_ttl: CacheTTL = "5m",
    ) -> None:
        self._args = {k: v for k, v in args.items() if k not in ("self", "__class__")}
        self.model = model
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self._api_key = api_key if api_key is not None else os.environ.get(self.api_key_env, "")
        self.timeouts = Timeouts.of(timeout)
        self.retry = retry if retry is not None else RetryPolicy(max_retries=max_retries)
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.tool_choice = tool_choice
        self.prefill = prefill
        self.required_prefill = required_prefill
        self.extra_body = dict(extra_body or {})
        self.extra_headers = dict(extra_headers or {})
        self.context_window = context_window or default_registry.context_window(model)
        if cache_ttl not in ("5m", "1h"):
            raise ConfigError(f"cache_ttl must be '5m' or '1h', not {cache_ttl!r}", field="cache")
        self.cache = cache
        self.cache_ttl: CacheTTL = cache_ttl
        self._pool = _Pool(client, max_connections)

    @property
    def caching(self) -> bool:
        """Whether requests ask for prompt caching: ``cache`` when set, else on at the
        provider's own API (where it pays) and off at other servers (which may reject
        the fields)."""
        return self.cache if self.cache is not None else self.base_url == self.default_base_url

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    def copy(self, **overrides: Any) -> Self:
        """The same transport with some constructor options replaced; it shares this
        transport's connection pool unless ``client`` is among the overrides."""
        new = type(self)(**{**self._args, **overrides})
        if "client" not in overrides and "max_connections" not in overrides:
            new._pool = self._pool
        return new

    async def aclose(self) -> None:
        """Close the connection pool (shared with copies) if this transport created it;
        the next call opens a new one."""
        await self._pool.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    @abstractmethod
    def build_request(
        self, messages: Sequence[Message], tools: Sequence[Tool[Any]], system: str
    ) -> dict[str, Any]:
        """The JSON body this transport sends for a call (without secrets)."""

    @abstractmethod
    def _auth_headers(self, api_key: str) -> dict[str, str]: ...

    @abstractmethod
    def _decoder(self) -> StreamDecoder: ...

    def _option_tool_choice(self, messages: Sequence[Message]) -> ToolChoice | None:
        return resolve_option(self.tool_choice, messages)

    def _option_prefill(self, messages: Sequence[Message]) -> str | None:
        return resolve_option(self.prefill, messages) or None

    async def stream(
        self, messages: list[Message], tools: list[Tool[Any]], system: str
    ) -> AsyncIterator[StreamEvent]:
        """Stream one model call: text, reasoning and tool-call events, then one
        ``IterationEnd``. Raises ``TransportError`` (a ``ProviderError`` when the provider
        reported it) once retries are spent or the failure is not retryable."""
        body = json.dumps(self.build_request(messages, tools, system), ensure_ascii=False)
        content = body.encode("utf-8")
        async for event in retrying(self.retry, lambda: self._attempt(content), what=self.provider):
            yield event

    def _headers(self) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "user-agent": _USER_AGENT,
        }
        headers.update(self.extra_headers)
        if self._api_key:
            headers.update(self._auth_headers(self._api_key))
        return headers

    def _scrub(self, text: str) -> str:
        key = self._api_key
        return text.replace(key, "***") if key and len(key) >= 4 else text

    async def _attempt(self, content: bytes) -> AsyncGenerator[StreamEvent, None]:
        timeouts = self.timeouts
        client = self._pool.get(timeouts)
        request = client.build_request(
            "POST",
            self.base_url + self.path,
            content=content,
            headers=self._headers(),
            timeout=httpx.Timeout(
                connect=timeouts.connect, read=timeouts.first_byte, write=timeouts.write, pool=None
            ),
        )
        response = await self._send(client, request)
        # httpx applies the read timeout to every socket read: first_byte covered the wait
        # for the response head, idle covers each wait for more of the body from here on
        request.extensions["timeout"] = {**request.extensions["timeout"], "read": timeouts.idle}
        chunks = response.aiter_bytes()
        try:
            if response.status_code >= 400:
                raise await self._status_error(response)
            if response.headers.get("content-type", "").startswith("application/json"):
                raise await self._not_a_stream(response)
            decoder = self._decoder()
            parser = SSEParser()
            while not decoder.done:
                chunk = await self._next_chunk(chunks)
                if chunk is None:
                    break
                for sse in parser.feed(chunk):
                    for event in decoder.feed(sse):
                        yield event
            if decoder.done:
                await self._drain(chunks)
            else:
                for sse in parser.close():
                    for event in decoder.feed(sse):
                        yield event
            for event in decoder.finish():
                yield event
        finally:
            with anyio.CancelScope(shield=True):
                aclose = getattr(chunks, "aclose", None)
                if aclose is not None:
                    with contextlib.suppress(Exception):
                        await aclose()
                await response.aclose()

    async def _drain(self, chunks: AsyncIterator[bytes]) -> None:
        """Read what follows the end-of-response event (usually just the end of the body,
        already buffered) so the connection can be reused; a server that keeps the stream
        open after it is given up on shortly, at the cost of that connection."""
        with anyio.move_on_after(_DRAIN_SECONDS), contextlib.suppress(httpx.HTTPError):
            async for _ in chunks:
                pass

    async def _send(self, client: httpx.AsyncClient, request: httpx.Request) -> httpx.Response:
        try:
            return await client.send(request, stream=True)
        except httpx.ReadTimeout:
            raise TransportError(
                f"{self.provider}: no response within {self.timeouts.first_byte:g}s",
                retryable=True,
            ) from None
        except httpx.TimeoutException as exc:
            raise TransportError(
                f"{self.provider}: timed out reaching {request.url.host} ({type(exc).__name__})",
                retryable=True,
            ) from None
        except httpx.TransportError as exc:
            raise TransportError(
                self._scrub(
                    f"{self.provider}: could not reach {request.url.host}:"
                    f" {type(exc).__name__}: {exc}"
                ),
                retryable=True,
            ) from None

    async def _next_chunk(self, chunks: AsyncIterator[bytes]) -> bytes | None:
        """The next piece of the body, ``None`` at its end; a stall or a broken connection
        is a retryable ``TransportError``."""
        try:
            return await anext(chunks)
        except StopAsyncIteration:
            return None
        except httpx.TimeoutException:
            raise TransportError(
                f"{self.provider}: the stream stalled (nothing received for"
                f" {self.timeouts.idle:g}s)",
                retryable=True,
            ) from None
        except httpx.DecodingError as exc:
            raise TransportError(f"{self.provider}: could not decode the response: {exc}") from None
        except httpx.TransportError as exc:
            raise TransportError(
                self._scrub(f"{self.provider}: the stream broke: {type(exc).__name__}: {exc}"),
                retryable=True,
            ) from None

    async def _not_a_stream(self, response: httpx.Response) -> TransportError:
        """A 200 answer in plain JSON: an error object, or a server that ignored
        ``stream: true``."""
        raw = await response.aread()
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = None
        if isinstance(payload, dict) and payload.get("error"):
            message, error_type, status = error_details(payload)
            return ProviderError(
                self._scrub(f"{self.provider} returned an error: {message}"),
                status=status,
                retryable=status is not None and is_retryable_status(status),
                error_type=error_type,
            )
        return TransportError(
            f"{self.provider}: expected an event stream but the server answered with plain"
            " JSON (does it support streaming?)"
        )

    async def _status_error(self, response: httpx.Response) -> ProviderError:
        status = response.status_code
        try:
            with anyio.fail_after(self.timeouts.idle):
                raw = await response.aread()
        except (TimeoutError, httpx.HTTPError):
            raw = b""
        try:
            message, error_type, _ = error_details(json.loads(raw))
        except ValueError:
            message, error_type = raw.decode("utf-8", "replace").strip()[:500], None
        retryable = is_retryable_status(status)
        should_retry = response.headers.get("x-should-retry", "").lower()
        if should_retry in ("true", "false"):
            retryable = should_retry == "true"
        hint = ""
        if status in (401, 403) and not self._api_key:
            hint = f" (no API key was given: set {self.api_key_env} or pass api_key=)"
        kind = f" {error_type}" if error_type else ""
        return ProviderError(
            self._scrub(f"{self.provider} returned HTTP {status}{kind}: {message or 'no details'}")
            + hint,
            status=status,
            retryable=retryable,
            error_type=error_type,
            retry_after=parse_retry_after(response.headers),
        )
