"""Stream events as JSON-safe dicts, losslessly: ``event_from_dict(event_to_dict(e)) == e``.

Every event type in ``swarm.events`` has a form (``{"type": "text_delta", ...}``); cassettes,
logs and stores use it. An ``Error`` event keeps its exception as type, message and, for
``TransportError``, status and retryable flag; it comes back as an equal-looking exception
(exceptions compare by identity, so only there is the round trip not ``==``): the same class
when that is a swarm error or a built-in exception, else a ``TransportError`` that names the
original type.
"""

from __future__ import annotations

import builtins
from typing import Any, assert_never

from swarm import errors
from swarm.events import (
    AgentStart,
    ContextCompacted,
    Error,
    IterationEnd,
    MessageEnd,
    ReasoningDelta,
    SessionEndEvent,
    StreamEvent,
    SubAgentEvent,
    TextDelta,
    ToolCallStart,
    ToolInputDelta,
    ToolOutputDelta,
    ToolResult,
    ToolUseStart,
    TurnEnd,
    TurnStart,
)
from swarm.messages import Message, ToolResultBlock, block_from_dict, block_to_dict
from swarm.transports.retry import ProviderError
from swarm.types import StopReason, Usage

__all__ = ["event_from_dict", "event_to_dict", "exception_from_dict", "exception_to_dict"]


def _usage(usage: Usage) -> dict[str, int]:
    return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}


def _usage_from(data: dict[str, Any]) -> Usage:
    return Usage(int(data.get("input_tokens", 0)), int(data.get("output_tokens", 0)))


def _message(message: Message) -> dict[str, Any]:
    return {"role": message.role, "content": [block_to_dict(b) for b in message.content]}


def _message_from(data: dict[str, Any]) -> Message:
    return Message(data["role"], [block_from_dict(b) for b in data["content"]])


def _result_from(data: dict[str, Any]) -> ToolResultBlock:
    block = block_from_dict(data)
    if not isinstance(block, ToolResultBlock):
        raise ValueError("a turn_end event's tool_results must be tool_result blocks")
    return block


def exception_to_dict(exc: BaseException) -> dict[str, Any]:
    """An exception as ``{"type", "message", ...}`` (status and retryable for transport
    errors, error_type and retry_after for provider errors)."""
    out: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, errors.TransportError):
        out["status"] = exc.status
        out["retryable"] = exc.retryable
    if isinstance(exc, ProviderError):
        out["error_type"] = exc.error_type
        out["retry_after"] = exc.retry_after
    return out


def exception_from_dict(data: dict[str, Any]) -> Exception:
    """Rebuild an exception from ``exception_to_dict`` output (see the module docstring)."""
    name = str(data.get("type", "TransportError"))
    message = str(data.get("message", ""))
    status, retryable = data.get("status"), bool(data.get("retryable", False))
    if name == "ProviderError":
        return ProviderError(
            message,
            status=status,
            retryable=retryable,
            error_type=data.get("error_type"),
            retry_after=data.get("retry_after"),
        )
    if name == "TransportError" or "status" in data:
        return errors.TransportError(message, status=status, retryable=retryable)
    if name in errors.__all__:
        cls = getattr(errors, name)
        if isinstance(cls, type) and issubclass(cls, errors.SwarmError):
            return cls(message)
    candidate = getattr(builtins, name, None)
    if isinstance(candidate, type) and issubclass(candidate, Exception):
        try:
            return candidate(message)
        except TypeError:
            pass
    return errors.TransportError(f"{name}: {message}")


