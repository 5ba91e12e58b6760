"""The ``agents`` tool: a caller's view of the sub-agents it started.

Every role with delegates gets it (``build_team``); with it, its delegations may run in
the background (``background: true``) and finished ones may be continued. Actions:

- ``status``: every sub-agent of this run: running/done/failed/stopped, idle seconds,
  tokens spent.
- ``wait``: until ``path`` (or every background one) ends, at most ``timeout`` seconds;
  their answers.
- ``result``: the answer of a finished one.
- ``steer``: send ``message`` to a running one (it reads it at its next turn).
- ``stop``: stop a running one (it ends ``cancelled``, its history valid).
- ``continue``: send ``message`` to a finished one as a follow-up (its context kept);
  with ``background``, without waiting.

The tool's calls pass the caller's guards like any other (a policy can deny ``stop``).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from swarm.background import AGENTS_TOOL, AgentsSettings, Child, OnExit, SubAgents, describe
from swarm.errors import ToolError
from swarm.scope import current_scope
from swarm.team.children import continue_child
from swarm.tools import Field, Tool, ToolOutput

__all__ = ["agents_tool"]

Action = Literal["status", "wait", "result", "steer", "stop", "continue"]


def _one(subagents: SubAgents, path: str) -> Child:
    child = subagents.children.get(path)
    if child is None:
        known = ", ".join(sorted(subagents.children)) or "none"
        raise ToolError(f"No sub-agent '{path}' in this run (known: {known}).")
    return child


def _answers(children: list[Child]) -> ToolOutput:
    text = "\n\n".join(describe(c) for c in children) or "No sub-agents."
    outputs = {c.path: c.result.output for c in children if c.result and c.result.output}
    details: dict[str, Any] = {"agents": [c.summary() for c in children]}
    if outputs:
        details["outputs"] = outputs
    return ToolOutput(text, details=details)


async def _agents(
    action: Annotated[Action, Field(description="What to do (see the tool description).")],
    path: Annotated[
        str, Field(description="The sub-agent's path (lead/reviewer#2).", default="")
    ] = "",
    message: Annotated[
        str, Field(description="For steer and continue: the message.", default="")
    ] = "",
    timeout: Annotated[
        float, Field(description="For wait: at most this many seconds.", default=300, ge=0)
    ] = 300,
    background: Annotated[
        bool, Field(description="For continue: do not wait for the answer.", default=False)
    ] = False,
) -> ToolOutput:
    subagents = current_scope().subagents
    if subagents is None:
        raise ToolError("This run keeps no sub-agents.")
    if action in ("result", "steer", "stop", "continue") and not path:
        raise ToolError(f"'{action}' needs the sub-agent's path.")
    if action in ("steer", "continue") and not message:
        raise ToolError(f"'{action}' needs a message.")
    match action:
        case "status":
            summary = [c.summary() for c in subagents.children.values()]
            return ToolOutput(json.dumps(summary), details={"agents": summary})
        case "wait":
            children = [_one(subagents, path)] if path else subagents.running()
            await subagents.wait(children, timeout)
            return _answers(children)
        case "result":
            child = _one(subagents, path)
            if child.status == "running":
                raise ToolError(f"'{path}' is still running: wait for it.")
            child.collected = True
            return _answers([child])
        case "steer":
            child = _one(subagents, path)
            tree = current_scope().agents
            if child.status != "running" or tree is None or path not in tree.running:
                raise ToolError(f"'{path}' is not running ({child.status}): continue it.")
            tree.find(path).steer(message)
            return ToolOutput(f"Sent to {path}; it reads it at its next turn.")
        case "stop":
            child = _one(subagents, path)
            if child.status != "running" or not child.background:
                raise ToolError(f"'{path}' is not running in the background ({child.status}).")
            subagents.stop(child)
            await subagents.wait([child], None)
            return _answers([child])
        case "continue":
            return await continue_child(subagents, path, message, role="", background=background)
    raise ToolError(f"unknown action {action!r}")  # pragma: no cover - Literal checked


def agents_tool(*, on_exit: OnExit = "wait") -> Tool[AgentsSettings]:
    """The ``agents`` tool (see the module). ``on_exit`` says what the run does with
    background sub-agents still running when it would end: ``wait`` for them (reading
    their answers) or ``stop`` them."""
    return Tool(
        AGENTS_TOOL,
        _agents,
        "Check on, wait for, steer, stop or continue the sub-agents you started. Actions:"
        " status (all of them), wait (path, or every background one; timeout), result"
        " (path), steer (path, message), stop (path), continue (path, message: a follow-up"
        " to a finished one; background to not wait).",
        context=AgentsSettings(on_exit),
        idempotent=False,
        timeout=float("inf"),  # a wait is bounded by its own timeout and the budget
    )
