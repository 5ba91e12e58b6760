"""Asking the MCP client's user about a call: an ``Approver`` that sends each request of
a served run to the client as an elicitation (form mode), where the client supports it.

The client's answer, whoever gave it, is recorded with the client's name (from its
``initialize``) and ``via: mcp``; a decline or a cancel denies the call.
"""

from __future__ import annotations

import json
from typing import Any

from mcp import types
from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from swarm._visible import visible
from swarm.scope import ApprovalDecision, ApprovalRequest, Approver

__all__ = ["ApprovalForm", "elicit_approver"]


class ApprovalForm(BaseModel):
    """What the client's user fills in for one request."""

    approve: bool = Field(description="Run this call?")
    reason: str = Field(default="", description="Why (the agent is told when it is denied)")


def _client_name(ctx: Context[Any, Any]) -> str:
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    return f"{info.name} (MCP client)" if info is not None else "an MCP client"


def elicit_approver(ctx: Context[Any, Any]) -> Approver | None:
    """An approver asking the client of ``ctx``'s request; ``None`` when the client did
    not declare elicitation (the run's ``on_ask`` applies then)."""
    wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    if not ctx.session.check_client_capability(wanted):
        return None
    who = _client_name(ctx)

    async def approve(request: ApprovalRequest) -> ApprovalDecision:
        shown = json.dumps(dict(request.arguments), default=str, ensure_ascii=False)
        message = visible(
            f"[{request.path}] wants to call {request.tool} {shown}\n{request.reason}",
            multiline=True,
        )
        answer = await ctx.elicit(message, ApprovalForm)
        if answer.action == "accept" and answer.data.approve:
            return ApprovalDecision.approve(reason=answer.data.reason, who=who, via="mcp")
        if answer.action == "accept":
            said = answer.data.reason or "the MCP client's user said no"
        else:
            said = f"the MCP client's user chose {answer.action}"
        return ApprovalDecision.deny(said, who=who, via="mcp")

    return approve
