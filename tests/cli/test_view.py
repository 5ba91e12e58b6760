"""The agent board behind the live view, and the plain line output."""

from __future__ import annotations

import io
import json
import re
import sys

import anyio
import pytest
from rich.console import Console

from swarm import (
    ContextCompacted,
    Error,
    IterationEnd,
    SessionEndEvent,
    StopReason,
    SubAgentEvent,
    TextDelta,
    ToolInputDelta,
    ToolOutputDelta,
    ToolResult,
    ToolUseStart,
    TransportError,
    Usage,
)
from swarm.cli.prompt import TerminalPrompt
from swarm.cli.view import AgentBoard, LineView, LiveView, render_board
from swarm.guards.approval import ApprovalRequest


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
    console.print(render_board(board))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "lead" in text and "developer#1" in text
    assert "denied 1" in text and "compacted 1x" in text and "developer#1  budget" in text


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


# --- the live view's frames -------------------------------------------------------------


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def frame(board: AgentBoard) -> str:
    console = Console(file=io.StringIO(), width=120, color_system=None)
    console.print(render_board(board))
    return console.file.getvalue()  # type: ignore[attr-defined]


def line_of(text: str, name: str) -> str:
    """The line of the agent called ``name`` (its name comes right after its mark)."""
    return next(
        line for line in text.splitlines() if re.search(rf"[^\w\s] {re.escape(name)}  ", line)
    )


def test_failed_run_shows_the_reason_on_the_agent() -> None:
    board = AgentBoard("lead", frozenset({"worker"}))
    for n in range(1, 61):
        board.update(ToolUseStart(0, f"w{n}", "worker"))
        board.update(SubAgentEvent(f"lead/worker#{n}", TextDelta(0, "on it")))
    failure = "could not reach api.openai.com: connection refused"
    board.update(SubAgentEvent("lead/worker#14", Error(TransportError(failure))))
    board.update(SubAgentEvent("lead/worker#14", SessionEndEvent(StopReason.error, Usage())))
    text = frame(board)
    assert f"error: {failure}" in line_of(text, "worker#14")
    assert "thinking" in line_of(text, "worker#13")
    assert "waiting on worker#1, worker#2 +57" in line_of(text, "lead")
    board.update(Error(TransportError(failure)))
    board.update(SessionEndEvent(StopReason.error, Usage()))
    assert f"error: {failure}" in line_of(frame(board), "lead")
    assert set(board.errors()) == {("lead", failure), ("lead/worker#14", failure)}


def test_long_tool_call_shows_its_arguments_progress_and_elapsed_time() -> None:
    clock = Clock()
    board = AgentBoard("lead", frozenset({"tester"}), clock=clock)
    board.update(ToolUseStart(0, "d1", "tester"))
    board.update(SubAgentEvent("lead/tester#1", ToolUseStart(0, "c1", "shell")))
    args = '{"command": "python3 -m pytest -q"}'
    board.update(SubAgentEvent("lead/tester#1", ToolInputDelta(0, "c1", args)))
    board.update(SubAgentEvent("lead/tester#1", ToolOutputDelta("c1", "shell", "stdout", "..\n")))
    board.update(
        SubAgentEvent("lead/tester#1", ToolOutputDelta("c1", "shell", "stdout", "collected 3\n"))
    )
    clock.now += 4.2
    text = frame(board)
    assert "calling shell(python3 -m pytest -q)" in line_of(text, "tester#1")
    assert "4.2s" in line_of(text, "tester#1")
    assert "collected 3" in text
    assert "waiting on tester#1" in line_of(text, "lead")
    board.update(SubAgentEvent("lead/tester#1", ToolResult("c1", "shell", False, "3 passed")))
    text = frame(board)
    assert "thinking" in line_of(text, "tester#1") and "collected 3" not in text
    board.update(SubAgentEvent("lead/tester#1", SessionEndEvent(StopReason.end_turn, Usage())))
    clock.now += 10
    text = frame(board)
    assert "done" in line_of(text, "tester#1") and "4.2s" in line_of(text, "tester#1")
    board.update(ToolResult("d1", "tester", False, "all green"))
    assert "thinking" in line_of(frame(board), "lead")


