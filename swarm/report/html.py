"""The run report as one self-contained HTML file.

Everything is inline (styles, a small script) and nothing is fetched: the page's
Content-Security-Policy allows no source at all except its own style and the one script
whose hash it names, so even a string that escaped escaping could neither run nor load
anything. Every value from the run (the model's text, tool arguments and results, file
names, diffs) is HTML-escaped and made ``visible`` (``swarm.report.text``). The report is
built on the server side, so it reads the same with scripts off, and a run of hundreds of
agents stays one scrollable page.

It answers "what went wrong" first: at the top, the counts of denied calls, errors, tool
calls, agents, the cost and the time, each a link to its items; then the list of every
denial and error, each a link to its call. Then the final answer, the timeline, the
approvals, the files with the agents that changed them, usage, and the agents as the
delegation tree. Nothing is wider than the screen: long names wrap, and tables become
cards on a narrow one.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from swarm.report.agents import Anchors, agent_tree, timeline
from swarm.report.data import RunData
from swarm.report.tables import approvals, files, usage
from swarm.report.text import block, one_line, seconds

__all__ = ["render_html"]

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d232a;background:#fafbfc;
overflow-wrap:anywhere}
header,main{padding:12px 20px}header{background:#fff;border-bottom:1px solid #dde}
h1{font-size:20px;margin:0 0 6px}h2{font-size:16px;margin:22px 0 8px}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 14px;margin:8px 0 0}
dt{color:#667}dd{margin:0;white-space:pre-wrap;min-width:0}
.ok{color:#17703a}.bad{color:#b3261e;font-weight:600}.dim{color:#778}
.glance{display:flex;flex-wrap:wrap;gap:8px;margin:6px 0 4px}
.glance a{display:block;padding:4px 12px;border:1px solid #dde;border-radius:6px;
background:#fff;color:inherit;text-decoration:none;min-width:5.5em}
.glance b{display:block;font-size:20px}.glance a.bad{border-color:#d93f3f;background:#fdeceb}
.glance a.bad b{color:#b3261e}
ul.problems{margin:4px 0;padding-left:20px}ul.problems li{margin:2px 0}
.tools{position:sticky;top:0;background:#fafbfc;padding:6px 0;z-index:2}
.tools input{max-width:100%;box-sizing:border-box}
.row{display:grid;grid-template-columns:minmax(7em,22%) minmax(0,1fr);gap:6px;
align-items:center;min-height:20px}
.who{font-size:12px;min-width:0}.who a{color:inherit;text-decoration:none}
.track{position:relative;height:14px;background:#eef0f3 linear-gradient(90deg,#d5d9e0 1px,
transparent 1px) 0 0/25% 100%}
.track div{position:absolute;top:0;height:14px;min-width:2px}
.ticks{position:relative;height:16px;font-size:11px;color:#778}
.ticks span{position:absolute;transform:translateX(-50%);white-space:nowrap}
.ticks span:first-child{transform:none}.ticks span:last-child{transform:translateX(-100%)}
.span{background:#cfd8e3}.m{background:#5b8def;top:2px!important;height:10px!important}
.t{background:#35a06a;top:4px!important;height:6px!important}.t.deny{background:#d93f3f}
.t.err{background:#e39b2d}.span.err{background:#f3c3c0}
ul.tree,ul.tree ul{list-style:none;margin:0;padding:0}
ul.tree ul{margin-left:10px;padding-left:10px;border-left:1px solid #ccd}
details.agent{background:#fff;border:1px solid #dde;border-radius:4px;margin:4px 0}
details.agent>summary{padding:4px 8px;cursor:pointer}
.body{padding:4px 12px 10px}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;padding:6px;background:#f3f4f6;
font:12px/1.4 ui-monospace,monospace;max-height:320px;overflow-y:auto}
pre.code{background:#f6f8fa;border:1px solid #e3e6ea;tab-size:4}
.arg{margin:2px 0}.arg .k{color:#556;font-size:12px;margin-right:4px}
.call{border-left:3px solid #35a06a;padding-left:8px;margin:8px 0}
.call.deny{border-color:#d93f3f}.call.err{border-color:#e39b2d}
.badge{display:inline-block;padding:0 6px;border-radius:3px;background:#e6f4ea;font-size:12px}
.deny .badge{background:#fde7e6}.err .badge{background:#fdf0dc}
table{border-collapse:collapse;font-size:13px}td,th{padding:2px 10px;text-align:right}
td:first-child,th:first-child{text-align:left}tr:nth-child(even){background:#f1f3f6}
.add{color:#17703a}.del{color:#b3261e}
@media (max-width:700px){header,main{padding:10px 12px}
dl{grid-template-columns:minmax(0,1fr)}dt{margin-top:4px}
.row{grid-template-columns:minmax(0,32%) minmax(0,1fr)}.ticks span:nth-child(2n){display:none}
table.cards,table.cards tbody,table.cards tr{display:block}table.cards thead{display:none}
table.cards tr{padding:4px 0;border-bottom:1px solid #dde}
table.cards td{display:inline-block;padding:1px 12px 1px 0;text-align:left}
table.cards td::before{content:attr(data-label) ": ";color:#778}
table.cards td:first-child{display:block;font-weight:600}
table.cards td:first-child::before{content:none}}
"""

