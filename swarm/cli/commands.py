"""Every subcommand's arguments, without the code that runs it.

``swarm --help`` and the parse of any command need only this module: a command's own
module (and what it imports: the team loader, the scenario runner, rich, ...) is imported
when that command is chosen, by the handler ``_later`` gives it.
"""

from __future__ import annotations

import argparse
import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Later", "add_approval_options", "add_commands", "add_executor_options"]


@dataclass(frozen=True, slots=True)
class Later:
    """A command's handler, ``module.name``, imported when the command is chosen."""

    module: str
    name: str

    def load(self) -> Callable[[argparse.Namespace], int]:
        """Import the command's module; its handler."""
        run: Callable[[argparse.Namespace], int] = getattr(
            importlib.import_module(self.module), self.name
        )
        return run

    def __call__(self, args: argparse.Namespace) -> int:
        return self.load()(args)


def _later(module: str, name: str) -> Later:
    return Later(module, name)


def add_commands(sub: Any) -> None:
    """Add every command, in the order ``swarm --help`` lists them."""
    # local and init are small and import nothing heavy: they keep their own arguments
    from swarm.cli.init import add_commands as _add_init
    from swarm.cli.local import add_commands as _add_local

    for add in (
        _add_running,
        _add_batch,
        _add_inspect,
        _add_import,
        _add_records,
        _add_local,
        _add_mcp,
    ):
        add(sub)
    _add_init(sub)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0 or value == math.inf:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, not {text!r}")
    return value


def add_approval_options(parser: argparse.ArgumentParser) -> None:
    """``--on-ask`` and ``--ask-timeout``: what an ``ask`` does with nobody to ask."""
    parser.add_argument(
        "--on-ask",
        choices=("deny", "hold"),
        help="with nobody at the terminal, deny calls the policy asks about, or hold them"
        " in the run record for 'swarm approve' (default: the policy's on_ask, else deny)",
    )
    parser.add_argument(
        "--ask-timeout",
        type=_seconds,
        metavar="SECONDS",
        help="deny a held call nobody answered within this time (default: the policy's)",
    )


def add_executor_options(parser: argparse.ArgumentParser, *, default: str | None) -> None:
    """``--executor``, ``--parallel`` and ``--env-var``."""
    parser.add_argument(
        "--executor",
        default=default,
        metavar="local|ray[:ADDRESS]",
        help="where the runs go: this process, or Ray (ray: a local Ray with this machine's"
        " cores; ray:auto or ray:ray://HOST:PORT an existing cluster)",
    )
    parser.add_argument("--parallel", type=int, metavar="N", help="runs at once")
    parser.add_argument(
        "--env-var",
        action="append",
        default=[],
        metavar="NAME",
        help="pass this environment variable (e.g. a provider key) to Ray workers",
    )


_RUNS_DIR_HELP = "where run records are (default: $XDG_STATE_HOME/swarm/runs)"


def _add_running(sub: Any) -> None:
    run = sub.add_parser(
        "run",
        help="run a scenario file, or a task with --team",
        description="Run a scenario (swarm run SCENARIO) or a task given on the command"
        " line (swarm run --team DIR --entry ROLE --model SPEC 'task'), which works in"
        " the current directory unless --workspace says otherwise.",
    )
    run.add_argument(
        "target",
        nargs="*",
        help="a scenario file, or the task with --team (with --command: its arguments)",
    )
    run.add_argument(
        "--command",
        type=Path,
        metavar="FILE",
        help="a slash command file (.claude/commands/*.md) as the task, filled with the"
        " arguments given; its !`cmd` lines run first under the entry role's policy",
    )
    run.add_argument(
        "--team",
        type=Path,
        help="a directory of role files, a Claude Code project, or a CrewAI crew (with no"
        " task given, a crew runs its tasks.yaml)",
    )
    run.add_argument("--entry", help="the role that takes the task")
    run.add_argument(
        "--model",
        help="a model spec, e.g. openai:gpt-4.1-mini (overrides the scenario), or"
        " script:FILE.yaml for a scripted model",
    )
    run.add_argument("--policy", help="the guard policy for roles that name none")
    run.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="fill {KEY} in the roles' prompts and a crew's tasks (a CrewAI crew's inputs)",
    )
    run.add_argument(
        "--workspace",
        type=Path,
        help="the directory the agents work in (default: a scenario's own, else here)",
    )
    run.add_argument(
        "--runs-dir",
        type=Path,
        help="where run records go (default: the scenario's runs_dir, else"
        " $XDG_STATE_HOME/swarm/runs)",
    )
    run.add_argument(
        "--tool-timeout",
        type=_seconds,
        metavar="SECONDS",
        help="the time limit of one tool call for roles that set none (default: 600)",
    )
    run.add_argument("--record", type=Path, metavar="CASSETTE", help="record every model call")
    run.add_argument(
        "--replay", type=Path, metavar="CASSETTE", help="replay a recorded run offline"
    )
    shown = run.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="stream events as JSON lines")
    shown.add_argument("--plain", action="store_true", help="plain lines instead of the live view")
    run.add_argument(
        "--otel",
        action="store_true",
        help="send OpenTelemetry traces over OTLP/HTTP to $OTEL_EXPORTER_OTLP_ENDPOINT"
        " (needs the otel extra)",
    )
    run.add_argument(
        "--report",
        action="store_true",
        help="write the run's HTML report (report.html in the record) at the end",
    )
    add_approval_options(run)
    run.set_defaults(handler=_later("swarm.cli.running", "cmd_run"))

    test = sub.add_parser(
        "test",
        help="run scenarios with expectations, like a test runner",
        description="Run each scenario in a fresh workspace and check its 'expect'.",
    )
    test.add_argument("targets", nargs="+", type=Path, help="scenario files or directories")
    test.add_argument("--model", help="override every scenario's model")
    test.add_argument(
        "--keep",
        action="store_true",
        help="keep the workspaces of passing runs too, and say where they are",
    )
    test.add_argument(
        "--runs-dir",
        type=Path,
        help="where run records go; with Ray, a directory every node shares",
    )
    add_executor_options(test, default=None)
    test.set_defaults(handler=_later("swarm.cli.running", "cmd_test"))


