"""The report's view of the agents: the timeline with its time axis, the delegation
tree, and each agent's conversation with its tool calls.

A tool call's arguments are shown one by one: a short value on its line, a text of
several lines (the code a ``write_file`` wrote, a patch) as a block of its own, as
written, not as a JSON string with ``\\n`` in it; a long one folded (click to open).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from swarm.report.data import AgentData, CallData, RunData
from swarm.report.text import block, one_line, seconds

__all__ = ["Anchors", "agent_tree", "call_class", "timeline"]

INLINE = 100  # characters of a one-line text argument shown on its line
FOLD_LINES = 30  # lines of a block shown open; longer ones are folded
FOLD_CHARS = 3000  # characters of a block shown open
TICKS = (0.0, 0.25, 0.5, 0.75, 1.0)  # where the time axis is labelled


@dataclass(frozen=True, slots=True)
class Anchors:
    """The ids the page's links go to: one per agent, one per tool call."""

    agents: dict[str, str]
    calls: dict[tuple[str, str], str]

    @classmethod
    def of(cls, agents: list[AgentData]) -> Anchors:
        """Ids for ``agents`` (in tree order) and their calls: ``a3``, ``a3c1``."""
        ids = {agent.path: f"a{n}" for n, agent in enumerate(agents)}
        calls = {
            (agent.path, call.call_id): f"{ids[agent.path]}c{k}"
            for agent in agents
            for k, call in enumerate(agent.calls)
        }
        return cls(ids, calls)


def call_class(call: CallData) -> str:
    """The CSS class of a call: ``deny``, ``err`` (allowed, then failed) or none."""
    if call.decision == "deny":
        return "deny"
    return "err" if call.is_error or call.outcome == "error" else ""


def timeline(run: RunData, agents: list[AgentData], anchors: Anchors) -> str:
    """One row per agent (indented under the agent that delegated to it) with its span,
    model calls and tool calls as bars on a shared time axis."""
    total = max(run.end - run.start, 1e-3)

    def bar(kind: str, start: float, end: float | None, tip: str) -> str:
        left = (start - run.start) / total * 100
        width = ((end if end is not None else run.end) - start) / total * 100
        return (
            f'<div class="{kind}" style="left:{left:.2f}%;width:{width:.2f}%"'
            f' title="{one_line(tip)}"></div>'
        )

    ticks = "".join(
        f'<span style="left:{at * 100:.0f}%">{seconds(total * at)}</span>' for at in TICKS
    )
    axis = f'<div class="who dim">time</div><div class="ticks">{ticks}</div>'
    rows = [f'<div class="row axis">{axis}</div>']
    for agent in agents:
        span = "span err" if agent.error else "span"
        bars = [bar(span, agent.start, agent.end, f"{agent.path}: {agent.stop_reason or 'no end'}")]
        for m in agent.model_calls:
            tip = f"model call: {m.input_tokens} in, {m.output_tokens} out, {m.stop_reason}"
            bars.append(bar("m", m.start, m.end, tip))
        for c in agent.calls:
            tip = f"{c.tool}: {c.decision or '?'} {c.outcome}".strip()
            bars.append(bar(f"t {call_class(c)}".strip(), c.start, c.end, tip))
        mark = "└\u00a0" if agent.depth else ""  # kept beside the name
        rows.append(
            f'<div class="row" data-agent="{one_line(agent.path)}"><div class="who"'
            f' style="padding-left:{agent.depth * 12}px">{mark}'
            f'<a href="#{anchors.agents[agent.path]}">{one_line(agent.name)}</a></div>'
            f'<div class="track">{"".join(bars)}</div></div>'
        )
    return (
        '<h2 id="timeline">Timeline</h2><p class="dim">When each agent and call ran. Grey: an'
        " agent's span. Blue: model calls. Green: tool calls (red: denied, orange: failed)."
        ' Hover a bar for details.</p><div class="timeline">' + "".join(rows) + "</div>"
    )


def _folded(label: str, text: str) -> str:
    """``text`` as a block; folded behind ``label`` when it is long."""
    pre = f'<pre class="code">{block(text)}</pre>'
    lines = text.count("\n") + 1
    if lines <= FOLD_LINES and len(text) <= FOLD_CHARS:
        return pre
    said = f"{one_line(label)} ({lines:,} lines, {len(text):,} characters)"
    return f"<details><summary>{said}</summary>{pre}</details>"