_JS = """
const q=document.getElementById('filter');const all=[...document.querySelectorAll('[data-agent]')];
q.addEventListener('input',()=>{const v=q.value.toLowerCase();
const hit=all.map(e=>e.dataset.agent).filter(p=>p.toLowerCase().includes(v));
for(const e of all){const p=e.dataset.agent;
e.style.display=hit.some(h=>h===p||h.startsWith(p+'/'))?'':'none';}});
for(const [id,open] of [['expand',true],['collapse',false]]){
document.getElementById(id).addEventListener('click',()=>{
for(const d of document.querySelectorAll('details.agent')){d.open=open;}});}
function reveal(){const t=location.hash&&document.getElementById(location.hash.slice(1));
if(!t){return;}for(let d=t.closest('details');d;d=d.parentElement.closest('details')){d.open=true;}
t.scrollIntoView();}
addEventListener('hashchange',reveal);reveal();
"""


def _glance(run: RunData) -> str:
    """The counts a reader looks for first, each a link to its items."""
    summary = run.summary
    denied = len(run.denied())
    errors = len(run.failed()) + len(run.errors())
    calls = sum(len(agent.calls) for agent in run.agents.values())
    cost = summary.get("cost_usd")
    duration = summary.get("duration_seconds")
    if not isinstance(duration, int | float):
        duration = run.end - run.start if run.agents else None
    known = isinstance(cost, int | float)

    def many(n: int, word: str) -> str:
        return word if n == 1 else word + "s"

    cards = [  # (id, the items it links to, value, label, whether it is bad news)
        ("denied", "denied", f"{denied:,}", many(denied, "denied call"), denied > 0),
        ("errors", "errors", f"{errors:,}", many(errors, "error"), errors > 0),
        ("calls", "timeline", f"{calls:,}", many(calls, "tool call"), False),
        ("agents", "agents", f"{len(run.agents):,}", many(len(run.agents), "agent"), False),
        (
            "cost",
            "usage",
            f"${cost:.4f}" if known else "?",
            "cost" if known else "cost unknown",
            False,
        ),
        ("time", "timeline", seconds(duration), "time", False),
    ]
    links = "".join(
        f'<a href="#{target}" id="count-{key}" class="{"bad" if bad else ""}">'
        f"<b>{one_line(value)}</b>{one_line(label)}</a>"
        for key, target, value, label, bad in cards
    )
    return f'<nav class="glance" aria-label="at a glance">{links}</nav>'


