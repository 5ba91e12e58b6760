"""The live view and the plain lines show a call waiting for approval, at any depth."""

from __future__ import annotations

import io

from swarm.cli.board import AgentBoard
from swarm.cli.view import LineView
from swarm.events import (
    ApprovalRequested,
    SubAgentEvent,
    ToolCallStart,
    ToolInputDelta,
    ToolUseStart,
)

WORKER = "boss/lead#1/worker#1"


def _deep(event: object) -> SubAgentEvent:
    return SubAgentEvent("boss/lead#1", SubAgentEvent(WORKER, event))  # type: ignore[arg-type]


def test_a_held_call_shows_on_its_agent_until_it_starts() -> None:
    board = AgentBoard("boss", frozenset({"lead", "worker"}), clock=lambda: 0.0)
    board.update(_deep(ToolUseStart(0, "c1", "shell")))
    board.update(_deep(ToolInputDelta(0, "c1", '{"command": "make deploy"}')))
    board.update(_deep(ApprovalRequested("c1", "shell", "3", "a person must agree", True)))
    worker = board.agents[WORKER]
    assert board.activity(worker) == "waiting for approval: shell(make deploy) #3"
    board.update(_deep(ToolCallStart("c1", "shell", {"command": "make deploy"})))
    assert board.activity(worker) == "calling shell(make deploy)"


def test_the_plain_lines_say_which_request_holds_the_call() -> None:
    out = io.StringIO()
    view = LineView(AgentBoard("boss"), out)
    view(_deep(ApprovalRequested("c1", "shell", "1", "a person must agree", True)))
    assert out.getvalue() == (
        f"[{WORKER}] shell held for approval (request 1): a person must agree\n"
    )