def _add_batch(sub: Any) -> None:
    """Add ``swarm batch``."""
    batch = sub.add_parser(
        "batch",
        help="run one team over a file of tasks (JSON lines), here or on Ray",
        description="Run a team over every task of TASKS.jsonl; one result line per task is"
        " appended to RESULTS as the task ends.",
    )
    batch.add_argument("--team", type=Path, required=True, help="a directory of role files")
    batch.add_argument("--entry", help="the role that takes each task")
    batch.add_argument("--tasks", type=Path, required=True, help="the tasks, one JSON a line")
    batch.add_argument(
        "-o", "--output", type=Path, required=True, metavar="RESULTS", help="results (JSONL)"
    )
    batch.add_argument(
        "--model",
        required=True,
        help="a model spec (openai:gpt-4.1-mini), or script:FILE.yaml for a scripted model",
    )
    batch.add_argument("--policy", help="the guard policy for roles that name none")
    batch.add_argument("--resume", action="store_true", help="skip tasks already in RESULTS")
    batch.add_argument(
        "--runs-dir",
        type=Path,
        help="where run records go; with Ray, a directory every node shares (the workers"
        " write there); without it records are shipped back to this machine",
    )
    add_executor_options(batch, default="local")
    batch.set_defaults(handler=_later("swarm.cli.batch", "cmd_batch"))


def _add_inspect(sub: Any) -> None:
    validate_cmd = sub.add_parser(
        "validate",
        help="check role files, policies and the delegation graph (or a scenario)",
        description="Check a team directory, a scenario file or a policy file; every"
        " problem is listed with its file, line and field.",
    )
    validate_cmd.add_argument(
        "target", type=Path, help="a team directory, a scenario file or a policy file"
    )
    validate_cmd.add_argument("--entry", help="the entry role (team directories)")
    validate_cmd.add_argument(
        "--against",
        type=Path,
        nargs="+",
        metavar="RUNS",
        help="also replay these recorded runs (run directories, audit logs, or directories"
        " of runs) under the team's policies and print the calls whose decision changes",
    )
    validate_cmd.add_argument(
        "--fail-on",
        choices=("loosened", "tightened", "any"),
        help="with --against: exit 1 when a decision changes this way",
    )
    validate_cmd.set_defaults(handler=_later("swarm.cli.inspect", "cmd_validate"))

    policy = sub.add_parser("policy", help="test a policy against recorded runs")
    policy_sub = policy.add_subparsers(dest="policy_command", required=True)
    test = policy_sub.add_parser(
        "test",
        help="replay recorded runs' guard decisions under POLICY, offline",
        description="Replay the guard decisions of recorded runs under POLICY (nothing"
        " runs) and print only the calls whose decision would change, with a summary.",
    )
    test.add_argument("policy", help="a policy file, name or builtin:NAME")
    test.add_argument(
        "runs",
        type=Path,
        nargs="*",
        metavar="RUNS",
        help="run directories, audit logs, or directories of runs (default: every run in"
        " the default runs directory)",
    )
    test.add_argument("--role", help="replay only this role's calls")
    test.add_argument(
        "--fail-on",
        choices=("loosened", "tightened", "any"),
        help="exit 1 when a decision changes this way (for CI)",
    )
    test.set_defaults(handler=_later("swarm.cli.policy_test", "cmd_policy_test"))

    graph = sub.add_parser("graph", help="print the delegation graph as Mermaid or DOT")
    graph.add_argument("target", type=Path, help="a team directory or a scenario file")
    graph.add_argument("--format", choices=("mermaid", "dot"), default="mermaid")
    graph.add_argument("--entry", help="the entry role")
    graph.set_defaults(handler=_later("swarm.cli.inspect", "cmd_graph"))