def _problems(run: RunData, anchors: Anchors) -> str:
    """Every denied call, then every failed call and agent error, each linked."""
    stop = str(run.summary.get("stop_reason") or "")
    ended = (
        f'<p class="bad" id="stopped">The run stopped: {one_line(stop)}.</p>'
        if stop and stop != "end_turn"
        else ""
    )
    denied = []
    for agent, call in run.denied():
        rule = f" (rule: {call.rule})" if call.rule else ""
        by = f" by {call.guard}" if call.guard else ""
        denied.append(
            f'<li><a href="#{anchors.calls[(agent.path, call.call_id)]}">'
            f"{one_line(agent.path)}</a> <b>{one_line(call.tool)}</b> denied"
            f"{one_line(by + rule)}: {one_line(call.reason or '-')}</li>"
        )
    errors = []
    for agent, call in run.failed():
        said = call.result.split("\n", 1)[0][:300]
        errors.append(
            f'<li><a href="#{anchors.calls[(agent.path, call.call_id)]}">'
            f"{one_line(agent.path)}</a> <b>{one_line(call.tool)}</b> failed:"
            f" {one_line(said or call.outcome or 'error')}</li>"
        )
    for agent in run.errors():
        errors.append(
            f'<li><a href="#{anchors.agents[agent.path]}">{one_line(agent.path)}</a>'
            f" ended with an error: {one_line(agent.error)}</li>"
        )
    if not (ended or denied or errors):
        return (
            '<h2 id="problems">What went wrong</h2><p class="ok" id="denied">Nothing: no call'
            ' was denied or failed, and every agent ended without an error.</p><p id="errors"></p>'
        )
    lists = (
        f'<ul class="problems" id="denied">{"".join(denied)}</ul>'
        if denied
        else '<p id="denied" class="dim">No call was denied.</p>'
    ) + (
        f'<ul class="problems" id="errors">{"".join(errors)}</ul>'
        if errors
        else '<p id="errors" class="dim">No error.</p>'
    )
    return f'<h2 id="problems">What went wrong</h2>{ended}{lists}'


def _header(run: RunData) -> str:
    manifest, summary = run.manifest, run.summary
    config = manifest.get("config") or {}
    usage_: dict[str, Any] = summary.get("usage") or {}
    tokens = int(usage_.get("input_tokens") or 0) + int(usage_.get("output_tokens") or 0)
    team = (manifest.get("team") or {}).get("dir") or config.get("team") or "-"
    stop = summary.get("stop_reason") or "(no summary: the run is going on or was killed)"
    rows = [
        ("Team", f"{team} (entry: {config.get('entry') or '-'})"),
        ("Model", manifest.get("model") or "-"),
        ("Stop reason", stop),
        (
            "Tokens",
            f"{tokens:,} ({usage_.get('input_tokens', 0):,} in, "
            f"{usage_.get('output_tokens', 0):,} out)",
        ),
        ("Duration", seconds(summary.get("duration_seconds"))),
    ]
    cells = f'<dt>Task</dt><dd id="task">{block(config.get("task") or "-")}</dd>'
    cells += "".join(f"<dt>{one_line(k)}</dt><dd>{one_line(v)}</dd>" for k, v in rows)
    audit_class = "ok" if run.audit_ok else "bad"
    cells += f'<dt>Audit log</dt><dd class="{audit_class}" id="audit">{block(run.audit)}</dd>'
    title = f"Run {manifest.get('run_id') or summary.get('run_id') or run.run_dir.name}"
    return f"<header><h1>{one_line(title)}</h1>{_glance(run)}<dl>{cells}</dl></header>"


def render_html(run: RunData) -> str:
    """The report of ``run`` as one HTML document (a string)."""
    agents = run.ordered()
    anchors = Anchors.of(agents)
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
    final = f"<h2>Final answer</h2><pre>{block(answer)}</pre>" if answer else ""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f'<meta name="viewport" content="width=device-width"><title>{one_line(title)}</title>'
        f"<style>{_CSS}</style></head><body>{_header(run)}<main>{_problems(run, anchors)}"
        f"{final}{tools}{timeline(run, agents, anchors)}{approvals(run.summary)}{files(run)}"
        f"{usage(run.summary)}{agent_tree(run, anchors)}</main><script>{_JS}</script>"
        "</body></html>\n"
    )
