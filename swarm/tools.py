"""Tools: a handler function bound to a name, guards, a concurrency limit and a timeout.

A handler's annotated parameters define its input schema::

    async def search(
        query: Annotated[str, Field(description="What to look for")],
        limit: Annotated[int, Field(default=10, ge=1, le=100)],
    ) -> str: ...

Arguments are validated (and coerced: ``"42"`` becomes ``42``) with pydantic before any guard
sees them, and validated again after a guard changed them.

A handler may also take the tool's ``context``, typed, in a parameter marked
``ToolContext``; like a ``Progress`` parameter it is not part of the input schema.

Here too: the guard chain (``run_guards``: every guard of a tool, in order, failing
closed), ``Field``, ``Progress`` and ``ToolContext``. The guards themselves are in
``swarm.guards`` (``PermissionGuard`` in ``guards/base``, policies in ``guards/policy``);
the loop calls a tool from ``swarm.loop.calls``; the built-in tools are in
``swarm.toolbox``, and a sub-agent as a tool in ``swarm.team.delegation``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import math
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Generic,
    Protocol,
    TypeVar,
    get_args,
    get_origin,
    overload,
)

import anyio

from swarm._suspends import may_suspend
from swarm.errors import GuardError, ToolError, ToolTimeout
from swarm.messages import ImageBlock, TextBlock
from swarm.types import ToolCallID, ToolName

if TYPE_CHECKING:
    # imported when the first tool is made (its argument model), not at ``import swarm``
    import pydantic

__all__ = [
    "MISSING",
    "Field",
    "FieldInfo",
    "Guard",
    "JSONSchema",
    "Progress",
    "Tool",
    "ToolContext",
    "ToolOutput",
    "run_guards",
    "tool",
]

T = TypeVar("T")
JSONSchema = dict[str, Any]


class Guard(Protocol):
    """What a tool calls its guards as (``PermissionGuard`` is one): ``await
    guard(tool, **arguments)`` returns the arguments to allow or raises ``GuardError``."""

    async def __call__(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]: ...


class _Missing:
    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""Sentinel: the field has no default and is required."""


@dataclass(frozen=True, slots=True)
class FieldInfo:
    """Metadata for a handler parameter, used as ``Annotated[T, FieldInfo(...)]``."""

    description: str = ""
    default: Any = MISSING
    ge: int | float | None = None
    le: int | float | None = None
    strict: bool = False


def Field(  # noqa: N802 - named like pydantic.Field on purpose
    description: str = "",
    default: Any = MISSING,
    ge: int | float | None = None,
    le: int | float | None = None,
) -> FieldInfo:
    """Annotate a handler parameter with a description, a default and numeric bounds."""
    return FieldInfo(description=description, default=default, ge=ge, le=le)


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What a handler may return: ``content`` for the model, ``details`` for programs
    and UIs only (kept in events and history, never sent to the model)."""

    content: str | list[TextBlock | ImageBlock]
    details: dict[str, Any] | None = None

    @classmethod
    def of(cls, value: Any) -> ToolOutput:
        """What a handler returned, as a ``ToolOutput``: a string or blocks as content, a
        pydantic model or a dataclass as JSON, ``None`` as empty, anything else as JSON
        (or its ``str`` when it is not JSON)."""
        return _coerce_output(value)


class Progress:
    """Reports progress of a running call; becomes ``ToolOutputDelta`` events.

    Declare a parameter annotated ``Progress`` and the loop passes one in (it is not part
    of the input schema). Safe to call from a sync handler's worker thread.
    """

    __slots__ = ("_emit", "_thread", "name", "tool_use_id")

    def __init__(self, tool_use_id: ToolCallID, name: ToolName, emit: Callable[[str, str], None]):
        self.tool_use_id = tool_use_id
        self.name = name
        self._emit = emit
        self._thread = threading.get_ident()

    def __call__(self, delta: str, key: str = "output") -> None:
        if threading.get_ident() == self._thread:
            self._emit(key, delta)
        else:
            import anyio.from_thread  # a sync handler's worker thread: loaded on use

            anyio.from_thread.run_sync(self._emit, key, delta)

    @classmethod
    def discard(cls, tool_use_id: ToolCallID = "", name: ToolName = "") -> Progress:
        """A ``Progress`` that drops what it is told (for calls outside the loop)."""
        return cls(tool_use_id, name, lambda key, delta: None)


class ToolContext:
    """Marks the handler parameter that receives the tool's ``context``, typed::

        async def shell(
            sandbox: Annotated[ToolSandbox, ToolContext], command: str
        ) -> str: ...

    Each call gets the ``context`` of the ``Tool`` called, so a copy with another
    context (the sandbox settings ``apply_policy`` binds) runs with that one, whatever
    the handler closed over. The parameter is not part of the input schema: a model
    cannot pass it. Making a ``Tool`` whose context is not an instance of the annotated
    class raises ``TypeError``.
    """


@dataclass(frozen=True, slots=True)
class _Signature:
    model: type[pydantic.BaseModel]
    schema: JSONSchema
    injected: tuple[str, ...]
    fields: tuple[str, ...]
    context: str | None = None
    """The parameter that takes the tool's context (``ToolContext``), if any."""
    context_type: Any = None
    """What that context must be an instance of (``None``: not checked)."""


