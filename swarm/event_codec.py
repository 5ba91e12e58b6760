"""Stream events as JSON-safe dicts, derived from the events themselves.

Every event class in ``swarm.events`` carries a stable ``type`` name (``text_delta``,
``session_end``...). Its JSON form is ``{"type": <name>, <field>: <value>, ...}`` with
one key per dataclass field, in field order; nothing here is written per event. Values
are encoded by their annotated type: numbers, strings, booleans and JSON dicts as they
are, a ``StopReason`` as its value, ``Usage`` and ``UsageNode`` as dicts of their fields,
a ``Message`` as ``Message.to_dict()``, a content block as ``block_to_dict``, a tuple as a
list, a nested event (``SubAgentEvent.event``) as its own form, and an exception as
``exception_to_dict``. Reading fills a missing field with its default, so records written
before a field existed still load; a missing field without one is a ``ValueError``.

``event_from_dict(event_to_dict(e)) == e`` for every event except ``Error`` and a
``SessionEndEvent`` with an ``error``: exceptions compare by identity, so they come back
as equal-looking exceptions (see ``exception_from_dict``). An event class whose field
type has no encoding here fails when this module is imported, not when a run records it.
"""

from __future__ import annotations

import builtins
import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, Union

from swarm import errors
from swarm.events import StreamEvent
from swarm.messages import ContentBlock, Message, block_from_dict, block_to_dict

__all__ = [
    "EVENT_TYPES",
    "event_from_dict",
    "event_to_dict",
    "exception_from_dict",
    "exception_to_dict",
]

_Encode: TypeAlias = Callable[[Any], Any]
_Decode: TypeAlias = Callable[[Any], Any]

EVENT_TYPES: Mapping[str, type[StreamEvent]] = types.MappingProxyType(
    {cls.type: cls for cls in typing.get_args(StreamEvent)}
)
"""Every event class by its ``type`` name."""

_BLOCKS: frozenset[type] = frozenset(typing.get_args(ContentBlock))


def exception_to_dict(exc: BaseException) -> dict[str, Any]:
    """An exception as ``{"type", "message", ...}`` (status and retryable for transport
    errors, error_type and retry_after for provider errors)."""
    out: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, errors.TransportError):
        out["status"] = exc.status
        out["retryable"] = exc.retryable
    if isinstance(exc, errors.ProviderError):
        out["error_type"] = exc.error_type
        out["retry_after"] = exc.retry_after
    return out


def exception_from_dict(data: dict[str, Any]) -> Exception:
    """Rebuild an exception from ``exception_to_dict`` output: the same class when that
    is a swarm error or a built-in exception, else a ``TransportError`` that names the
    original type; status and retryable flag are kept for transport errors."""
    name = str(data.get("type", "TransportError"))
    message = str(data.get("message", ""))
    status, retryable = data.get("status"), bool(data.get("retryable", False))
    if name == "ProviderError":
        return errors.ProviderError(
            message,
            status=status,
            retryable=retryable,
            error_type=data.get("error_type"),
            retry_after=data.get("retry_after"),
        )
    if name == "TransportError" or "status" in data:
        return errors.TransportError(message, status=status, retryable=retryable)
    if name in errors.__all__:
        cls = vars(errors)[name]
        if isinstance(cls, type) and issubclass(cls, errors.SwarmError):
            return cls(message)
    candidate = vars(builtins).get(name)
    if isinstance(candidate, type) and issubclass(candidate, Exception):
        try:
            return candidate(message)
        except TypeError:
            pass
    return errors.TransportError(f"{name}: {message}")


def event_to_dict(event: StreamEvent) -> dict[str, Any]:
    """Serialise one stream event to a JSON-safe dict (``{"type": ..., fields...}``)."""
    cls = type(event)
    return _write(event, _codec(cls), {"type": cls.type})


def event_from_dict(data: Mapping[str, Any]) -> StreamEvent:
    """Rebuild a stream event from ``event_to_dict`` output. Raises ``ValueError`` for an
    unknown ``type``, a missing field that has no default, a value of the wrong shape, or
    events nested deeper than Python can follow (a forged file; a run nests one level)."""
    try:
        return _event_from(data)
    except RecursionError:
        raise ValueError("the event is nested too deeply to read") from None


def _event_from(data: Mapping[str, Any]) -> StreamEvent:
    kind = data.get("type") if isinstance(data, Mapping) else None
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown event type {kind!r}")
    return cls(**_read(data, _codec(cls), f"{kind} event"))


# --- deriving the codecs from the annotations ---------------------------------------

_Field: TypeAlias = tuple[str, _Encode | None, _Decode | None, bool]
"""One field: its name, how to encode and decode it (``None``: as it is), required."""

