"""The usage table of the end summary: tokens and cost per agent and per subtree, laid
out for the terminal it is printed on.

Every number stays whole on one line. On a wide terminal the table has a column per
count; on a narrower one it drops the columns a reader needs least first (iterations,
then the cache parts, then the subtree's tokens and cost); on one too narrow for even
the shortest table it becomes the indented text tree printed when the output is not a
terminal, whose lines wrap between words.
"""

from __future__ import annotations

from collections.abc import Iterator

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from swarm._text import cost_text
from swarm._visible import visible
from swarm.budget import UsageNode
from swarm.record.outcome import node_cost, tree_cost
from swarm.types import StopReason

__all__ = ["UsageTable", "usage_table"]

_HEADS = {
    "agent": "agent",
    "iterations": "iterations",
    "in": "tokens in",
    "cache read": "cache read",
    "cache write": "cache write",
    "out": "tokens out",
    "subtree": "subtree tokens",
    "cost": "cost",
    "subtree cost": "subtree cost",
    "end": "end",
}
_LAYOUTS = (  # widest first; the first that fits is printed
    tuple(_HEADS),
    ("agent", "in", "cache read", "cache write", "out", "subtree", "cost", "subtree cost", "end"),
    ("agent", "in", "out", "subtree", "cost", "subtree cost", "end"),
    ("agent", "in", "out", "cost", "subtree cost", "end"),
    ("agent", "in", "out", "cost", "end"),
)
_WIDE = 10_000  # columns a table is laid out in to measure it


def _rows(tree: UsageNode) -> Iterator[dict[str, str]]:
    def visit(node: UsageNode, depth: int) -> Iterator[dict[str, str]]:
        failed = node.stop_reason not in (None, StopReason.end_turn)
        yield {
            "agent": "  " * depth + visible(node.path.rsplit("/", 1)[-1]),
            "iterations": str(node.iterations),
            "in": f"{node.usage.input_tokens:,}",
            "cache read": f"{node.usage.cache_read_tokens:,}",
            "cache write": f"{node.usage.cache_write_tokens:,}",
            "out": f"{node.usage.output_tokens:,}",
            "subtree": f"{node.total.total_tokens:,}",
            "cost": cost_text(node_cost(node), failed=failed),
            "subtree cost": cost_text(tree_cost(node), failed=failed) if node.children else "",
            "end": node.stop_reason.value if node.stop_reason else "-",
        }
        for child in node.children:
            yield from visit(child, depth + 1)

    return visit(tree, 0)


class UsageTable:
    """Usage and cost per agent and per subtree (tokens in counts the cached parts,
    shown beside it: each has its own price), as wide as the terminal allows."""

    def __init__(self, tree: UsageNode) -> None:
        self.tree = tree
        self.rows = list(_rows(tree))

    def table(self, columns: tuple[str, ...], short: bool) -> Table:
        """The table of ``columns``, every cell on one line; ``short`` headings
        (``in`` for ``tokens in``) when the table is not the widest."""
        table = Table(
            title="Usage",
            box=box.SIMPLE_HEAD,
            collapse_padding=True,
            pad_edge=False,
            show_edge=False,
        )
        for column in columns:
            justify = "left" if column in ("agent", "end") else "right"
            head = column if short else _HEADS[column]
            table.add_column(head, justify=justify, no_wrap=True)  # type: ignore[arg-type]
        for row in self.rows:
            table.add_row(*(Text(row[column]) for column in columns))
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for number, columns in enumerate(_LAYOUTS):
            table = self.table(columns, short=number > 0)
            lines = console.render_lines(table, options.update_width(_WIDE), pad=False)
            if max(Segment.get_line_length(line) for line in lines) <= options.max_width:
                yield table
                return
        yield Text(
            "Usage per agent (and subtree):\n"
            + visible(self.tree.render(cost=True), multiline=True)
        )


def usage_table(tree: UsageNode) -> UsageTable:
    """The usage table of ``tree`` (see ``UsageTable``)."""
    return UsageTable(tree)