def _strip_titles(node: Any) -> Any:
    """Drop pydantic's ``title`` keywords; keep properties that happen to be named title."""
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
                out[key] = {name: _strip_titles(sub) for name, sub in value.items()}
            else:
                out[key] = _strip_titles(value)
        return out
    if isinstance(node, list):
        return [_strip_titles(item) for item in node]
    return node


def _to_pydantic(meta: FieldInfo, default: Any) -> Any:
    import pydantic

    if meta.default is not MISSING:
        default = meta.default
    kwargs: dict[str, Any] = {}
    if meta.description:
        kwargs["description"] = meta.description
    if meta.ge is not None:
        kwargs["ge"] = meta.ge
    if meta.le is not None:
        kwargs["le"] = meta.le
    if meta.strict:
        kwargs["strict"] = True
    return pydantic.Field(default, **kwargs)


def _is_annotated(hint: Any) -> bool:
    return get_origin(hint) is Annotated


def _is_progress(hint: Any) -> bool:
    if _is_annotated(hint):
        hint = get_args(hint)[0]
    return bool(hint is Progress)


def _context_type(hint: Any) -> tuple[bool, Any]:
    """Whether ``hint`` marks the tool's context (``Annotated[T, ToolContext]``), and the
    class it must be an instance of (``None`` when ``T`` is not a plain class)."""
    if not _is_annotated(hint):
        return False, None
    base, *metadata = get_args(hint)
    if not any(m is ToolContext or isinstance(m, ToolContext) for m in metadata):
        return False, None
    return True, base if isinstance(base, type) else None


def _signature(fn: Callable[..., Any], name: str) -> _Signature:
    """The handler's argument model and schema, built once per distinct definition.

    Closures made by the same ``def`` (every agent tool, every toolbox's tools) share one
    entry whatever the tools are named (a tool's name is not part of its schema, and
    errors name the tool from ``Tool.name``): building a pydantic model costs milliseconds
    and about 14 KB, once per definition rather than once per sub-agent of a team.
    """
    target = inspect.unwrap(fn)
    code = getattr(target, "__code__", None)
    if code is None:
        return _build_signature(fn, name)
    key = (
        code,
        repr(getattr(target, "__defaults__", None)),
        repr(getattr(target, "__kwdefaults__", None)),
        repr(getattr(target, "__annotations__", None)),
    )
    return _cached_signature(key, fn, name)


_SIGNATURES: dict[tuple[Any, ...], _Signature] = {}


def _cached_signature(key: tuple[Any, ...], fn: Callable[..., Any], name: str) -> _Signature:
    found = _SIGNATURES.get(key)
    if found is None:
        if len(_SIGNATURES) >= 4096:
            _SIGNATURES.clear()
        found = _SIGNATURES[key] = _build_signature(fn, name)
    return found


