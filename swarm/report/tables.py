"""The report's tables: the files the run changed (with the agents that changed each),
the approvals asked for, and usage per agent and subtree.

Each table cell carries its column's name (``data-label``), so on a narrow screen the
page's styles show a row as a card of ``name: value`` lines that wrap, instead of a
table wider than the screen.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from swarm.report.data import RunData
from swarm.report.text import block, one_line

__all__ = ["approvals", "files", "usage"]


def _table(table_id: str, columns: Sequence[str], rows: list[list[tuple[str, str]]]) -> str:
    """A table of ``rows``, each a list of (cell HTML, extra attributes) per column."""
    head = "".join(f"<th>{one_line(column)}</th>" for column in columns)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td data-label="{one_line(column)}"{extra}>{cell}</td>'
            for column, (cell, extra) in zip(columns, row, strict=True)
        )
        + "</tr>"
        for row in rows
    )
    return (
        f'<table class="cards" id="{table_id}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


def files(run: RunData) -> str:
    """The files added, changed and deleted, each with the agents that did it and its
    diff (folded); compiled Python caches counted below."""
    changes = run.changes
    caches = (
        f'<p class="dim">{changes.caches:,} compiled Python cache'
        f" file{'s' if changes.caches != 1 else ''} (<code>__pycache__/</code>,"
        " <code>*.pyc</code>) changed too; not listed.</p>"
        if changes.caches
        else ""
    )
    if not changes.files:
        none = "No file in the workspace was added, changed or deleted."
        return f'<h2>Files</h2><p id="files">{none}</p>{caches}'
    items = []
    for change in changes.files:
        lines = []
        for line in change.diff.removesuffix("\n").split("\n") if change.diff else ():
            cls = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
            lines.append(f'<span class="{cls}">{block(line)}</span>' if cls else block(line))
        diff = "\n".join(lines) or one_line(change.detail or "(no diff: a binary or large file)")
        by = ", ".join(f"<code>{one_line(agent)}</code>" for agent in change.agents)
        agents = f' <span class="agent">by {by}</span>' if by else ""
        items.append(
            f"<details><summary>{one_line(change.kind)}: <code>{one_line(change.path)}</code>"
            f"{agents}</summary><pre>{diff}</pre></details>"
        )
    truncated = (
        f'<p class="dim">The comparison stopped short: {one_line(changes.reason)}</p>'
        if changes.truncated
        else ""
    )
    return f'<h2>Files</h2><div id="files">{"".join(items)}</div>{caches}{truncated}'


def approvals(summary: dict[str, Any]) -> str:
    """Every call asked about: held, approved or denied, who answered, through what."""
    requests = [r for r in summary.get("approvals") or () if isinstance(r, dict)]
    if not requests:
        return ""
    rows = []
    for request in requests:
        found = request.get("answer")
        answer: dict[str, Any] = found if isinstance(found, dict) else {}
        state = str(request.get("state") or "")
        cls = ' class="bad"' if state != "approved" else ""
        arguments = json.dumps(request.get("arguments"), default=str, ensure_ascii=False)
        rows.append(
            [
                (one_line(request.get("id")), ""),
                (one_line("held" if state == "pending" else state), cls),
                (one_line(request.get("path")), ""),
                (one_line(request.get("tool")), ""),
                (f"<code>{one_line(arguments)}</code>", ""),
                (one_line(request.get("rule") or "-"), ""),
                (one_line(answer.get("who") or "-"), ""),
                (one_line(answer.get("via") or "-"), ""),
                (one_line(answer.get("reason") or ""), ""),
            ]
        )
    columns = ("id", "state", "agent", "tool", "arguments", "rule", "who", "via", "reason")
    return "<h2>Approvals</h2>" + _table("approvals", columns, rows)


def usage(summary: dict[str, Any]) -> str:
    """Tokens and cost per agent and per subtree, as the delegation tree."""
    tree = summary.get("usage_tree")
    if not isinstance(tree, dict):
        return ""
    rows: list[list[tuple[str, str]]] = []

    def dollars(value: Any) -> str:
        return one_line(f"${value:.4f}" if isinstance(value, int | float) else "-")

    def number(node: dict[str, Any], key: str) -> tuple[str, str]:
        return f"{int(node.get(key) or 0):,}", ""

    def walk(node: dict[str, Any], depth: int) -> None:
        name = str(node.get("path", "")).rsplit("/", 1)[-1]
        subtree = dollars(node.get("subtree_cost_usd")) if node.get("children") else "-"
        rows.append(
            [
                (one_line(name), f' style="padding-left:{10 + depth * 14}px"'),
                number(node, "input_tokens"),
                number(node, "cache_read_tokens"),
                number(node, "cache_write_tokens"),
                number(node, "output_tokens"),
                number(node, "subtree_tokens"),
                (dollars(node.get("cost_usd")), ""),
                (subtree, ""),
                (one_line(node.get("stop_reason") or "-"), ""),
            ]
        )
        for child in node.get("children") or ():
            if isinstance(child, dict):
                walk(child, depth + 1)

    walk(tree, 0)
    columns = (
        "agent",
        "in",
        "cache read",
        "cache write",
        "out",
        "subtree",
        "cost",
        "subtree cost",
        "end",
    )
    return '<h2 id="usage">Usage per agent and subtree</h2>' + _table("usage-table", columns, rows)