def _arguments(call: CallData) -> str:
    """The call's arguments one by one; texts of many lines as blocks."""
    if call.values is None:
        return f"<pre>{block(call.arguments or '{}')}</pre>"
    if not call.values:
        return '<div class="arg dim">no arguments</div>'
    lines, blocks = [], []  # the short values first, then the blocks
    for key, value in call.values.items():
        name = f'<span class="k">{one_line(key)}</span>'
        if isinstance(value, str) and ("\n" in value or len(value) > INLINE):
            blocks.append(f'<div class="arg">{name}{_folded(key, value)}</div>')
        else:
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            lines.append(f'<div class="arg">{name} <code>{one_line(shown)}</code></div>')
    return "".join(lines + blocks)


def _call(call: CallData, anchor: str) -> str:
    decision = call.decision or "unknown"
    by = f" by {call.guard}" if call.guard else ""
    rule = f" (rule: {call.rule})" if call.rule else ""
    reason = f": {call.reason}" if call.reason and call.decision != "allow" else ""
    outcome = call.outcome or ("error" if call.is_error else "ok" if call.end else "unfinished")
    duration = (
        call.duration
        if call.duration is not None
        else (call.end - call.start if call.end is not None else None)
    )
    audit = (
        f' <span class="dim">audit {one_line(call.audit_hash[:16])}</span>'
        if call.audit_hash
        else ""
    )
    result = f'<div class="arg"><span class="k">result</span>{_folded("result", call.result)}</div>'
    return (
        f'<div class="call {call_class(call)}" id="{anchor}"><b>{one_line(call.tool)}</b>'
        f' <span class="badge">{one_line(decision + by + rule + reason)}</span>'
        f" → {one_line(outcome)}, {one_line(seconds(duration))}{audit}"
        f"{_arguments(call)}" + (result if call.result else "") + "</div>"
    )


def _agent(agent: AgentData, anchors: Anchors) -> str:
    calls = {c.call_id: c for c in agent.calls}
    body = []
    for kind, value in agent.conversation:
        if kind == "call" and value in calls:
            body.append(_call(calls.pop(value), anchors.calls[(agent.path, value)]))
        elif kind == "assistant":
            body.append(f"<pre>{block(value)}</pre>")
        elif kind == "error":
            body.append(f'<p class="bad">error: {one_line(value)}</p>')
        elif kind == "note":
            body.append(f'<p class="dim">{one_line(value)}</p>')
    body += [_call(c, anchors.calls[(agent.path, c.call_id)]) for c in calls.values()]
    denied = sum(c.decision == "deny" for c in agent.calls)
    status = f"error: {agent.error}" if agent.error else agent.stop_reason or "no end"
    tokens = agent.input_tokens + agent.output_tokens
    return (
        f'<details class="agent" id="{anchors.agents[agent.path]}">'
        f'<summary><b title="{one_line(agent.path)}">{one_line(agent.name)}</b>'
        + (' <span class="dim">(background)</span>' if agent.background else "")
        + f' — <span class="{"bad" if agent.error else ""}">{one_line(status)}</span>'
        f" — {tokens:,} tokens, {len(agent.model_calls)} model calls,"
        f" {len(agent.calls)} tool calls"
        + (f', <span class="bad">{denied} denied</span>' if denied else "")
        + f'</summary><div class="body"><p class="dim">{one_line(agent.path)}</p>'
        f"{''.join(body)}</div></details>"
    )


def agent_tree(run: RunData, anchors: Anchors) -> str:
    """Every agent as a node of the delegation tree: an agent's children under it."""
    roots, children = run.children()

    def node(agent: AgentData) -> str:
        kids = "".join(node(kid) for kid in children.get(agent.path, ()))
        return (
            f'<li data-agent="{one_line(agent.path)}">{_agent(agent, anchors)}'
            + (f"<ul>{kids}</ul>" if kids else "")
            + "</li>"
        )

    nodes = "".join(node(root) for root in roots)
    return f'<h2 id="agents">Agents</h2><ul class="tree">{nodes}</ul>'