def _build_signature(fn: Callable[..., Any], name: str) -> _Signature:
    import pydantic

    target = inspect.unwrap(fn)
    hints = inspect.get_annotations(target, eval_str=True)
    fields: dict[str, Any] = {}
    injected: list[str] = []
    context: str | None = None
    context_type: Any = None
    for pname, param in inspect.signature(target).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or pname in ("self", "cls"):
            continue
        hint: Any = hints.get(pname, Any)
        if _is_progress(hint):
            injected.append(pname)
            continue
        takes_context, of_type = _context_type(hint)
        if takes_context:
            if context is not None:
                raise TypeError(f"tool '{name}' takes its context twice: {context}, {pname}")
            context, context_type = pname, of_type
            continue
        default = ... if param.default is param.empty else param.default
        if _is_annotated(hint):
            base, *metadata = get_args(hint)
            ours = [m for m in metadata if isinstance(m, FieldInfo)]
            others = [m for m in metadata if not isinstance(m, FieldInfo)]
            if ours:
                spec = _to_pydantic(ours[-1], default)
                hint = Annotated[(base, *others)] if others else base
                fields[pname] = (hint, spec)
                continue
        fields[pname] = (hint, default)
    try:
        model = pydantic.create_model(
            f"{name}_arguments",
            __config__=pydantic.ConfigDict(extra="forbid", arbitrary_types_allowed=True),
            **fields,
        )
        schema = _strip_titles(model.model_json_schema())
    except (pydantic.PydanticUserError, pydantic.PydanticSchemaGenerationError) as exc:
        raise TypeError(f"cannot build the input schema of tool '{name}': {exc}") from exc
    schema.pop("additionalProperties", None)
    schema["additionalProperties"] = False
    if not schema.get("required"):
        schema.pop("required", None)
    return _Signature(model, schema, tuple(injected), tuple(fields), context, context_type)


def _describe_validation_error(tool_name: str, exc: pydantic.ValidationError) -> str:
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        got = err.get("input")
        shown = "" if err["type"] in ("missing", "extra_forbidden") else f" (got {got!r})"
        msg = "unexpected field" if err["type"] == "extra_forbidden" else err["msg"]
        problems.append(f"field '{where}': {msg}{shown}")
    return f"Invalid arguments for tool '{tool_name}': " + "; ".join(problems)


def _coerce_output(value: Any) -> ToolOutput:
    match value:
        case ToolOutput():
            return value
        case str():
            return ToolOutput(value)
        case None:
            return ToolOutput("")
        case TextBlock() | ImageBlock():
            return ToolOutput([value])
        case list() if value and all(isinstance(v, TextBlock | ImageBlock) for v in value):
            return ToolOutput(list(value))
        # a pydantic model: pydantic is loaded if one exists (no import for other values)
        case _ if (pd := sys.modules.get("pydantic")) and isinstance(value, pd.BaseModel):
            return ToolOutput(value.model_dump_json())
        case _ if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return ToolOutput(json.dumps(dataclasses.asdict(value), default=str))
        case _:
            try:
                return ToolOutput(json.dumps(value, default=str))
            except (TypeError, ValueError):
                return ToolOutput(str(value))


_NOTHING: Mapping[str, Any] = MappingProxyType({})


def _nothing() -> Mapping[str, Any]:
    """The default ``context`` and ``schema``: read-only, so every tool shares one."""
    return _NOTHING


