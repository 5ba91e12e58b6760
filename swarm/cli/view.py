"""What a person sees while a team runs: a live tree of agents, or plain lines.

``AgentBoard`` turns the event stream into the state of every agent (role, status,
iterations, tokens, denied calls, compactions). ``LiveView`` draws it with rich while
stdout is a terminal; ``LineView`` prints one line per thing worth knowing otherwise.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import IO, Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from swarm._text import cost_text, plural
from swarm.budget import UsageNode
from swarm.events import (
    ContextCompacted,
    Error,
    IterationEnd,
    ReasoningDelta,
    SessionEndEvent,
    StreamEvent,
    SubAgentEvent,
    TextDelta,
    ToolResult,
    ToolUseStart,
)
from swarm.scenario.outcome import RunOutcome, tree_cost
from swarm.scenario.script import role_of
from swarm.transports.models import estimate_cost
from swarm.types import StopReason, Usage

__all__ = ["AgentBoard", "AgentState", "LineView", "LiveView", "print_summary"]

DENIED_PREFIX = "Permission denied"


@dataclass(slots=True)
class AgentState:
    """One agent as the board knows it."""

    path: str
    status: str = "starting"
    iterations: int = 0
    tokens: int = 0
    denied: int = 0
    compactions: int = 0
    last_denial: str = ""
    finished: str | None = None
    children: list[str] = field(default_factory=list)

    @property
    def role(self) -> str:
        return role_of(self.path)


class AgentBoard:
    """The state of every agent of a run, updated from its events."""

    def __init__(self, root: str, roles: frozenset[str] = frozenset()) -> None:
        self.root = root
        self.roles = roles
        self.agents: dict[str, AgentState] = {root: AgentState(root)}

    def agent(self, path: str) -> AgentState:
        state = self.agents.get(path)
        if state is None:
            state = self.agents[path] = AgentState(path)
            if path != self.root:
                parent = path.rsplit("/", 1)[0] if "/" in path else self.root
                self.agent(parent).children.append(path)
        return state

    def update(self, event: StreamEvent) -> tuple[AgentState, StreamEvent]:
        """Apply one event; returns the agent it concerns and the unwrapped event."""
        path = self.root
        while isinstance(event, SubAgentEvent):
            path, event = event.path, event.event
        state = self.agent(path)
        match event:
            case TextDelta() | ReasoningDelta():
                state.status = "thinking"
            case ToolUseStart(name=name):
                state.status = f"delegating to {name}" if name in self.roles else f"calling {name}"
            case ToolResult(is_error=True, content=content) if content.startswith(DENIED_PREFIX):
                state.denied += 1
                state.last_denial = content
            case IterationEnd(usage=usage):
                state.iterations += 1
                state.tokens += usage.total_tokens
                state.status = "working"
            case ContextCompacted():
                state.compactions += 1
            case SessionEndEvent(stop_reason=reason):
                state.finished = reason.value
                state.status = "done" if reason.value == "end_turn" else f"stopped: {reason.value}"
            case _:
                pass
        return state, event

    def tree(self) -> Tree:
        """The board as a rich tree."""

        def label(state: AgentState) -> Text:
            name = state.path.rsplit("/", 1)[-1]
            colour = "green" if state.status == "done" else "red" if state.finished else "yellow"
            text = Text.assemble((name, "bold"), "  ", (state.status, colour))
            text.append(f"  it {state.iterations}  {state.tokens:,} tok", style="dim")
            if state.denied:
                text.append(f"  denied {state.denied}", style="bold red")
            if state.compactions:
                text.append(f"  compacted {state.compactions}x", style="magenta")
            return text

        def grow(node: Tree, state: AgentState) -> None:
            for child in state.children:
                grow(node.add(label(self.agents[child])), self.agents[child])

        root = self.agents[self.root]
        tree = Tree(label(root))
        grow(tree, root)
        return tree


class LiveView:
    """A rich live tree of the agents, redrawn as events arrive."""

    def __init__(self, board: AgentBoard, console: Console) -> None:
        self.board = board
        self.live = Live(board.tree(), console=console, refresh_per_second=8, transient=False)

    def __enter__(self) -> LiveView:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.live.update(self.board.tree())
        self.live.__exit__(*exc)

    def __call__(self, event: StreamEvent) -> None:
        self.board.update(event)
        self.live.update(self.board.tree())


class LineView:
    """Plain output for pipes and logs: one line per delegation, tool call, denial,
    compaction, error and agent end."""

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
                self.out.write(f"[{state.path}] {line}\n")
                self.out.flush()
            except BrokenPipeError:  # `swarm run ... | head`: the run goes on, unseen
                self.closed = True


def usage_table(tree: UsageNode) -> Table:
    """Usage and estimated cost per agent and per subtree."""
    table = Table(title="Usage", show_lines=False)
    for column, justify in (
        ("agent", "left"),
        ("iterations", "right"),
        ("tokens in", "right"),
        ("tokens out", "right"),
        ("subtree tokens", "right"),
        ("cost", "right"),
        ("end", "left"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]

    def add(node: UsageNode, depth: int) -> None:
        cost = estimate_cost(node.model, node.usage) if node.model else None
        table.add_row(
            "  " * depth + node.path.rsplit("/", 1)[-1],
            str(node.iterations),
            f"{node.usage.input_tokens:,}",
            f"{node.usage.output_tokens:,}",
            f"{node.total.total_tokens:,}",
            cost_text(cost, failed=node.stop_reason not in (None, StopReason.end_turn)),
            node.stop_reason.value if node.stop_reason else "-",
        )
        for child in node.children:
            add(child, depth + 1)

    add(tree, 0)
    return table


def print_summary(console: Console, outcome: RunOutcome) -> None:
    """The end of a run: final answer, usage per agent and subtree, calls, record."""
    parts: list[RenderableType] = [Text("\nFinal answer", style="bold")]
    parts.append(Text(outcome.final_text or "(no answer)"))
    if outcome.usage_tree is not None:
        if console.is_terminal:
            parts.append(usage_table(outcome.usage_tree))
        else:
            tree = outcome.usage_tree.render(_node_cost)
            parts.append(Text("Usage per agent (and subtree):\n" + tree))
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
    for path, tool, reason in outcome.denied_calls:
        parts.append(Text(f"  denied: {path} {tool}: {reason}", style="red"))
    console.print(Group(*parts), soft_wrap=not console.is_terminal)
    # never wrapped, on a terminal either: a path cut in two cannot be copied
    console.print(f"Run record: {outcome.record_dir}", soft_wrap=True, markup=False)


def _node_cost(model: str | None, usage: Usage) -> float | None:
    return estimate_cost(model, usage) if model else None
