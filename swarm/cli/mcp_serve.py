"""A team served as an MCP server: each role a tool, each call a full swarm run.

``team_server`` builds an ``MCPServer`` (the official SDK's) whose tools are the entry role
(or every role): a call ``{"task": ...}`` runs the scenario with that task from that role,
with its policy, its run record and its audit log, exactly as ``swarm run`` would. What the
agents do while it runs (their calls, sub-agents starting and ending) is sent to the client
as progress notifications; a client that cancels the request stops the run, whose record
is then written as interrupted. A call a policy asks about, at any depth, goes to the
client as an elicitation when it supports them (``swarm.mcp.elicit``). So Claude Code,
or any MCP client, can delegate to a team.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from swarm._dist import version
from swarm.errors import ToolError
from swarm.events import SessionEndEvent, StreamEvent, SubAgentEvent, ToolResult, ToolUseStart
from swarm.mcp.elicit import elicit_approver
from swarm.scenario.runner import run_scenario
from swarm.scenario.spec import Scenario
from swarm.team import Team
from swarm.types import StopReason

__all__ = ["describe_event", "team_server"]


def describe_event(event: StreamEvent, path: str = "") -> str | None:
    """One progress line for ``event`` (``None`` for events not worth one): a call
    starting, a call failing, a sub-agent ending."""
    match event:
        case SubAgentEvent():
            return describe_event(event.event, event.path)
        case ToolUseStart():
            return f"{path or 'entry'}: calls {event.name}"
        case ToolResult() if event.is_error:
            return f"{path or 'entry'}: {event.name} failed"
        case SessionEndEvent() if path:
            return f"{path}: finished ({event.stop_reason.value})"
        case _:
            return None


_TASK = "The full task: what to do, the context it needs, and what to report back."


def _role_tool(
    scenario: Scenario,
    role: str,
    *,
    model: str | None,
    workspace: Path | None,
    runs_dir: Path | None,
) -> Callable[..., Any]:
    async def run_role(task: Annotated[str, Field(description=_TASK)], ctx: Context) -> str:
        send, receive = anyio.create_memory_object_stream[str](math.inf)

        async def forward() -> None:
            count = 0
            async with receive:
                async for line in receive:
                    count += 1
                    await ctx.report_progress(count, None, line)

        def on_event(event: StreamEvent) -> None:
            line = describe_event(event)
            if line is not None:
                send.send_nowait(line)

        run = dataclasses.replace(scenario, task=task, entry=role)
        async with anyio.create_task_group() as group:
            group.start_soon(forward)
            try:
                outcome = await run_scenario(
                    run,
                    model=model,
                    workspace=workspace,
                    runs_dir=runs_dir,
                    on_event=on_event,
                    approver=elicit_approver(ctx),
                )
            finally:
                send.close()
        if outcome.stop_reason != StopReason.end_turn:
            raise ToolError(
                f"the run stopped ({outcome.stop_reason.value}); its record is in"
                f" {outcome.record_dir}. Last words: {outcome.final_text or '(none)'}"
            )
        return outcome.final_text

    return run_role


def team_server(
    scenario: Scenario,
    *,
    roles: Sequence[str] | None = None,
    model: str | None = None,
    workspace: Path | None = None,
    runs_dir: Path | None = None,
) -> MCPServer:
    """An MCP server whose tools run ``scenario``'s team: one tool per role of ``roles``
    (default: the entry role), named after the role, taking a ``task``.

    ``model`` overrides the scenario's model; ``workspace`` and ``runs_dir`` are where the
    runs work and keep their records. Raises ``ConfigError`` for a bad team or a role that
    is not one of it.
    """
    first = roles[0] if roles else None
    team = Team.load(scenario.team, entry=scenario.entry or first)
    chosen = list(roles) if roles is not None else [team.entry]
    for role in chosen:
        if role not in team.specs:
            Team.load(scenario.team, entry=role)  # raises, naming the roles
    server = MCPServer(
        name=f"swarm team {scenario.team.name or scenario.team}",
        version=version(),
        instructions="Each tool runs a team of agents on a task and returns its answer.",
    )
    for role in chosen:
        spec = team.specs[role]
        server.add_tool(
            _role_tool(scenario, role, model=model, workspace=workspace, runs_dir=runs_dir),
            name=role,
            description=(spec.description or f"The {role} role of a swarm team.")
            + "\n\nGive the full task; the team works on it and its final answer comes back.",
        )
    return server