@dataclass(frozen=True, slots=True)
class Tool(Generic[T]):
    """A callable the model can use.

    ``guards`` run in order before the handler; ``concurrency`` bounds how many calls of
    this tool run at once (``None``: no bound); ``timeout`` (seconds) cancels a call that
    runs too long (``None``: the agent's ``tool_timeout``; ``math.inf``: no limit).
    ``context`` is free data for whoever builds the tool (typed: ``Tool[T]``), which a
    handler parameter marked ``ToolContext`` receives on every call; ``schema``
    overrides the input schema derived from the handler.
    ``streams`` says the handler emits events while it runs (``swarm.scope.emit``, as a
    sub-agent does), so the loop runs it where they reach the stream live.
    ``idempotent`` says running a call twice does no more than running it once (reading a
    file); a call of a tool that is not (``shell``) is never re-run silently when a
    crashed run is resumed.
    """

    name: ToolName
    handler: Callable[..., Awaitable[Any]] | Callable[..., Any]
    description: str = ""
    guards: tuple[Guard, ...] = ()
    concurrency: int | None = None
    context: T = field(default_factory=_nothing)  # type: ignore[assignment]
    schema: Mapping[str, Any] = field(default_factory=_nothing)
    timeout: float | None = None
    streams: bool = False
    idempotent: bool = True
    _semaphore: anyio.Semaphore | None = field(init=False, repr=False, compare=False)
    _sig: _Signature = field(init=False, repr=False, compare=False)
    _is_async: bool = field(init=False, repr=False, compare=False)
    _stream: Callable[..., AsyncIterator[tuple[str, str]]] | None = field(
        init=False, repr=False, compare=False
    )
    _plain: bool = field(init=False, repr=False, compare=False)
    _guard_calls: tuple[Callable[..., Awaitable[Any]], ...] = field(
        init=False, repr=False, compare=False
    )
    # Whether running the guards, or the handler, can wait (see ``swarm._suspends``):
    # the loop needs no cancel scope around what cannot.
    _guards_wait: bool = field(init=False, repr=False, compare=False)
    _handler_waits: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        sem = anyio.Semaphore(self.concurrency) if self.concurrency else None
        object.__setattr__(self, "_semaphore", sem)
        object.__setattr__(self, "_sig", _signature(self.handler, self.name))
        object.__setattr__(self, "_is_async", inspect.iscoroutinefunction(self.handler))
        object.__setattr__(self, "_stream", getattr(self.handler, "stream", None))
        sig = self._sig
        if sig.context_type is not None and not isinstance(self.context, sig.context_type):
            raise TypeError(
                f"tool '{self.name}' takes its context as {sig.context_type.__name__},"
                f" not {type(self.context).__name__}"
            )
        plain = self._is_async and sem is None and not sig.injected and sig.context is None
        object.__setattr__(self, "_plain", plain and self._stream is None)
        calls = tuple(_entry(g) for g in self.guards)
        object.__setattr__(self, "_guard_calls", calls)
        object.__setattr__(self, "_guards_wait", any(map(may_suspend, calls)))
        waits = not self._plain or may_suspend(self.handler)
        object.__setattr__(self, "_handler_waits", waits)

    @property
    def input_schema(self) -> JSONSchema:
        """The JSON schema of the arguments (no ``title`` keys)."""
        return dict(self.schema) if self.schema else self._sig.schema

    @property
    def supports_streaming(self) -> bool:
        """True when the handler reports progress (a ``.stream`` generator, a ``Progress``
        parameter) or emits events while it runs (``streams``)."""
        return self.streams or bool(self._sig.injected) or self._stream is not None

    @property
    def reports_progress(self) -> bool:
        """True when the handler takes a ``Progress`` or is a ``.stream`` generator."""
        return bool(self._sig.injected) or self._stream is not None

    def copy(self, **overrides: Any) -> Tool[T]:
        """A new tool with fields replaced (its own concurrency semaphore)."""
        return dataclasses.replace(self, **overrides)

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Validate and coerce arguments; raises ``ToolError`` naming each bad field."""
        import pydantic  # loaded already: the argument model was built with it

        try:
            parsed = self._sig.model.model_validate(dict(arguments))
        except pydantic.ValidationError as exc:
            raise ToolError(_describe_validation_error(self.name, exc)) from None
        return {name: getattr(parsed, name) for name in self._sig.fields}

    async def check(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run the guard chain on validated arguments; raises ``GuardError`` to deny."""
        return await run_guards(self, arguments)

    async def execute(
        self,
        arguments: dict[str, Any],
        *,
        progress: Progress | None = None,
        timeout: float | None = None,
    ) -> ToolOutput:
        """Run the handler on already validated and checked arguments.

        Raises ``ToolTimeout`` past the timeout, and whatever the handler raises.
        """
        limit = self.time_limit(timeout)
        if limit is None or not self._handler_waits:  # a limit cannot cut what never waits
            return await self.run_handler(arguments, progress=progress)
        # A bare cancel scope (not fail_after's generator): it is on the hot path.
        with anyio.CancelScope(deadline=anyio.current_time() + limit) as scope:
            return await self.run_handler(arguments, progress=progress)
        assert scope.cancelled_caught  # only reached when the deadline cancelled the call
        raise self.timed_out(limit)

    def time_limit(self, default: float | None) -> float | None:
        """Seconds a call may run: the tool's own ``timeout``, else ``default``; ``None``
        for no limit."""
        limit = self.timeout if self.timeout is not None else default
        return None if limit is None or limit == math.inf else limit

    def timed_out(self, limit: float) -> ToolTimeout:
        """The error of a call cut at ``limit`` seconds."""
        return ToolTimeout(f"tool '{self.name}' timed out after {limit:g}s")

    async def run_handler(
        self, arguments: dict[str, Any], *, progress: Progress | None = None
    ) -> ToolOutput:
        """Run the handler with no time limit of its own (the caller holds the deadline,
        as the loop does, in the one cancel scope that also serves interrupts)."""
        if self._plain:  # the common case, without the layers below
            return _coerce_output(await self.handler(**arguments))
        return await self._execute(arguments, progress)

    async def _execute(self, arguments: dict[str, Any], progress: Progress | None) -> ToolOutput:
        if self._semaphore is None:
            return await self._invoke(arguments, progress)
        async with self._semaphore:
            return await self._invoke(arguments, progress)

    async def _invoke(self, arguments: dict[str, Any], progress: Progress | None) -> ToolOutput:
        if self._sig.injected:
            reporter = progress or Progress.discard("", self.name)
            arguments = {**arguments, **{name: reporter for name in self._sig.injected}}
        if self._sig.context is not None:
            arguments = {**arguments, self._sig.context: self.context}
        if self._stream is not None:
            return await self._invoke_stream(self._stream, arguments, progress)
        if self._is_async:
            result = await self.handler(**arguments)
        else:
            import anyio.to_thread  # a sync handler: loaded on first use

            call = functools.partial(self.handler, **arguments)
            # Abandoned on cancellation: the timeout or the run's limit answers now, even
            # while the handler loops in Python; the thread goes on until it returns.
            result = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
            if inspect.isawaitable(result):
                result = await result
        return _coerce_output(result)

    async def _invoke_stream(
        self,
        stream: Callable[..., AsyncIterator[tuple[str, str]]],
        arguments: dict[str, Any],
        progress: Progress | None,
    ) -> ToolOutput:
        chunks: list[tuple[str, str]] = []
        async for key, text in stream(**arguments):
            chunks.append((key, text))
            if progress is not None:
                progress(text, key)
        formatter = getattr(self.handler, "format_stream_result", None)
        if formatter is not None:
            return _coerce_output(formatter(chunks))
        return ToolOutput("".join(text for _, text in chunks))

    async def __call__(self, **kwargs: Any) -> str | list[TextBlock | ImageBlock]:
        """Call the tool directly: validate, run the guards, run the handler.

        Raises ``ToolError`` on bad arguments, ``GuardError`` on denial.
        """
        arguments = await self.check(self.validate(kwargs))
        return (await self.execute(arguments)).content


