"""What a person sees while a team runs: a live tree of agents, or plain lines.

``AgentBoard`` turns the event stream into the state of every agent (role, status,
iterations, tokens, denied calls, compactions). ``LiveView`` draws it with rich while
stdout is a terminal; ``LineView`` prints one line per thing worth knowing otherwise.
"""

from __future__ import annotations

import contextlib
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text
from rich.tree import Tree

from swarm._text import cost_text, plural
from swarm._visible import visible
from swarm.approvals import APPROVALS_FILE, ApprovalStore
from swarm.cli.board import DENIED_PREFIX, AgentBoard, AgentState, one_line
from swarm.cli.usage import usage_table
from swarm.events import (
    ApprovalRequested,
    ContextCompacted,
    Error,
    OutputInvalid,
    SessionEndEvent,
    StreamEvent,
    ToolResult,
    ToolUseStart,
)
from swarm.record.outcome import RunOutcome, tree_cost
from swarm.types import StopReason

__all__ = ["AgentBoard", "AgentState", "LineView", "LiveView", "print_summary"]

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


def _quiet(state: AgentState) -> bool:
    """Finished well, with nothing to point out: the first to fold away in a big tree."""
    return state.finished in ("end_turn", "max_tokens") and not state.denied and not state.children


def render_board(board: AgentBoard, *, max_lines: int | None = None) -> Tree:
    """The board as a rich tree: per agent a spinner while it runs, its name, what it is
    doing, elapsed time, iterations and tokens, and the latest line of a running tool.

    With ``max_lines`` (the terminal's height), a tree with more agents than that folds
    the sub-agents that finished well without a denial into one ``+ N done`` line per
    parent, so running ones and failures stay on screen."""
    now = board.clock()
    fold = max_lines is not None and len(board.agents) > max_lines

    def label(state: AgentState) -> Text:
        activity = board.activity(state)
        running = state.finished is None
        if running:
            colour = "red" if activity.startswith("denied") else "yellow"
            mark = _SPINNER[int(now * 10) % len(_SPINNER)]
        else:
            colour = "green" if activity == "done" else "red"
            mark = "✓" if activity == "done" else "✗"
        text = Text.assemble(
            (mark + " ", colour), (visible(state.name), "bold"), "  ", (activity, colour)
        )
        text.append(
            f"  {_duration(state.elapsed(now))}  it {state.iterations}  {state.tokens:,} tok",
            style="dim",
        )
        if state.cached:
            text.append(f" ({state.cached:,} cached)", style="dim")
        if state.cost_usd is not None:
            text.append(f"  ${state.cost_usd:.4f}", style="dim")
        if state.denied:
            text.append(f"  denied {state.denied}", style="bold red")
        if state.compactions:
            text.append(f"  compacted {state.compactions}x", style="magenta")
        if running and state.progress:
            text.append(f"\n  {visible(state.progress)}", style="dim italic")
        return text

    def grow(node: Tree, state: AgentState) -> None:
        folded = 0
        for child in state.children:
            if fold and _quiet(board.agents[child]):
                folded += 1
                continue
            grow(node.add(label(board.agents[child])), board.agents[child])
        if folded:
            node.add(Text(f"+ {folded} done", style="green dim"))

    root = board.agents[board.root]
    tree = Tree(label(root))
    grow(tree, root)
    return tree


