"""The MCP servers of one run: started when the run needs them, shared, stopped at its end.

``McpConnections`` holds one connection per server, made with the official SDK
(``ClientSession`` over ``stdio_client`` or ``streamable_http_client``). Each connection
lives in a task of the connections' own task group, so any agent's call may use it and a
crashed server can be started again from wherever the next call comes. A stdio server is
started through the run's sandbox (bubblewrap, Landlock, ...) with an environment built from
scratch (``command_environment``) plus the ``env`` its declaration gives: never swarm's own
environment. ``tools/list`` is cached per connection and listed again after the server says
``notifications/tools/list_changed``. A server that crashes or times out makes the call an
error naming the server and the tail of its stderr; the next call starts it again, once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.abc
import mcp_types as types
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from swarm.errors import ToolError
from swarm.mcp.config import McpHttpServer, McpServer, McpStdioServer
from swarm.sandbox import SandboxSettings, find_sandbox
from swarm.sandbox.base import Confinement
from swarm.sandbox.bubblewrap import ungated
from swarm.sandbox.cgroup import command_budget, in_budget
from swarm.sandbox.environment import command_environment
from swarm.sandbox.select import SandboxFinder

__all__ = ["McpConnections", "McpUnavailable"]

STDERR_TAIL = 1500
"""How many characters of a failed stdio server's stderr an error result quotes."""

START_TIMEOUT = 60.0
"""Seconds a server may take to start and list its tools (at least; more when its own
``timeout`` is longer): starting a Python server on a busy machine takes seconds."""

RESTARTS = 1
"""How many times a server that crashed or timed out is started again in one run."""

_CONNECTION_ERRORS = (types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT)


class McpUnavailable(ToolError):
    """A server cannot be reached: it does not start, crashed, or timed out. The message
    names the server and quotes the end of its stderr."""


@dataclass(eq=False)
class _Connection:
    server: McpServer
    session: ClientSession | None = None
    tools: list[types.Tool] | None = None
    stale: bool = False
    starts: int = 0
    error: str | None = None
    stderr: TextIO | None = None
    stop: anyio.Event = field(default_factory=anyio.Event)
    lock: anyio.Lock = field(default_factory=anyio.Lock)

    def stderr_tail(self) -> str:
        if self.stderr is None:
            return ""
        try:
            self.stderr.seek(0)
            text = self.stderr.read()
        except (OSError, ValueError):
            return ""
        return text[-STDERR_TAIL:].strip()

    def failure(self, what: str) -> McpUnavailable:
        tail = self.stderr_tail()
        said = f"; its stderr ends with:\n{tail}" if tail else ""
        return McpUnavailable(f"MCP server '{self.server.name}' {what}{said}")


def _without_info_fd(argv: tuple[str, ...], fds: tuple[int, ...]) -> tuple[str, ...]:
    """``argv`` without bubblewrap's ``--info-fd N`` for the descriptors in ``fds``, and
    without the gate that holds the command until its process cap is set (``GATE``), but
    with the limits it sets.

    The SDK starts a stdio server without passing descriptors; the info descriptor only lets
    swarm stop a command's namespace early, and the server's namespace ends with it anyway
    (bubblewrap runs it ``--die-with-parent``, and the SDK kills the server's process group).
    Without the gate the server runs at once, with its other resource limits. The
    seccomp filter (``--seccomp N``) is kept: bash opens it for bubblewrap from this
    process's descriptor, which stays open as long as the launch. That bash runs outside
    the sandbox, so it runs ``-p``: it reads no ``BASH_ENV`` the server's environment
    names (a file in the workspace would otherwise run unconfined).
    """
    out: list[str] = []
    skip = False
    opens: list[str] = []
    for index, word in enumerate(argv):
        if skip:
            skip = False
            continue
        passed = index + 1 < len(argv) and argv[index + 1] in map(str, fds)
        if word == "--info-fd" and passed:
            skip = True
            continue
        if word == "--seccomp" and passed:
            opens.append(f"{argv[index + 1]}</proc/{os.getpid()}/fd/{argv[index + 1]}")
        if word == "--":  # the command itself is left as it is, but for the gate
            command = argv[index + 1 :]
            out.extend(("--", *(ungated(command, fds) or command)))
            break
        out.append(word)
    if opens:
        out[:0] = ["bash", "--norc", "-p", "-c", f'exec "$@" {" ".join(opens)}', "swarm-seccomp"]
    return tuple(out)