@overload
def tool(fn: Callable[..., Any], /) -> Tool[Any]: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    guards: tuple[Guard, ...] = (),
    concurrency: int | None = None,
    timeout: float | None = None,
    idempotent: bool = True,
) -> Callable[[Callable[..., Any]], Tool[Any]]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    guards: tuple[Guard, ...] = (),
    concurrency: int | None = None,
    timeout: float | None = None,
    idempotent: bool = True,
) -> Tool[Any] | Callable[[Callable[..., Any]], Tool[Any]]:
    """Make a ``Tool`` from a function; the description defaults to its docstring.

    Use bare (``@tool``) or with options (``@tool(concurrency=2, timeout=30)``).
    """

    def make(handler: Callable[..., Any]) -> Tool[Any]:
        return Tool(
            name=name or handler.__name__,
            handler=handler,
            description=description
            if description is not None
            else inspect.cleandoc(handler.__doc__ or ""),
            guards=guards,
            concurrency=concurrency,
            timeout=timeout,
            idempotent=idempotent,
        )

    return make(fn) if fn is not None else make


async def run_guards(tool: Tool[Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Pass validated arguments through ``tool.guards``; return what the last one allowed.

    A guard that changes the arguments has its output validated again, so no guard can
    push a value past a field's bounds. Raises ``GuardError`` naming the deciding guard
    when any guard denies, raises anything, or returns something that is not arguments.
    """
    for guard, call in zip(tool.guards, tool._guard_calls, strict=True):
        try:
            allowed = await call(tool, **arguments)
        except GuardError as exc:
            if exc.guard is None:
                exc.guard = _guard_name(guard)
            raise
        except Exception as exc:  # fail closed: a broken guard denies
            raise GuardError(
                f"guard failed: {type(exc).__name__}: {exc}", guard=_guard_name(guard)
            ) from exc
        if not isinstance(allowed, dict):
            raise GuardError(
                f"guard returned {type(allowed).__name__}, not the arguments",
                guard=_guard_name(guard),
            )
        if allowed is not arguments and allowed != arguments:
            try:
                allowed = tool.validate(allowed)
            except ToolError as exc:
                raise GuardError(
                    f"guard produced invalid arguments: {exc}", guard=_guard_name(guard)
                ) from exc
        arguments = allowed
    return arguments


def _guard_name(guard: Guard) -> str:
    return str(getattr(guard, "name", type(guard).__name__))


def _entry(guard: Guard) -> Callable[..., Awaitable[Any]]:
    """What the chain awaits for ``guard``: its ``check`` when its ``__call__`` only
    forwards there (``PermissionGuard``'s, marked ``forwards_to_check``), which saves a
    coroutine per guard per call; else the guard itself."""
    if getattr(type(guard).__call__, "forwards_to_check", False):
        check: Callable[..., Awaitable[Any]] = getattr(guard, "check")  # noqa: B009
        return check
    return guard