def event_to_dict(event: StreamEvent) -> dict[str, Any]:
    """Serialise one stream event to a JSON-safe dict."""
    match event:
        case TextDelta(index=index, delta=delta):
            return {"type": "text_delta", "index": index, "delta": delta}
        case ReasoningDelta(index=index, delta=delta, signature=signature):
            out: dict[str, Any] = {"type": "reasoning_delta", "index": index, "delta": delta}
            if signature:
                out["signature"] = signature
            return out
        case ToolUseStart(index=index, tool_use_id=tid, name=name):
            return {"type": "tool_use_start", "index": index, "tool_use_id": tid, "name": name}
        case ToolInputDelta(index=index, tool_use_id=tid, partial_json=partial):
            return {
                "type": "tool_input_delta",
                "index": index,
                "tool_use_id": tid,
                "partial_json": partial,
            }
        case IterationEnd(iteration=iteration, stop_reason=stop, usage=usage):
            return {
                "type": "iteration_end",
                "iteration": iteration,
                "stop_reason": stop.value,
                "usage": _usage(usage),
            }
        case Error(exception=exc):
            return {"type": "error", "exception": exception_to_dict(exc)}
        case ToolOutputDelta(tool_use_id=tid, name=name, key=key, delta=delta):
            return {
                "type": "tool_output_delta",
                "tool_use_id": tid,
                "name": name,
                "key": key,
                "delta": delta,
            }
        case ToolResult():
            return {
                "type": "tool_result",
                "tool_use_id": event.tool_use_id,
                "name": event.name,
                "is_error": event.is_error,
                "content": event.content,
                "input": event.input,
                "details": event.details,
                "block": block_to_dict(event.block) if event.block is not None else None,
            }
        case ContextCompacted():
            return {
                "type": "context_compacted",
                "messages_before": event.messages_before,
                "messages_after": event.messages_after,
                "input_tokens": event.input_tokens,
                "summary": event.summary,
            }
        case SessionEndEvent(stop_reason=stop, total_usage=usage):
            return {
                "type": "session_end",
                "stop_reason": stop.value,
                "total_usage": _usage(usage),
                "final_text": event.final_text,
                "iterations": event.iterations,
                "duration_s": event.duration_s,
                "cost_usd": event.cost_usd,
                "session_id": event.session_id,
                "error": exception_to_dict(event.error) if event.error is not None else None,
            }
        case AgentStart(name=name, session_id=session_id):
            return {"type": "agent_start", "name": name, "session_id": session_id}
        case TurnStart(iteration=iteration):
            return {"type": "turn_start", "iteration": iteration}
        case MessageEnd(message=message):
            return {"type": "message_end", "message": _message(message)}
        case ToolCallStart(tool_use_id=tid, name=name, input=arguments):
            return {"type": "tool_call_start", "tool_use_id": tid, "name": name, "input": arguments}
        case TurnEnd(iteration=iteration, message=message, tool_results=results):
            return {
                "type": "turn_end",
                "iteration": iteration,
                "message": _message(message),
                "tool_results": [block_to_dict(r) for r in results],
            }
        case SubAgentEvent(path=path, event=inner):
            return {"type": "sub_agent", "path": path, "event": event_to_dict(inner)}
        case _:
            assert_never(event)


def event_from_dict(data: dict[str, Any]) -> StreamEvent:
    """Rebuild a stream event from ``event_to_dict`` output. Raises ``ValueError``."""
    kind = data.get("type")
    try:
        match kind:
            case "text_delta":
                return TextDelta(data["index"], data["delta"])
            case "reasoning_delta":
                return ReasoningDelta(data["index"], data["delta"], data.get("signature", ""))
            case "tool_use_start":
                return ToolUseStart(data["index"], data["tool_use_id"], data["name"])
            case "tool_input_delta":
                return ToolInputDelta(data["index"], data["tool_use_id"], data["partial_json"])
            case "iteration_end":
                return IterationEnd(
                    data["iteration"], StopReason(data["stop_reason"]), _usage_from(data["usage"])
                )
            case "error":
                return Error(exception_from_dict(data["exception"]))
            case "tool_output_delta":
                return ToolOutputDelta(
                    data["tool_use_id"], data["name"], data["key"], data["delta"]
                )
            case "tool_result":
                block = block_from_dict(data["block"]) if data.get("block") else None
                if block is not None and not isinstance(block, ToolResultBlock):
                    raise ValueError("a tool_result event's block must be a tool_result block")
                return ToolResult(
                    data["tool_use_id"],
                    data["name"],
                    bool(data["is_error"]),
                    data.get("content", ""),
                    dict(data.get("input") or {}),
                    data.get("details"),
                    block,
                )
            case "context_compacted":
                return ContextCompacted(
                    data["messages_before"],
                    data["messages_after"],
                    data["input_tokens"],
                    data["summary"],
                )
            case "session_end":
                error = data.get("error")
                return SessionEndEvent(
                    StopReason(data["stop_reason"]),
                    _usage_from(data["total_usage"]),
                    final_text=data.get("final_text", ""),
                    iterations=int(data.get("iterations", 0)),
                    duration_s=float(data.get("duration_s", 0.0)),
                    cost_usd=data.get("cost_usd"),
                    session_id=data.get("session_id"),
                    error=exception_from_dict(error) if error else None,
                )
            case "agent_start":
                return AgentStart(data["name"], data["session_id"])
            case "turn_start":
                return TurnStart(data["iteration"])
            case "message_end":
                return MessageEnd(_message_from(data["message"]))
            case "tool_call_start":
                return ToolCallStart(data["tool_use_id"], data["name"], dict(data["input"]))
            case "turn_end":
                return TurnEnd(
                    data["iteration"],
                    _message_from(data["message"]),
                    tuple(_result_from(r) for r in data["tool_results"]),
                )
            case "sub_agent":
                return SubAgentEvent(data["path"], event_from_dict(data["event"]))
    except KeyError as exc:
        raise ValueError(f"{kind} event is missing {exc.args[0]!r}") from None
    raise ValueError(f"unknown event type {kind!r}")