_FIELDS: dict[type, tuple[_Field, ...]] = {}
_deriving: set[type] = set()


def _codec(cls: type) -> tuple[_Field, ...]:
    """The fields of dataclass ``cls`` with their converters, derived once."""
    found = _FIELDS.get(cls)
    if found is None:
        _deriving.add(cls)
        try:
            found = _FIELDS[cls] = _derive(cls)
        finally:
            _deriving.discard(cls)
    return found


def _derive(cls: type) -> tuple[_Field, ...]:
    hints = typing.get_type_hints(cls)
    fields: list[_Field] = []
    for f in dataclasses.fields(cls):
        encode, decode = _converters(hints[f.name], f"{cls.__name__}.{f.name}")
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        fields.append((f.name, encode, decode, required))
    return tuple(fields)


def _converters(hint: Any, where: str) -> tuple[_Encode | None, _Decode | None]:
    """How to encode and decode a value annotated ``hint`` (``None``: as it is)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType):
        present = [a for a in args if a is not type(None)]
        if set(present) == set(EVENT_TYPES.values()):
            return event_to_dict, _nested_event
        if len(present) == 1:  # X | None: None is written as null and read back
            return _converters(present[0], where)
    elif origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        encode, decode = _converters(args[0], where)
        return _sequence(encode), _tuple_of(decode)
    elif origin is dict or hint is Any or hint in (int, str, bool):
        return None, None
    elif hint is float:
        return None, float
    elif hint is Message:
        return Message.to_dict, Message.from_dict
    elif hint in _BLOCKS:
        return block_to_dict, _block_of(hint)
    elif hint is BaseException or hint is Exception:
        return exception_to_dict, exception_from_dict
    elif isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _value, hint
    elif isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _record(hint)
    raise TypeError(f"{where}: no JSON form for values of type {hint!r}")


def _record(cls: type) -> tuple[_Encode, _Decode]:
    """A plain dataclass (``Usage``, ``UsageNode``) as a dict of its fields (those it
    names in ``SPARSE_FIELDS`` only when set); missing fields take their defaults. Its
    fields are derived now, unless ``cls`` is being derived already (a tree:
    ``UsageNode.children``); then on first use."""
    if cls not in _deriving:
        _codec(cls)

    sparse: frozenset[str] = getattr(cls, "SPARSE_FIELDS", frozenset())

    def encode(value: Any) -> dict[str, Any]:
        out = _write(value, _codec(cls), {})
        for name in sparse:  # written only when set: old records keep their form
            if not out.get(name):
                out.pop(name, None)
        return out

    def decode(data: Any) -> Any:
        if not isinstance(data, Mapping):
            raise TypeError(f"{cls.__name__} must be an object, not {type(data).__name__}")
        return cls(**_read(data, _codec(cls), cls.__name__))

    return encode, decode


def _write(value: Any, fields: tuple[_Field, ...], out: dict[str, Any]) -> dict[str, Any]:
    """Add each field of ``value`` to ``out``, encoded (``None`` stays ``null``)."""
    for name, encode, _, _ in fields:
        v = getattr(value, name)
        out[name] = v if encode is None or v is None else encode(v)
    return out


def _read(data: Mapping[str, Any], fields: tuple[_Field, ...], what: str) -> dict[str, Any]:
    """The decoded values of ``fields`` in ``data`` (a missing one with a default is left
    out, so it takes the default). Raises ``ValueError`` naming ``what`` and the field."""
    values: dict[str, Any] = {}
    for name, _, decode, required in fields:
        if name not in data:
            if required:
                raise ValueError(f"{what} is missing {name!r}")
            continue
        v = data[name]
        try:
            values[name] = v if decode is None or v is None else decode(v)
        except (TypeError, KeyError, AttributeError, ValueError) as exc:
            raise ValueError(f"{what} has a bad {name!r}: {exc}") from None
    return values


def _nested_event(value: Any) -> StreamEvent:
    return _event_from(value)


def _value(member: enum.Enum) -> Any:
    return member.value


def _sequence(encode: _Encode | None) -> _Encode:
    if encode is None:
        return list
    return lambda items: [encode(item) for item in items]


def _tuple_of(decode: _Decode | None) -> _Decode:
    if decode is None:
        return tuple
    return lambda items: tuple(decode(item) for item in items)


def _block_of(kind: type) -> _Decode:
    def decode(data: Any) -> Any:
        block = block_from_dict(data)
        if not isinstance(block, kind):
            raise ValueError(f"expected a {kind.__name__} block, got {type(block).__name__}")
        return block

    return decode


for _cls in EVENT_TYPES.values():  # an event no codec can be derived for fails here
    _codec(_cls)
