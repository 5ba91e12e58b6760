"""OpenTelemetry spans of a run, following the GenAI semantic conventions.

``OtelObserver`` is both a ``CallObserver`` (each tool call's decision and end, with its
guard, rule and audit hash) and an event sink (each agent's start and end, each model
call). It makes ``invoke_agent {role}`` per agent, under the ``execute_tool`` span of the
call that delegated to it; ``chat {model}`` per model call and ``execute_tool {tool}``
per tool call, under their agent. Attribute names are written as plain strings (the
constants of ``opentelemetry-semantic-conventions`` are marked deprecated).

``opentelemetry`` is imported when an observer is made, never by ``import swarm``, so a
run without one pays nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from swarm._dist import install_hint
from swarm.events import (
    Error,
    IterationEnd,
    SessionEndEvent,
    StreamEvent,
    SubAgentEvent,
    ToolResult,
)
from swarm.messages import ToolResultBlock
from swarm.scope import CallRecord, role_of

__all__ = ["OtelObserver"]

TRACER = "swarm"


@dataclass(slots=True)
class _Agent:
    span: Any
    context: Any
    chat: Any = None
    next_chat: bool = True  # a model call starts when the tools of the last one are done
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None
    subtree_cost_usd: float | None = None
    error: str = ""
    tools: dict[str, Any] = field(default_factory=dict)  # call id -> execute_tool span
    unbound: list[tuple[str, Any]] = field(default_factory=list)  # delegations (role, span)


class OtelObserver:
    """Turns a run into OpenTelemetry spans. Pass it as a run's event sink
    (``on_event``) and among its call observers (``observers``); ``close()`` ends what
    a stopped run left open.

    ``root`` is the entry agent's path (its events carry none), ``model`` the name put on
    ``chat`` spans and ``gen_ai.request.model``. ``tracer_provider`` defaults to the
    global one. Raises ``ImportError`` (naming the ``otel`` extra) without OpenTelemetry.
    """

    def __init__(self, root: str, *, model: str | None = None, tracer_provider: Any = None) -> None:
        try:
            from opentelemetry import trace
            from opentelemetry.trace import Status, StatusCode
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ImportError(f"OpenTelemetry is not installed: {install_hint('otel')}") from exc
        self._trace = trace
        self._status, self._code = Status, StatusCode
        self.tracer = trace.get_tracer(TRACER, tracer_provider=tracer_provider)
        self.root = root
        self.model = model or "unknown"
        self._agents: dict[str, _Agent] = {}

    # -- spans ---------------------------------------------------------------------

    def _agent(self, path: str) -> _Agent:
        agent = self._agents.get(path)
        if agent is not None:
            return agent
        parent_ctx = None
        if path != self.root:
            parent_path = path.rsplit("/", 1)[0] if "/" in path else self.root
            parent = self._agent(parent_path)
            role = role_of(path)
            bound = next((i for i, (r, _) in enumerate(parent.unbound) if r == role), None)
            caller = parent.unbound.pop(bound)[1] if bound is not None else parent.span
            parent_ctx = self._trace.set_span_in_context(caller)
        role = role_of(path)
        span = self.tracer.start_span(
            f"invoke_agent {role}",
            context=parent_ctx,
            kind=self._trace.SpanKind.INTERNAL,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": role,
                "swarm.agent.path": path,
            },
        )
        agent = self._agents[path] = _Agent(span, self._trace.set_span_in_context(span))
        self._start_chat(path, agent)
        return agent

    def _start_chat(self, path: str, agent: _Agent) -> None:
        agent.next_chat = False
        agent.chat = self.tracer.start_span(
            f"chat {self.model}",
            context=agent.context,
            kind=self._trace.SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": self.model,
                "gen_ai.agent.name": role_of(path),
            },
        )

    def _error(self, span: Any, message: str) -> None:
        span.set_status(self._status(self._code.ERROR, message))

    def __call__(self, event: StreamEvent) -> None:
        """The event sink: agents start and end, model calls begin and end."""
        path = self.root
        while isinstance(event, SubAgentEvent):
            path, event = event.path, event.event
        agent = self._agent(path)
        match event:
            case IterationEnd(usage=usage, stop_reason=reason):
                agent.input_tokens += usage.input_tokens
                agent.output_tokens += usage.output_tokens
                agent.cache_read_tokens += usage.cache_read_tokens
                agent.cache_write_tokens += usage.cache_write_tokens
                if agent.chat is not None:
                    agent.chat.set_attributes(
                        {
                            "gen_ai.usage.input_tokens": usage.input_tokens,
                            "gen_ai.usage.output_tokens": usage.output_tokens,
                            "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens,
                            "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens,
                            "gen_ai.response.finish_reasons": [reason.value],
                        }
                    )
                    agent.chat.end()
                    agent.chat = None
                # after a tool-use turn, the last of its tool results starts the next call
                agent.next_chat = reason.value == "tool_use"
            case ToolResult():
                if agent.next_chat and not agent.tools:
                    self._start_chat(path, agent)
            case Error():
                agent.error = event.message
                if agent.chat is not None:
                    self._error(agent.chat, event.message)
            case SessionEndEvent(stop_reason=reason, usage_tree=tree):
                if tree is not None:
                    agent.cost_usd, agent.subtree_cost_usd = tree.cost_usd, tree.total_cost_usd
                self._end_agent(path, agent, reason.value)
            case _:
                pass

    def _end_agent(self, path: str, agent: _Agent, reason: str) -> None:
        if agent.chat is not None:
            agent.chat.end()
            agent.chat = None
        for span in agent.tools.values():
            span.end()
        agent.tools.clear()
        attributes: dict[str, Any] = {
            "gen_ai.usage.input_tokens": agent.input_tokens,
            "gen_ai.usage.output_tokens": agent.output_tokens,
            "gen_ai.usage.cache_read.input_tokens": agent.cache_read_tokens,
            "gen_ai.usage.cache_creation.input_tokens": agent.cache_write_tokens,
            "swarm.stop_reason": reason,
        }
        if agent.cost_usd is not None:  # OTel drops None attributes: leave unknown out
            attributes["swarm.cost_usd"] = agent.cost_usd
        if agent.subtree_cost_usd is not None:
            attributes["swarm.subtree_cost_usd"] = agent.subtree_cost_usd
        agent.span.set_attributes(attributes)
        if reason == "error" or agent.error:
            self._error(agent.span, agent.error or "error")
        agent.span.end()
        del self._agents[path]

    # -- CallObserver --------------------------------------------------------------

    async def on_decision(self, call: CallRecord) -> None:
        """Start the call's ``execute_tool`` span, with the guard's decision and rule."""
        path = call.path or self.root
        agent = self._agent(path)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.tool,
            "gen_ai.tool.call.id": call.call_id,
            "swarm.guard.decision": call.decision or "",
        }
        for key, value in (
            ("swarm.guard.name", call.guard),
            ("swarm.guard.rule", call.rule),
            ("swarm.guard.reason", call.reason),
            ("swarm.audit.decision_hash", call.audit_hash),
        ):
            if value:
                attributes[key] = value
        span = self.tracer.start_span(
            f"execute_tool {call.tool}",
            context=agent.context,
            kind=self._trace.SpanKind.INTERNAL,
            attributes=attributes,
        )
        span.add_event("guard.decision", {k: v for k, v in attributes.items() if "guard" in k})
        agent.tools[call.call_id] = span
        if call.decision == "allow":
            agent.unbound.append((call.tool, span))

    async def on_finish(self, call: CallRecord, result: ToolResultBlock, duration: float) -> None:
        """End the call's span: its outcome, audit hash, and an error status on failure."""
        agent = self._agents.get(call.path or self.root)
        span = agent.tools.pop(call.call_id, None) if agent is not None else None
        if agent is None or span is None:
            return
        agent.unbound = [(r, s) for r, s in agent.unbound if s is not span]
        if call.audit_hash:
            span.set_attribute("swarm.audit.hash", call.audit_hash)
        if result.is_error:
            self._error(span, result.text.splitlines()[0] if result.text else "error")
        span.end()

    def close(self) -> None:
        """End every span still open (a stopped run), children first, as cancelled."""
        for path in sorted(self._agents, key=lambda p: -p.count("/")):
            self._end_agent(path, self._agents[path], "cancelled")