class McpConnections:
    """The MCP servers of one run, by name; use as ``async with``.

    A server starts on its first ``list_tools`` or ``call`` and is shared by every caller;
    leaving the context stops them all. ``workspace`` is the stdio servers' working
    directory and the one writable directory of their sandbox; ``hidden`` are paths they
    must not see (run records); ``readonly`` paths they see read-only (the run's protected
    paths); ``sandbox`` and ``find`` choose the sandbox tier (a server's
    ``network`` setting is used in place of the settings' network); ``environ`` is where
    ``command_environment`` reads ``PATH``, ``HOME`` and ``LANG`` (default: this process).
    """

    def __init__(
        self,
        servers: Mapping[str, McpServer],
        *,
        workspace: Path,
        hidden: tuple[Path, ...] = (),
        readonly: tuple[Path, ...] = (),
        sandbox: SandboxSettings | None = None,
        find: SandboxFinder = find_sandbox,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.servers = dict(servers)
        self.workspace = Path(workspace)
        self.hidden = hidden
        self.readonly = readonly
        self.settings = sandbox or SandboxSettings()
        self.find = find
        self.environ = environ
        self._connections = {name: _Connection(server) for name, server in self.servers.items()}
        self._group: anyio.abc.TaskGroup | None = None
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> McpConnections:
        self._group = await self._stack.enter_async_context(anyio.create_task_group())
        return self

    async def __aexit__(self, *exc: object) -> None:
        for connection in self._connections.values():
            connection.stop.set()
        self._group = None
        try:
            await self._stack.__aexit__(None, None, None)
        finally:
            for connection in self._connections.values():
                if connection.stderr is not None:
                    connection.stderr.close()

    def _connection(self, name: str) -> _Connection:
        try:
            return self._connections[name]
        except KeyError:
            known = ", ".join(self._connections) or "none"
            raise McpUnavailable(f"no MCP server '{name}' (declared: {known})") from None

    async def list_tools(self, name: str) -> list[types.Tool]:
        """The tools server ``name`` offers (cached; listed again after ``list_changed``).

        Starts the server if it is not running. Raises ``McpUnavailable`` when it cannot.
        """
        connection = self._connection(name)
        session = await self._session(connection)
        if connection.tools is None or connection.stale:
            connection.stale = False
            try:
                connection.tools = await self._list(connection, session)
            except Exception as exc:
                raise self._broken(connection, f"failed to list its tools ({exc})") from None
        return connection.tools

    async def _list(self, connection: _Connection, session: ClientSession) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        with anyio.fail_after(max(START_TIMEOUT, connection.server.timeout)):
            while True:
                params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await session.list_tools(params=params)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    return tools

    async def call(
        self,
        name: str,
        tool: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressFnT | None = None,
    ) -> types.CallToolResult:
        """Call ``tool`` of server ``name``; the server's own error results come back as
        results with ``is_error``. Raises ``McpUnavailable`` when the server cannot be
        reached, crashed or timed out (it is started again on the next call, once), and
        ``ToolError`` for an error response (an unknown tool, invalid arguments)."""
        connection = self._connection(name)
        session = await self._session(connection)
        try:
            result = await session.call_tool(
                tool,
                arguments,
                read_timeout_seconds=connection.server.timeout,
                progress_callback=progress,
            )
        except MCPError as exc:
            if exc.error.code in _CONNECTION_ERRORS:
                raise self._broken(connection, f"failed during the call ({exc})") from None
            raise ToolError(f"MCP server '{name}' refused the call: {exc}") from None
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise self._broken(connection, f"failed during the call ({exc!r})") from None
        if not isinstance(result, types.CallToolResult):
            raise ToolError(f"MCP server '{name}' answered with an unexpected result")
        return result

    def _broken(self, connection: _Connection, what: str) -> McpUnavailable:
        """Mark ``connection`` for a restart; the error the call gets."""
        error = connection.failure(what)
        connection.stop.set()
        connection.session = None
        return error

    async def _session(self, connection: _Connection) -> ClientSession:
        async with connection.lock:
            if connection.session is not None:
                return connection.session
            if connection.starts > RESTARTS:
                raise connection.failure(
                    f"is not started again: it failed {connection.starts} times in this run"
                    + (f" (last: {connection.error})" if connection.error else "")
                )
            return await self._start(connection)

    async def _start(self, connection: _Connection) -> ClientSession:
        if self._group is None:
            raise McpUnavailable("the MCP connections are not open (use 'async with')")
        connection.starts += 1
        connection.stop = anyio.Event()
        connection.error = None
        connection.tools = None
        if connection.stderr is not None:
            connection.stderr.close()
        # Kept open after the server stops, so a failure's error can quote it.
        connection.stderr = tempfile.TemporaryFile("w+")  # noqa: SIM115
        ready = anyio.Event()
        self._group.start_soon(self._serve, connection, ready)
        await ready.wait()
        if connection.session is None:
            raise connection.failure(f"did not start: {connection.error or 'no reason given'}")
        return connection.session

    async def _serve(self, connection: _Connection, ready: anyio.Event) -> None:
        """Hold one connection open until it is stopped or breaks.

        A connection being torn down may outlive the start of the next one (a server that
        hangs takes a while to stop), so it only ever clears what it set itself.
        """
        stop = connection.stop
        session: ClientSession | None = None
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(connection))

                async def on_message(message: Any) -> None:
                    if isinstance(message, types.ToolListChangedNotification):
                        connection.stale = True

                session = await stack.enter_async_context(
                    ClientSession(read, write, message_handler=on_message)
                )
                with anyio.fail_after(max(START_TIMEOUT, connection.server.timeout)):
                    await session.initialize()
                if not stop.is_set():
                    connection.session = session
                ready.set()
                await stop.wait()
        except Exception as exc:
            if connection.stop is stop:
                connection.error = _describe(exc)
        finally:
            if session is not None and connection.session is session:
                connection.session = None
            ready.set()

    @contextlib.asynccontextmanager
    async def _transport(self, connection: _Connection) -> AsyncIterator[Any]:
        server = connection.server
        if isinstance(server, McpHttpServer) and server.transport == "sse":
            async with sse_client(server.url, headers=dict(server.headers)) as streams:
                yield streams
            return
        if isinstance(server, McpHttpServer):
            client = create_mcp_http_client(headers=dict(server.headers))
            async with client, streamable_http_client(server.url, http_client=client) as streams:
                yield streams
            return
        assert connection.stderr is not None
        with self._launch(server) as parameters:
            async with stdio_client(parameters, errlog=connection.stderr) as streams:
                yield streams

    @contextlib.contextmanager
    def _launch(self, server: McpStdioServer) -> Any:
        """The SDK's parameters for starting ``server`` in the sandbox."""
        # A server lives as long as the run: a CPU limit would end it after so much work.
        limits = dataclasses.replace(self.settings.limits, cpu=None)
        settings = dataclasses.replace(self.settings, network=server.network, limits=limits)
        sandbox = self.find(settings)
        env = command_environment(settings.env, environ=self.environ) | dict(server.env)
        # The server and all it starts share one memory and process budget (a cgroup).
        with command_budget(limits) as budget:
            confinement = Confinement(
                self.workspace.resolve(),
                network=server.network,
                env=env,
                readonly=self.readonly,
                hidden=self.hidden,
                readable=_declared_paths(server.command, server.args),
                limits=budget.per_process,
                read=settings.read,
                tmpfs_size=settings.tmpfs_size,
                cgroup=budget.join,
            )
            with sandbox.launch((server.command, *server.args), confinement) as bare:
                launch = in_budget(bare, budget)
                argv = _without_info_fd(launch.argv, launch.pass_fds)
                yield StdioServerParameters(
                    command=argv[0],
                    args=list(argv[1:]),
                    env=dict(launch.env),
                    cwd=server.cwd if sandbox.tier == "none" and server.cwd else launch.cwd,
                )


def _describe(exc: BaseException) -> str:
    """One line for an exception, unwrapping the groups task groups raise."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def _declared_paths(command: str, args: Sequence[str]) -> tuple[Path, ...]:
    """The files a server's declaration names by absolute path (its program, a script):
    readable in the sandbox even where it would hide them (a project in ``/tmp``)."""
    return tuple(
        Path(word) for word in (command, *args) if os.path.isabs(word) and Path(word).exists()
    )