def test_denial_flashes_its_rule_then_stays_counted() -> None:
    clock = Clock()
    board = AgentBoard("lead", clock=clock)
    board.update(ToolUseStart(0, "c1", "shell"))
    denial = (
        "Permission denied by PolicyGuard (rule: no-recursive-delete): recursive delete."
        " The call was not run; do not repeat it unchanged."
    )
    board.update(ToolResult("c1", "shell", True, denial))
    assert "denied: no-recursive-delete" in line_of(frame(board), "lead")
    clock.now += 5
    text = line_of(frame(board), "lead")
    assert "denied: no-recursive-delete" not in text
    assert "thinking" in text and "denied 1" in text


def terminal() -> Console:
    return Console(file=io.StringIO(), width=100, force_terminal=True, color_system=None)


def test_approval_prompt_pauses_the_live_region(monkeypatch: pytest.MonkeyPatch) -> None:
    console = terminal()
    board = AgentBoard("lead")
    view = LiveView(board, console, refresh_per_second=1)
    request = ApprovalRequest(
        tool="shell",
        arguments={"command": "make deploy"},
        path="lead",
        call_id="c1",
        reason="rule ask-deploy",
        guard="PolicyGuard",
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    with view:
        view(SubAgentEvent("lead/worker#1", TextDelta(0, "hm")))
        view(ToolUseStart(0, "c1", "shell"))
        view.live.refresh()
        # the prompt writes to the real stderr, which is the terminal
        monkeypatch.setattr(sys, "__stderr__", console.file)
        with view.paused():
            monkeypatch.setattr(sys, "stderr", console.file)
            decision = anyio.run(TerminalPrompt().approve, request)
            asked = console.file.getvalue()  # type: ignore[attr-defined]
            view.live.refresh()  # a tick of the old region while the person types
            assert console.file.getvalue() == asked  # type: ignore[attr-defined]
    after = console.file.getvalue()[len(asked) :]  # type: ignore[attr-defined]
    assert decision.approved
    assert asked.rstrip().endswith("allow? [y/a/e/N]")
    # the region resumes below the prompt: no cursor movement up over the typed answer
    assert "\x1b[1A" not in after.split("lead", 1)[0]
    assert "waiting on worker#1" in after


def test_log_lines_go_above_the_live_region() -> None:
    console = terminal()
    view = LiveView(AgentBoard("lead"), console, refresh_per_second=1)
    with view:
        view(TextDelta(0, "hm"))
        view.live.refresh()
        sys.stderr.write("retrying in 2s: 503 from the provider\n")
        view.live.refresh()
    out = console.file.getvalue()  # type: ignore[attr-defined]
    lines = [line for line in out.replace("\r", "\n").splitlines() if "retrying" in line]
    assert lines and all("lead" not in line for line in lines)
    # the log line is printed, then the tree is drawn again below it
    assert "lead" in out[out.index("retrying") :]


def test_ctrl_c_leaves_no_agent_working() -> None:
    console = Console(file=io.StringIO(), width=100, color_system=None)
    board = AgentBoard("lead", frozenset({"worker"}))
    with pytest.raises(KeyboardInterrupt), LiveView(board, console):
        board.update(ToolUseStart(0, "w1", "worker"))
        board.update(SubAgentEvent("lead/worker#1", ToolUseStart(0, "c1", "shell")))
        raise KeyboardInterrupt
    last = frame(board)
    assert "cancelled" in line_of(last, "lead") and "cancelled" in line_of(last, "worker#1")
    assert "calling" not in last and "waiting" not in last


def test_escape_sequences_from_the_model_or_a_tool_never_reach_the_terminal() -> None:
    board = AgentBoard("lead")
    title = "\x1b]0;pwned\x07"  # would retitle the terminal; \x1b]52 would set the clipboard
    board.update(ToolUseStart(0, "c1", "shell"))
    board.update(ToolInputDelta(0, "c1", json.dumps({"command": f"echo {title}"})))
    board.update(ToolOutputDelta("c1", "shell", "stdout", "\x1b[2J\x1b[Hfake prompt $\n"))
    text = frame(board)
    assert "\x1b" not in text and "\x07" not in text
    assert "calling shell(echo \\x1b]0;pwned\\x07)" in text
    assert "\\x1b[2J\\x1b[Hfake prompt $" in text
    board.update(Error(TransportError(f"bad gateway {title}")))
    board.update(SessionEndEvent(StopReason.error, Usage()))
    assert "\x1b" not in frame(board)


def test_names_and_arguments_the_model_chose_cannot_reorder_or_hide_text() -> None:
    board = AgentBoard("lead")
    board.update(ToolUseStart(0, "c1", "no_such\u202e[red]x[/red]"))
    board.update(ToolUseStart(0, "c2", "write_file"))
    board.update(ToolInputDelta(0, "c2", json.dumps({"path": "invoice\u202etxt.exe\u200b"})))
    text = frame(board)
    assert "\u202e" not in text and "\u200b" not in text
    assert "calling no_such\\u202e[red]x[/red] +1" in text
    board.update(ToolResult("c2", "write_file", True, "Permission denied (rule: a\u2066b)"))
    assert "denied: a\\u2066b" in frame(board)


def test_a_denial_with_a_newline_stays_one_plain_line() -> None:
    out = io.StringIO()
    view = LineView(AgentBoard("lead"), out)
    view(ToolUseStart(0, "c1", "write_file"))
    view(ToolResult("c1", "write_file", True, "Permission denied: 'a\n[lead] finished'\u202e"))
    assert out.getvalue().splitlines() == [
        "[lead] calls write_file",
        "[lead] DENIED write_file: Permission denied: 'a\\n[lead] finished'\\u202e",
    ]


def test_prompts_show_the_models_words_escaped(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = io.StringIO()
    monkeypatch.setattr(sys, "stderr", asked)
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\nfine\n"))
    request = ApprovalRequest(
        tool="shell",
        arguments={"command": "make \u202edeploy"},
        path="lead",
        call_id="c1",
        reason="rule ask-deploy \x1b]0;pwned\x07",
        guard="PolicyGuard",
    )
    assert not anyio.run(TerminalPrompt().approve, request).approved
    assert anyio.run(TerminalPrompt().ask_user, "Which one?\n\x1b[2J1 or 2") == "fine"
    shown = asked.getvalue()
    assert "\x1b" not in shown and "\u202e" not in shown and "\x07" not in shown
    assert "rule ask-deploy \\x1b]0;pwned\\x07" in shown
    assert "The agents ask: Which one?\n\\x1b[2J1 or 2" in shown  # a question keeps its lines


def test_retry_log_lines_print_above_the_tree_not_into_it() -> None:
    import structlog

    from swarm.cli import _configure_logging

    console = terminal()
    view = LiveView(AgentBoard("lead"), console, refresh_per_second=1)
    _configure_logging(verbose=False)
    try:
        with view:
            view(TextDelta(0, "hm"))
            view.live.refresh()
            structlog.get_logger("swarm.transports").warning("retrying after 503", attempt=2)
            view.live.refresh()
    finally:
        structlog.reset_defaults()
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert "retrying after 503" in out
    assert "lead" in out[out.index("retrying after 503") :]  # the tree is drawn again below


def test_a_big_fan_out_folds_finished_workers_and_keeps_failures_on_screen() -> None:
    board = AgentBoard("lead", frozenset({"worker"}))
    for n in range(1, 61):
        path = f"lead/worker#{n}"
        board.update(ToolUseStart(0, f"w{n}", "worker"))
        board.update(SubAgentEvent(path, TextDelta(0, "on it")))
        if n == 14:
            board.update(SubAgentEvent(path, Error(TransportError("HTTP 500 from the provider"))))
            board.update(SubAgentEvent(path, SessionEndEvent(StopReason.error, Usage())))
        elif n <= 50:
            board.update(SubAgentEvent(path, SessionEndEvent(StopReason.end_turn, Usage())))
    console = Console(file=io.StringIO(), width=120, color_system=None)
    console.print(render_board(board, max_lines=36))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert len(text.splitlines()) < 36
    assert "error: HTTP 500 from the provider" in line_of(text, "worker#14")
    assert "+ 49 done" in text
    assert all(f" worker#{n}  thinking" in text for n in range(51, 61))
    assert "worker#1  done" not in text


def test_line_view_shows_background_delegations_and_invalid_typed_answers() -> None:
    from swarm import OutputInvalid

    out = io.StringIO()
    view = LineView(AgentBoard("lead", frozenset({"reviewer"})), out)
    details = {"path": "lead/reviewer#1", "topic": "", "background": True, "status": "running"}
    view(ToolUseStart(0, "d1", "reviewer"))
    view(ToolResult("d1", "reviewer", False, '{"status": "running"}', details=details))
    view(SubAgentEvent("lead/reviewer#1", OutputInvalid(1, 2, ("missing field 'verdict'",))))
    assert out.getvalue().splitlines() == [
        "[lead] delegates to reviewer",
        "[lead] started lead/reviewer#1 in the background",
        "[lead/reviewer#1] final answer invalid (1 of 2 retries): missing field 'verdict'",
    ]
