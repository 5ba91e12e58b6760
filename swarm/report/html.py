"""The run report as one self-contained HTML file.

Everything is inline (styles, a small script) and nothing is fetched: the page's
Content-Security-Policy allows no source at all except its own style and the one script
whose hash it names, so even a string that escaped escaping could neither run nor load
anything. Every value from the run (the model's text, tool arguments and results, file
names, diffs) is HTML-escaped and made ``visible`` (control characters, bidirectional
overrides and invisible characters written as ``\\x1b``, ``\\u202e``; newlines kept only in
blocks: an answer, a diff, a tool's arguments and result, the task). The report is built
on the server side, so it reads the same with scripts off, and a run of hundreds of agents
stays one scrollable page.
"""

from __future__ import annotations

import base64
import hashlib
import json
from html import escape
from typing import Any

from swarm._visible import visible
from swarm.report.data import AgentData, CallData, RunData

__all__ = ["render_html"]

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d232a;background:#fafbfc}
header,main{padding:12px 20px}header{background:#fff;border-bottom:1px solid #dde}
h1{font-size:20px;margin:0 0 6px}h2{font-size:16px;margin:22px 0 8px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}
dt{color:#667}dd{margin:0;white-space:pre-wrap}
.ok{color:#17703a}.bad{color:#b3261e;font-weight:600}.dim{color:#778}
.tools{position:sticky;top:0;background:#fafbfc;padding:6px 0;z-index:2}
.row{display:grid;grid-template-columns:260px 1fr;align-items:center;height:20px}
.who{overflow:hidden;white-space:nowrap;text-overflow:ellipsis;font-size:12px}
.who a{color:inherit;text-decoration:none}
.track{position:relative;height:14px;background:#eef0f3}
.track div{position:absolute;top:0;height:14px;min-width:2px}
.span{background:#cfd8e3}.m{background:#5b8def;top:2px!important;height:10px!important}
.t{background:#35a06a;top:4px!important;height:6px!important}.t.deny{background:#d93f3f}
.t.err{background:#e39b2d}.span.err{background:#f3c3c0}
details.agent{background:#fff;border:1px solid #dde;border-radius:4px;margin:4px 0}
details.agent>summary{padding:4px 8px;cursor:pointer}
.body{padding:4px 12px 10px}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;padding:6px;background:#f3f4f6;
font:12px/1.4 ui-monospace,monospace;max-height:320px;overflow:auto}
.call{border-left:3px solid #35a06a;padding-left:8px;margin:8px 0}
.call.deny{border-color:#d93f3f}.call.err{border-color:#e39b2d}
.badge{display:inline-block;padding:0 6px;border-radius:3px;background:#e6f4ea;font-size:12px}
.deny .badge{background:#fde7e6}
table{border-collapse:collapse;font-size:13px}td,th{padding:2px 10px;text-align:right}
td:first-child,th:first-child{text-align:left}tr:nth-child(even){background:#f1f3f6}
.add{color:#17703a}.del{color:#b3261e}
"""

_JS = """
const q=document.getElementById('filter');
q.addEventListener('input',()=>{const v=q.value.toLowerCase();
for(const e of document.querySelectorAll('[data-agent]')){
e.style.display=e.dataset.agent.toLowerCase().includes(v)?'':'none';}});
for(const [id,open] of [['expand',true],['collapse',false]]){
document.getElementById(id).addEventListener('click',()=>{
for(const d of document.querySelectorAll('details.agent')){d.open=open;}});}
"""


def _e(value: Any) -> str:
    """A value shown on one line (a name, a path, a reason): HTML-escaped, visible."""
    return escape(visible(str(value)), quote=True)


def _block(value: Any) -> str:
    """A value shown as a block of lines (``<pre>``): newlines and tabs kept."""
    return escape(visible(str(value), multiline=True), quote=True)


def _seconds(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s"


def _header(run: RunData) -> str:
    manifest, summary = run.manifest, run.summary
    config = manifest.get("config") or {}
    usage = summary.get("usage") or {}
    tokens = int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
    cost = summary.get("cost_usd")
    team = (manifest.get("team") or {}).get("dir") or config.get("team") or "-"
    stop = summary.get("stop_reason") or "(no summary: the run is going on or was killed)"
    rows = [
        ("Team", f"{team} (entry: {config.get('entry') or '-'})"),
        ("Model", manifest.get("model") or "-"),
        ("Stop reason", stop),
        (
            "Tokens",
            f"{tokens:,} ({usage.get('input_tokens', 0):,} in, "
            f"{usage.get('output_tokens', 0):,} out)",
        ),
        ("Cost", f"${cost:.4f}" if isinstance(cost, int | float) else "unknown"),
        ("Duration", _seconds(summary.get("duration_seconds"))),
        ("Agents", str(len(run.agents))),
    ]
    cells = f"<dt>Task</dt><dd>{_block(config.get('task') or '-')}</dd>"  # a task has lines
    cells += "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in rows)
    audit_class = "ok" if run.audit_ok else "bad"
    cells += f'<dt>Audit log</dt><dd class="{audit_class}" id="audit">{_block(run.audit)}</dd>'
    title = f"Run {manifest.get('run_id') or summary.get('run_id') or run.run_dir.name}"
    return f"<header><h1>{_e(title)}</h1><dl>{cells}</dl></header>"


def _call_class(call: CallData) -> str:
    if call.decision == "deny":
        return "deny"
    return "err" if call.is_error else ""


def _timeline(run: RunData, agents: list[AgentData], ids: dict[str, str]) -> str:
    total = max(run.end - run.start, 1e-3)

    def bar(kind: str, start: float, end: float | None, tip: str) -> str:
        left = (start - run.start) / total * 100
        width = ((end if end is not None else run.end) - start) / total * 100
        return (
            f'<div class="{kind}" style="left:{left:.2f}%;width:{width:.2f}%"'
            f' title="{_e(tip)}"></div>'
        )

    rows = []
    for agent in agents:
        bars = [
            bar(
                "span err" if agent.error else "span",
                agent.start,
                agent.end,
                f"{agent.path}: {agent.stop_reason or 'no end'}",
            )
        ]
        for m in agent.model_calls:
            tip = f"model call: {m.input_tokens} in, {m.output_tokens} out, {m.stop_reason}"
            bars.append(bar("m", m.start, m.end, tip))
        for c in agent.calls:
            tip = f"{c.tool}: {c.decision or '?'} {c.outcome}".strip()
            bars.append(bar(f"t {_call_class(c)}".strip(), c.start, c.end, tip))
        indent = agent.depth * 14
        rows.append(
            f'<div class="row" data-agent="{_e(agent.path)}"><div class="who"'
            f' style="padding-left:{indent}px"><a href="#{ids[agent.path]}">{_e(agent.name)}</a>'
            f'</div><div class="track">{"".join(bars)}</div></div>'
        )
    return (
        '<h2>Timeline</h2><p class="dim">Grey: an agent\'s span. Blue: model calls. Green:'
        " tool calls (red: denied, orange: failed).</p>" + "".join(rows)
    )


def _call(call: CallData) -> str:
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
    audit = f' <span class="dim">audit {_e(call.audit_hash[:16])}</span>' if call.audit_hash else ""
    return (
        f'<div class="call {_call_class(call)}"><b>{_e(call.tool)}</b>'
        f' <span class="badge">{_e(decision)}{_e(by)}{_e(rule)}{_e(reason)}</span>'
        f" → {_e(outcome)}, {_e(_seconds(duration))}{audit}"
        f"<pre>{_block(call.arguments or '{}')}</pre>"
        + (f"<pre>{_block(call.result)}</pre>" if call.result else "")
        + "</div>"
    )


def _agents(agents: list[AgentData], ids: dict[str, str]) -> str:
    parts = ["<h2>Agents</h2>"]
    for agent in agents:
        calls = {c.call_id: c for c in agent.calls}
        body = []
        for kind, value in agent.conversation:
            if kind == "call" and value in calls:
                body.append(_call(calls.pop(value)))
            elif kind == "assistant":
                body.append(f"<pre>{_block(value)}</pre>")
            elif kind == "error":
                body.append(f'<p class="bad">error: {_e(value)}</p>')
            elif kind == "note":
                body.append(f'<p class="dim">{_e(value)}</p>')
        body += [_call(c) for c in calls.values()]  # calls that never finished
        denied = sum(c.decision == "deny" for c in agent.calls)
        status = f"error: {agent.error}" if agent.error else agent.stop_reason or "no end"
        tokens = agent.input_tokens + agent.output_tokens
        parts.append(
            f'<details class="agent" id="{ids[agent.path]}" data-agent="{_e(agent.path)}">'
            f"<summary><b>{_e(agent.path)}</b>"
            + (' <span class="dim">(background)</span>' if agent.background else "")
            + f" — {_e(status)} — {tokens:,} tokens,"
            f" {len(agent.model_calls)} model calls, {len(agent.calls)} tool calls"
            + (f', <span class="bad">{denied} denied</span>' if denied else "")
            + f'</summary><div class="body">{"".join(body)}</div></details>'
        )
    return "".join(parts)


def _files(run: RunData) -> str:
    changes = run.changes
    if not changes.files:
        none = "No file in the workspace was added, changed or deleted."
        return f'<h2>Files</h2><p id="files">{none}</p>'
    items = []
    for change in changes.files:
        lines = []
        for line in change.diff.removesuffix("\n").split("\n") if change.diff else ():
            cls = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
            lines.append(f'<span class="{cls}">{_block(line)}</span>' if cls else _block(line))
        diff = "\n".join(lines) or "(no diff: a binary or large file)"
        by = ", ".join(f"<code>{_e(agent)}</code>" for agent in change.agents)
        agents = f' <span class="agent">by {by}</span>' if by else ""
        items.append(
            f"<details><summary>{_e(change.kind)}: <code>{_e(change.path)}</code>{agents}"
            f"</summary><pre>{diff}</pre></details>"
        )
    return f'<h2>Files</h2><div id="files">{"".join(items)}</div>'


def _approvals(summary: dict[str, Any]) -> str:
    """Every call asked about: held, approved or denied, who answered, through what."""
    requests = [r for r in summary.get("approvals") or () if isinstance(r, dict)]
    if not requests:
        return ""
    rows = []
    for request in requests:
        found = request.get("answer")
        answer: dict[str, Any] = found if isinstance(found, dict) else {}
        state = str(request.get("state") or "")
        cls = {"approved": "", "denied": "bad"}.get(state, "bad")
        rows.append(
            f'<tr><td>{_e(request.get("id"))}</td><td class="{cls}">'
            f"{_e('held' if state == 'pending' else state)}</td>"
            f"<td>{_e(request.get('path'))}</td><td>{_e(request.get('tool'))}</td>"
            f"<td><code>{_e(json.dumps(request.get('arguments'), default=str))}</code></td>"
            f"<td>{_e(request.get('rule') or '-')}</td>"
            f"<td>{_e(answer.get('who') or '-')}</td><td>{_e(answer.get('via') or '-')}</td>"
            f"<td>{_e(answer.get('reason') or '')}</td></tr>"
        )
    head = (
        "<tr><th>id</th><th>state</th><th>agent</th><th>tool</th><th>arguments</th>"
        "<th>rule</th><th>who</th><th>via</th><th>reason</th></tr>"
    )
    return f'<h2>Approvals</h2><table id="approvals">{head}{"".join(rows)}</table>'


def _usage(summary: dict[str, Any]) -> str:
    tree = summary.get("usage_tree")
    if not isinstance(tree, dict):
        return ""
    rows = []

    def dollars(value: Any) -> str:
        return _e(f"${value:.4f}" if isinstance(value, int | float) else "-")

    def walk(node: dict[str, Any], depth: int) -> None:
        name = str(node.get("path", "")).rsplit("/", 1)[-1]
        subtree = dollars(node.get("subtree_cost_usd")) if node.get("children") else ""
        rows.append(
            f'<tr><td style="padding-left:{10 + depth * 14}px">{_e(name)}</td>'
            f"<td>{int(node.get('input_tokens') or 0):,}</td>"
            f"<td>{int(node.get('cache_read_tokens') or 0):,}</td>"
            f"<td>{int(node.get('cache_write_tokens') or 0):,}</td>"
            f"<td>{int(node.get('output_tokens') or 0):,}</td>"
            f"<td>{int(node.get('subtree_tokens') or 0):,}</td>"
            f"<td>{dollars(node.get('cost_usd'))}</td><td>{subtree}</td>"
            f"<td>{_e(node.get('stop_reason') or '-')}</td></tr>"
        )
        for child in node.get("children") or ():
            if isinstance(child, dict):
                walk(child, depth + 1)

    walk(tree, 0)
    head = (
        "<tr><th>agent</th><th>in</th><th>cache read</th><th>cache write</th><th>out</th>"
        "<th>subtree</th><th>cost</th><th>subtree cost</th><th>end</th></tr>"
    )
    return f"<h2>Usage per agent and subtree</h2><table>{head}{''.join(rows)}</table>"


def render_html(run: RunData) -> str:
    """The report of ``run`` as one HTML document (a string)."""
    agents = run.ordered()
    ids = {agent.path: f"a{n}" for n, agent in enumerate(agents)}
    digest = base64.b64encode(hashlib.sha256(_JS.encode()).digest()).decode()
    policy = (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:;"
        f" script-src 'sha256-{digest}'"
    )
    title = f"swarm run {run.manifest.get('run_id') or run.run_dir.name}"
    tools = (
        '<div class="tools"><input id="filter" placeholder="filter agents by path">'
        ' <button id="expand">expand all</button> <button id="collapse">collapse all</button>'
        "</div>"
    )
    answer = run.summary.get("final_text")
    final = f"<h2>Final answer</h2><pre>{_block(answer)}</pre>" if answer else ""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f'<meta name="viewport" content="width=device-width"><title>{_e(title)}</title>'
        f"<style>{_CSS}</style></head><body>{_header(run)}<main>{final}{tools}"
        f"{_timeline(run, agents, ids)}{_approvals(run.summary)}{_files(run)}"
        f"{_usage(run.summary)}"
        f"{_agents(agents, ids)}</main><script>{_JS}</script></body></html>\n"
    )
