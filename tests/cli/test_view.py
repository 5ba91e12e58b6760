"""The agent board behind the live view, and the plain line output."""

from __future__ import annotations

import io

from rich.console import Console

from swarm import (
    ContextCompacted,
    IterationEnd,
    SessionEndEvent,
    StopReason,
    SubAgentEvent,
    TextDelta,
    ToolResult,
    ToolUseStart,
    Usage,
)
from swarm.cli.view import AgentBoard, LineView


def feed(board: AgentBoard) -> list[object]:
    events: list[object] = [
        ToolUseStart(0, "d1", "developer"),
        SubAgentEvent("lead/developer#1", TextDelta(0, "thinking")),
        SubAgentEvent("lead/developer#1", ToolUseStart(0, "c1", "shell")),
        SubAgentEvent(
            "lead/developer#1",
            ToolResult("c1", "shell", True, "Permission denied by PolicyGuard: no"),
        ),
        SubAgentEvent("lead/developer#1", ContextCompacted(10, 4, 900, "summary")),
        SubAgentEvent("lead/developer#1", IterationEnd(1, StopReason.end_turn, Usage(90, 10))),
        SubAgentEvent("lead/developer#1", SessionEndEvent(StopReason.budget, Usage(90, 10))),
        IterationEnd(1, StopReason.tool_use, Usage(50, 5)),
    ]
    return events


def test_board_tracks_each_agent_of_the_tree() -> None:
    board = AgentBoard("lead", frozenset({"lead", "developer"}))
    for event in feed(board):
        board.update(event)  # type: ignore[arg-type]
    lead, developer = board.agents["lead"], board.agents["lead/developer#1"]
    assert lead.children == ["lead/developer#1"]
    assert (lead.iterations, lead.tokens) == (1, 55)
    assert (developer.denied, developer.compactions, developer.tokens) == (1, 1, 100)
    assert developer.status == "stopped: budget" and developer.finished == "budget"


def test_tree_renders_nested_agents_with_their_state() -> None:
    board = AgentBoard("lead", frozenset({"developer"}))
    for event in feed(board):
        board.update(event)  # type: ignore[arg-type]
    console = Console(file=io.StringIO(), width=120, color_system=None)
    console.print(board.tree())
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "lead" in text and "developer#1" in text
    assert "denied 1" in text and "compacted 1x" in text and "stopped: budget" in text


def test_line_view_prints_one_line_per_thing_worth_knowing() -> None:
    out = io.StringIO()
    view = LineView(AgentBoard("lead", frozenset({"developer"})), out)
    for event in feed(view.board):
        view(event)  # type: ignore[arg-type]
    assert out.getvalue().splitlines() == [
        "[lead] delegates to developer",
        "[lead/developer#1] calls shell",
        "[lead/developer#1] DENIED shell: Permission denied by PolicyGuard: no",
        "[lead/developer#1] compacted its context: 10 -> 4 messages",
        "[lead/developer#1] finished (budget) after 1 iteration",
    ]