class LiveView:
    """A rich live tree of the agents, redrawn as events arrive and several times a
    second (spinners, elapsed times). Anything written to stdout or stderr while it runs
    (log lines) is printed above the live region; ``paused()`` stops the redraw while a
    person answers a prompt. On exit, agents that never ended are shown ``cancelled``."""

    def __init__(
        self, board: AgentBoard, console: Console, *, refresh_per_second: float = 8
    ) -> None:
        self.board = board
        self.console = console
        self.refresh_per_second = refresh_per_second
        self._lock = threading.Lock()
        self.live = self._new_live()

    def _new_live(self) -> Live:
        return Live(
            console=self.console,
            refresh_per_second=self.refresh_per_second,
            transient=False,
            get_renderable=self._render,
            redirect_stdout=True,
            redirect_stderr=True,
        )

    def _render(self) -> Tree:
        with self._lock:
            return render_board(self.board, max_lines=max(4, self.console.size.height - 4))

    def __enter__(self) -> LiveView:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        with self._lock:
            self.board.stop_unfinished("cancelled")
        self.live.refresh()
        self.live.__exit__(*exc)

    def __call__(self, event: StreamEvent) -> None:
        with self._lock:
            self.board.update(event)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Stop redrawing (and give back stdout and stderr) while the block runs, e.g. a
        prompt waiting for an answer; redraw below it afterwards."""
        self.live.stop()
        try:
            yield
        finally:
            # A new region: restarting the old one would first move the cursor up over
            # its last frame's height, onto the prompt and the answer.
            self.live = self._new_live()
            self.live.start(refresh=True)


class LineView:
    """Plain output for pipes and logs: one line per delegation (a background one says
    so), tool call, denial, invalid typed answer, compaction, error and agent end."""

    def __init__(self, board: AgentBoard, out: IO[str]) -> None:
        self.board = board
        self.out = out
        self.closed = False

    def __enter__(self) -> LineView:
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.closed:
            with contextlib.suppress(BrokenPipeError):
                self.out.flush()

    def __call__(self, event: StreamEvent) -> None:
        state, inner = self.board.update(event)
        line = None
        match inner:
            case ToolUseStart(name=name):
                verb = "delegates to" if name in self.board.roles else "calls"
                line = f"{verb} {name}"
            case ToolResult(is_error=True, content=content) if content.startswith(DENIED_PREFIX):
                line = f"DENIED {inner.name}: {content}"
            case ToolResult(is_error=True, name=name, content=content):
                line = f"{name} failed: {content.splitlines()[0] if content else ''}"
            case ToolResult(details={"background": True, "path": str(path)}):
                line = f"started {path} in the background"
            case OutputInvalid(attempt=attempt, retries=retries, problems=problems):
                line = f"final answer invalid ({attempt} of {retries} retries): " + "; ".join(
                    problems
                )
            case ApprovalRequested(name=name, request_id=number, reason=reason, held=held):
                how = "held for approval" if held else "asks for approval"
                line = f"{name} {how} (request {number}): {one_line(reason, 120)}"
            case ContextCompacted(messages_before=before, messages_after=after):
                line = f"compacted its context: {before} -> {plural(after, 'message')}"
            case Error():
                line = f"error: {inner.message}"
            case SessionEndEvent(stop_reason=reason):
                line = f"finished ({reason.value}) after {plural(state.iterations, 'iteration')}"
            case _:
                pass
        if line is not None and not self.closed:
            try:
                self.out.write(visible(f"[{state.path}] {line}") + "\n")
                self.out.flush()
            except BrokenPipeError:  # `swarm run ... | head`: the run goes on, unseen
                self.closed = True


def print_summary(console: Console, outcome: RunOutcome, board: AgentBoard | None = None) -> None:
    """The end of a run: the final answer, usage per agent and subtree, every error and
    denial with its agent's path, the files added, changed and deleted in the workspace,
    the totals, and where the record is."""
    parts: list[RenderableType] = [Text("\nFinal answer", style="bold")]
    # indented, as every line the model wrote is: none of its lines can pass for one of ours
    answer = textwrap.indent(visible(outcome.final_text, multiline=True), "  ")
    parts.append(Text(answer or "  (no answer)"))
    if outcome.usage_tree is not None:
        if console.is_terminal:
            parts.append(usage_table(outcome.usage_tree))
        else:
            tree = outcome.usage_tree.render(cost=True)
            parts.append(Text("Usage per agent (and subtree):\n" + visible(tree, multiline=True)))
    errors = _errors(outcome, board)
    if errors:
        parts.append(Text(f"Errors ({len(errors)}):", style="bold red"))
        parts += [Text(visible(f"  {path}: {reason}"), style="red") for path, reason in errors]
    if outcome.denied_calls:
        parts.append(Text(f"Denied calls ({len(outcome.denied_calls)}):", style="bold red"))
    for path, tool, reason, _ in outcome.denied_calls:
        parts.append(Text(visible(f"  denied: {path} {tool}: {reason}"), style="red"))
    parts += _approvals(outcome)
    parts.append(_files(outcome))
    cost = tree_cost(outcome.usage_tree)
    shown_cost = cost_text(cost, failed=outcome.stop_reason != StopReason.end_turn)
    shown_cost = "~" + shown_cost if shown_cost.startswith("$") else shown_cost
    parts.append(
        Text(
            f"Stop reason: {outcome.stop_reason.value}.  Tool calls: {outcome.allowed} allowed,"
            f" {outcome.denied} denied.  Tokens: {outcome.usage.total_tokens:,}"
            + f"  ({shown_cost})"
            + f".  Time: {outcome.duration:.1f}s."
        )
    )
    console.print(Group(*parts), soft_wrap=not console.is_terminal)
    # never wrapped, on a terminal either: a path cut in two cannot be copied
    console.print(f"Run record: {outcome.record_dir}", soft_wrap=True, markup=False)


def _errors(outcome: RunOutcome, board: AgentBoard | None) -> list[tuple[str, str]]:
    """Each agent's error once, with its full path (the entry agent's events carry none)."""
    root = board.root if board is not None else outcome.scenario
    found: dict[str, str] = {}
    for path, reason in outcome.agent_errors:
        found.setdefault(path or root, one_line(reason, 200))
    for path, reason in board.errors() if board is not None else ():
        found.setdefault(path, reason)
    return list(found.items())


def _approvals(outcome: RunOutcome) -> list[RenderableType]:
    """Every call asked about in the run: held, approved or denied, and who answered."""
    requests = ApprovalStore(outcome.record_dir / APPROVALS_FILE).requests()
    if not requests:
        return []
    parts: list[RenderableType] = [Text(f"Approvals ({len(requests)}):", style="bold")]
    styles = {"pending": "yellow", "approved": "green", "denied": "red"}
    for request in requests:
        answer = request.answer or {}
        state = "held" if request.state == "pending" else request.state
        said = f" by {answer.get('who')} via {answer.get('via')}" if answer else ""
        why = f": {answer.get('reason')}" if answer.get("reason") else ""
        line = f"  {state} {request.id}: {request.path} {request.tool}{said}{why}"
        parts.append(Text(visible(line), style=styles[request.state]))
    return parts


def _files(outcome: RunOutcome) -> Text:
    changes = outcome.changes
    caches = (
        f"{changes.caches} compiled Python cache file{'s' if changes.caches != 1 else ''}"
        " (__pycache__/, *.pyc)"
    )
    if not changes.files:
        none = "Files: no file in the workspace was added, changed or deleted"
        return Text(f"{none}, except {caches}." if changes.caches else f"{none}.")
    text = Text("Files:", style="bold")
    for kind, mark, style in (
        ("added", "+", "green"),
        ("changed", "~", "yellow"),
        ("deleted", "-", "red"),
    ):
        for change in changes.files:
            if change.kind == kind:
                said = f"{kind}: {visible(change.detail)}" if change.detail else kind
                by = ", ".join(visible(agent) for agent in change.agents)
                by = f"  by {by}" if by else ""
                text.append(f"\n  {mark} {visible(change.path)}  ({said}){by}", style=style)
    if changes.caches:
        text.append(f"\n  and {caches}, not listed", style="dim")
    if changes.truncated:
        why = changes.reason or "the workspace has more files than were compared"
        text.append(f"\n  (the comparison of files stopped short: {why})", style="dim")
    return text