def _add_import(sub: Any) -> None:
    """Add ``swarm import crewai``."""
    importing = sub.add_parser("import", help="write swarm role files from another framework's")
    kinds = importing.add_subparsers(dest="import_command", required=True)
    crewai = kinds.add_parser(
        "crewai",
        help="a CrewAI crew's agents.yaml as swarm role files",
        description="Write one YAML role file per agent of a CrewAI crew (agents.yaml and"
        " tasks.yaml, in config/ or not). Nothing is overwritten.",
    )
    crewai.add_argument("source", type=Path, help="the crew's folder")
    crewai.add_argument(
        "-o", "--output", type=Path, required=True, metavar="DIR", help="where to write them"
    )
    crewai.set_defaults(handler=_later("swarm.cli.importing", "cmd_import_crewai"))


def _add_records(sub: Any) -> None:
    audit = sub.add_parser("audit", help="show or verify an audit log")
    audit_sub = audit.add_subparsers(dest="audit_command", required=True)
    show = audit_sub.add_parser("show", help="the calls in a log, as a table")
    show.add_argument(
        "log", help="a run id (or its start), last, a run directory, or an audit.jsonl"
    )
    show.add_argument("--runs-dir", type=Path, help=_RUNS_DIR_HELP)
    show.add_argument("--role")
    show.add_argument("--tool")
    show.add_argument("--decision", choices=("allow", "deny", "invalid"))
    show.set_defaults(handler=_later("swarm.cli.records", "cmd_audit_show"))
    verify = audit_sub.add_parser(
        "verify", help="check the chain, MACs and head; exit 1 if tampered, 2 if not a log"
    )
    verify.add_argument(
        "log", help="a run id (or its start), last, a run directory, or an audit.jsonl"
    )
    verify.add_argument("--runs-dir", type=Path, help=_RUNS_DIR_HELP)
    verify.set_defaults(handler=_later("swarm.cli.records", "cmd_audit_verify"))

    sessions = sub.add_parser("sessions", help="list, show or resume stored sessions")
    sessions_sub = sessions.add_subparsers(dest="sessions_command", required=True)
    listing = sessions_sub.add_parser("list", help="the sessions of a run (or a .db file)")
    listing.add_argument("target", help="a run directory, run id, or sessions .db file")
    listing.set_defaults(handler=_later("swarm.cli.records", "cmd_sessions_list"))
    show_session = sessions_sub.add_parser("show", help="one session's messages")
    show_session.add_argument("target", help="a run directory, run id, or sessions .db file")
    show_session.add_argument("session", help="a session id (a prefix is enough), or a path")
    show_session.set_defaults(handler=_later("swarm.cli.records", "cmd_sessions_show"))
    resume = sessions_sub.add_parser("resume", help="continue an interrupted run")
    resume.add_argument("run", help="a run directory or run id")
    resume.add_argument("message", nargs="*", help="a new message (needed if the run finished)")
    resume.add_argument("--model", help="a model spec to continue with")
    resume.add_argument("--plain", action="store_true", help="plain lines, no live view")
    resume.add_argument(
        "--accept-changed-team",
        action="store_true",
        help="go on although the team, policies, scenario or MCP declarations changed since"
        " the run started (recorded in the audit log)",
    )
    resume.add_argument("--runs-dir", type=Path, help=_RUNS_DIR_HELP)
    add_approval_options(resume)
    resume.set_defaults(handler=_later("swarm.cli.records", "cmd_sessions_resume"))

    approvals = sub.add_parser(
        "approvals", help="list the calls a run holds for approval (every run's without RUN)"
    )
    approvals.add_argument("run", nargs="?", help="a run directory or run id")
    approvals.add_argument("--all", action="store_true", help="answered requests too")
    approvals.add_argument("--runs-dir", type=Path, help=_RUNS_DIR_HELP)
    approvals.set_defaults(handler=_later("swarm.cli.approvals", "cmd_approvals"))
    for name, verb in (("approve", "approve"), ("deny", "deny")):
        answer = sub.add_parser(name, help=f"{verb} calls a run holds (from any shell)")
        answer.add_argument("run", help="a run directory or run id")
        answer.add_argument("ids", nargs="*", metavar="ID", help="request ids (swarm approvals)")
        answer.add_argument("--all", action="store_true", help=f"{verb} every pending request")
        answer.add_argument("--runs-dir", type=Path, help=_RUNS_DIR_HELP)
        if name == "deny":
            answer.add_argument("--reason", default="", help="what the model is told")
        answer.set_defaults(handler=_later("swarm.cli.approvals", f"cmd_{name}"))

    runs = sub.add_parser("runs", help="list or show run records")
    runs_sub = runs.add_subparsers(dest="runs_command", required=True)
    runs_list = runs_sub.add_parser("list", help="the runs whose workspace is under a directory")
    runs_list.add_argument(
        "where",
        nargs="?",
        type=Path,
        default=Path("."),
        help="a workspace or project directory (default: here)",
    )
    runs_list.add_argument("--all", action="store_true", help="every run, wherever it worked")
    runs_list.add_argument(
        "--json",
        action="store_true",
        help="a JSON list, one object a run (fields: docs/run-records.md)",
    )
    runs_list.add_argument("--runs-dir", type=Path, help=_RUNS_DIR_HELP)
    runs_list.set_defaults(handler=_later("swarm.cli.records", "cmd_runs_list"))
    runs_show = runs_sub.add_parser("show", help="one run's summary and segments")
    runs_show.add_argument("run", help="a run directory or run id")
    runs_show.add_argument("--runs-dir", type=Path, help=_RUNS_DIR_HELP)
    runs_show.set_defaults(handler=_later("swarm.cli.records", "cmd_runs_show"))
    runs_report = runs_sub.add_parser(
        "report", help="write one run's report: a self-contained HTML file"
    )
    runs_report.add_argument("run", help="a run directory or run id")
    runs_report.add_argument(
        "-o", "--output", type=Path, help="the HTML file (default: report.html in the record)"
    )
    runs_report.add_argument("--open", action="store_true", help="open it in a browser")
    runs_report.add_argument("--runs-dir", type=Path, help=_RUNS_DIR_HELP)
    runs_report.set_defaults(handler=_later("swarm.cli.records", "cmd_runs_report"))
    runs_undo = runs_sub.add_parser(
        "undo", help="put the workspace back as it was before a run's calls"
    )
    runs_undo.add_argument("run", help="a run directory or run id")
    which = runs_undo.add_mutually_exclusive_group()
    which.add_argument("--call", metavar="ID", help="only this call")
    which.add_argument("--agent", metavar="PATH", help="this agent's calls (and its sub-agents')")
    which.add_argument("--since", metavar="ID", help="this call and every later one")
    runs_undo.add_argument(
        "--force", action="store_true", help="put back paths changed since the run too"
    )
    runs_undo.add_argument("--runs-dir", type=Path, help=_RUNS_DIR_HELP)
    runs_undo.set_defaults(handler=_later("swarm.cli.undo", "cmd_runs_undo"))
    runs_diff = runs_sub.add_parser("diff", help="what a run's calls did to the workspace")
    runs_diff.add_argument("run", help="a run directory or run id")
    runs_diff.add_argument("--call", metavar="ID", help="only this call")
    runs_diff.add_argument("--runs-dir", type=Path, help=_RUNS_DIR_HELP)
    runs_diff.set_defaults(handler=_later("swarm.cli.undo", "cmd_runs_diff"))
    for parser in (listing, show_session):
        parser.add_argument("--runs-dir", type=Path, help=_RUNS_DIR_HELP)


def _add_mcp(sub: Any) -> None:
    mcp = sub.add_parser("mcp", help="serve a team to MCP clients (Claude Code, ...)")
    mcp_sub = mcp.add_subparsers(dest="mcp_command", required=True)
    serve = mcp_sub.add_parser(
        "serve",
        help="serve a team's entry role (or every role) as MCP tools",
        description="Serve a team as an MCP server over stdio (the default) or streamable"
        " HTTP. Each tool call runs the team on the task given, with its run record.",
    )
    serve.add_argument("scenario", nargs="?", type=Path, help="a scenario file (team, model)")
    serve.add_argument("--team", type=Path, help="a directory of role files")
    serve.add_argument("--entry", help="the role to serve (default: the team's entry)")
    serve.add_argument("--all", action="store_true", help="serve every role, one tool each")
    serve.add_argument("--policy", help="the guard policy for roles that name none")
    serve.add_argument("--model", help="a model spec (overrides the scenario's)")
    serve.add_argument("--workspace", type=Path, help="the directory the agents work in")
    serve.add_argument("--runs-dir", type=Path, help="where run records go")
    serve.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP here")
    serve.set_defaults(handler=_later("swarm.cli.mcp", "cmd_serve"))
