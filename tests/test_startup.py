"""Start-up: ``import swarm``, ``swarm --help`` and ``swarm validate`` load only what they
use, and every public name is still there the moment it is asked for.

Each check runs in a fresh interpreter: this test process has imported everything already.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[1] / "examples"

HEAVY = (
    "networkx",
    "httpx",
    "rich",
    "structlog",
    "pydantic",
    "yaml",
    "asyncio",
    "anyio.from_thread",
    "anyio.to_thread",
    "tree_sitter",
    "swarm.transports.anthropic",
    "swarm.transports.openai",
    "swarm.team",
    "swarm.scenario",
    "swarm.audit",
    "swarm.batch",
    "swarm.local",
    "swarm.mcp",
    "swarm.otel",
    "swarm.report",
    "swarm.toolbox",
    "swarm.guards",
    "swarm.sandbox",
)
"""What a program that only imports swarm must not pay for (package or any module in it)."""


def fresh(code: str, *args: str) -> dict[str, object]:
    """Run ``code`` in a new interpreter; it sets ``out`` (a dict), which comes back,
    with ``loaded``: the modules of ``HEAVY`` that were imported by the end."""
    program = textwrap.dedent(code) + textwrap.dedent(
        f"""
        import json as _json, sys as _sys
        out["loaded"] = sorted(
            {{h for h in {HEAVY!r} for m in _sys.modules if m == h or m.startswith(h + ".")}}
        )
        print(_json.dumps(out))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", program, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_import_swarm_loads_none_of_the_heavy_packages() -> None:
    out = fresh("import swarm\nout = {}")
    assert out["loaded"] == []


def test_an_agent_runs_a_tool_without_loading_the_rest() -> None:
    out = fresh(
        """
        import anyio
        import swarm
        from swarm.testing import StubTransport, make_text_response, make_tool_use_response

        @swarm.tool
        def add(a: int, b: int) -> int:
            "Add two numbers."
            return a + b

        model = StubTransport(
            [make_tool_use_response("add", tool_input={"a": 2, "b": "40"}), make_text_response()]
        )
        agent = swarm.Agent("You add.", model, [add])
        text = anyio.run(agent.run, "2 + 40?", swarm.MemoryContextStore())
        result = model.calls[1][0][-1].content[0]
        out = {"text": text, "result": result.content}
        """
    )
    assert out["text"] == "Done"
    assert out["result"] == "42"
    # the run itself needs the event loop, the tool's argument model and, as the tool is
    # a plain function, the worker thread it runs in; nothing else
    assert out["loaded"] == ["anyio.to_thread", "asyncio", "pydantic"]


def test_every_public_name_resolves_in_a_fresh_process() -> None:
    out = fresh(
        """
        import swarm
        listed = set(dir(swarm))
        found = {name: getattr(swarm, name) for name in swarm.__all__}
        out = {
            "missing_from_dir": sorted(set(swarm.__all__) - listed),
            "from_import": all(
                eval(f"__import__('swarm').{name}") is value for name, value in found.items()
            ),
            "count": len(found),
        }
        """
    )
    assert out["missing_from_dir"] == []
    assert out["from_import"] is True
    assert out["count"] == len(__import__("swarm").__all__)


def test_every_name_of_each_package_that_loads_on_first_use_resolves() -> None:
    out = fresh(
        """
        import importlib
        out = {"unresolved": [], "unlisted": []}
        packages = ("audit", "context", "guards", "sandbox", "scenario", "team", "toolbox")
        for package in (*packages, "transports"):
            module = importlib.import_module(f"swarm.{package}")
            for name in module.__all__:
                if not hasattr(module, name):
                    out["unresolved"].append(f"{package}.{name}")
                if name not in dir(module):
                    out["unlisted"].append(f"{package}.{name}")
        """
    )
    assert out["unresolved"] == []
    assert out["unlisted"] == []


NOT_FOR_FAN_OUT = (
    "networkx",
    "yaml",
    "tree_sitter",
    "httpx",
    "rich",
    "structlog",
    "swarm.guards.policy",
    "swarm.guards.shell",
    "swarm.sandbox",
)
"""What a program that fans out to sub-agents with the library (no team files) must not load."""


def test_fanning_out_to_sub_agents_loads_no_team_files_guards_or_transports() -> None:
    out = fresh(
        """
        import sys
        import anyio
        from swarm import Agent, Tool, PermissionGuard, MemoryContextStore, make_agent_tools
        from swarm.testing import StubTransport, make_text_response, make_tool_use_response

        class Logged(PermissionGuard):
            "Allows every call and remembers which."
            seen = []
            async def check(self, tool, **arguments):
                self.seen.append(tool.name)
                return arguments

        # make_agent_tools runs every sub-agent on the transport it is given: one script
        model = StubTransport(
            [
                make_tool_use_response("adder", tool_input={"task": "2 + 40"}),
                make_text_response("the sum is 42"),  # the adder's turn
                make_text_response(),
            ]
        )
        helpers = {
            "adder": ("Adds numbers.", Agent("You add.", model)),
            "critic": ("Reviews.", Agent("You review.", model)),
        }
        guard = Logged()
        tools = [t.copy(guards=(guard,)) for t in make_agent_tools(helpers, model)]
        agent = Agent("You lead.", model, tools)
        text = anyio.run(agent.run, "What is 2 + 40?", MemoryContextStore())
        result = model.calls[2][0][-1].content[0]
        out = {
            "text": text,
            "tools": [t.name for t in tools],
            "result": result.content,
            "guarded": guard.seen,
            "task": model.calls[1][0][-1].content[0].text,
            "modules": sorted(sys.modules),
        }
        """
    )
    assert out["tools"] == ["adder", "critic"]
    assert out["guarded"] == ["adder"]
    assert out["task"] == "2 + 40"
    assert out["result"] == "the sum is 42"
    assert out["text"] == "Done"
    modules: list[str] = out["modules"]  # type: ignore[assignment]
    assert not {h for h in NOT_FOR_FAN_OUT for m in modules if m == h or m.startswith(h + ".")}


@pytest.mark.parametrize(
    ("name", "brings"),
    [("Team", "yaml"), ("OpenAITransport", "httpx"), ("load_policy", "pydantic")],
)
def test_a_name_imported_on_first_use_brings_its_dependencies_then(name: str, brings: str) -> None:
    out = fresh(
        f"""
        import sys
        import swarm
        before = {brings!r} in sys.modules
        from swarm import {name}
        out = {{"before": before, "after": {brings!r} in sys.modules}}
        """
    )
    assert (out["before"], out["after"]) == (False, True)


def test_a_team_brings_networkx_only_when_its_graph_is_asked_for() -> None:
    out = fresh(
        """
        import sys
        from swarm import AgentSpec, Team
        team = Team([
            AgentSpec(name="lead", description="l", system="s", delegates=("dev",)),
            AgentSpec(name="dev", description="d", system="s"),
        ])
        before = "networkx" in sys.modules
        edges = sorted(team.graph.edges)
        out = {"before": before, "after": "networkx" in sys.modules, "edges": edges}
        """
    )
    assert (out["before"], out["after"]) == (False, True)
    assert out["edges"] == [["lead", "dev"]]


def test_an_unknown_name_is_still_an_import_error() -> None:
    out = fresh(
        """
        try:
            from swarm import NoSuchThing
        except ImportError as exc:
            out = {"error": str(exc)}
        """
    )
    assert "NoSuchThing" in str(out["error"])


def test_the_local_model_spec_is_known_before_swarm_local_is_imported() -> None:
    out = fresh(
        """
        import sys
        from swarm import ConfigError, transport_from_spec
        from swarm.models.spec import provider_prefixes
        prefixes = provider_prefixes()
        try:
            transport_from_spec("local:klingon")
        except ConfigError as exc:
            error = str(exc)
        out = {"prefixes": prefixes, "error": error}
        """
    )
    assert "local" in out["prefixes"]
    assert "unknown local dialect 'klingon'" in str(out["error"])


CLI = """
import sys
from swarm.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
out = {"code": code}
"""


def test_help_imports_no_command_module() -> None:
    out = fresh(CLI, "--help")
    assert out["code"] == 0
    assert out["loaded"] == []


def test_validate_loads_neither_transports_nor_the_console() -> None:
    out = fresh(CLI, "validate", str(EXAMPLES / "build-a-calculator.yaml"))
    assert out["code"] == 0
    assert not {"httpx", "rich", "structlog", "asyncio"} & set(out["loaded"])  # type: ignore[arg-type]
    assert not {"swarm.transports.openai", "swarm.transports.anthropic"} & set(out["loaded"])  # type: ignore[arg-type]


def test_a_log_line_is_printed_as_the_command_prints_it_and_validate_says_it_once(
    tmp_path: Path,
) -> None:
    team = tmp_path / "team"
    team.mkdir()
    for name, extra in (("lead", ""), ("a", "delegates: [b]\n"), ("b", "")):
        (team / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: {name}\n{extra}---\nYou are {name}.\n"
        )
    done = subprocess.run(
        [sys.executable, "-m", "swarm", "graph", str(team), "--entry", "lead"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    # the command's structlog setup (level, no colours, stderr) is in force at the first line
    assert "[warning  ] team: role 'b' is only reached by delegation" in done.stderr
    assert "\x1b[" not in done.stderr
    # validate prints each warning itself, once: not logged as well
    checked = subprocess.run(
        [sys.executable, "-m", "swarm", "validate", str(team), "--entry", "lead"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.count("role 'b' is only reached by delegation") == 1
    assert "role 'b'" not in checked.stderr


LATE = (
    "swarm.guards.bash._walker",
    "swarm.undo",
    "swarm.team.crew_models",
    "swarm.sandbox.bubblewrap",
    "swarm.sandbox.cgroup",
    "swarm.sandbox.proxy_door",
    "swarm.audit",
)
"""Modules ``swarm validate`` of a plain team loads only when something uses them: the
bash analyser, the undo store, a crew's Python models, the sandbox launchers."""

POLICY = """\
name: team
default: allow
sandbox: {mode: auto, network: none}
rules:
  - id: no-rm
    deny: shell
    args: {command: {shell: rm}}
"""


def _team_with_policy(tmp_path: Path, policy: str) -> Path:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "policy.yaml").write_text(policy)
    team = tmp_path / "team"
    team.mkdir()
    (team / "lead.yaml").write_text(
        "description: lead\nsystem: You lead.\ntools: [shell]\npolicy: ../policy.yaml\n"
    )
    return team


def test_validate_of_a_team_loads_no_analyser_undo_store_or_sandbox_launcher(
    tmp_path: Path,
) -> None:
    team = _team_with_policy(tmp_path, POLICY)
    out = fresh(
        CLI + f"out['late'] = [m for m in {LATE!r} if m in sys.modules]\n",
        "validate",
        str(team),
    )
    assert out["code"] == 0
    assert out["late"] == []
    assert "tree_sitter" not in out["loaded"]  # type: ignore[operator]


def test_validate_still_reports_a_rule_for_no_tool_and_a_bad_undo_key(tmp_path: Path) -> None:
    said = []
    for extra in ("  - id: typo\n    deny: shel\n", "undo: {max_bytes: -1}\n"):
        team = _team_with_policy(tmp_path / str(len(said)), POLICY + extra)
        done = subprocess.run(
            [sys.executable, "-m", "swarm", "validate", str(team)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode != 0
        assert "Traceback" not in done.stderr
        said.append(done.stderr)
    assert "'shel'" in said[0] and "rules.1" in said[0]  # the rule's glob names no tool
    assert "policy.yaml:8: field 'undo.max_bytes'" in said[1]


def test_a_policy_judges_commands_and_keeps_undo_budgets_once_their_modules_load(
    tmp_path: Path,
) -> None:
    (tmp_path / "policy.yaml").write_text(POLICY + "undo: {over_budget: run}\n")
    out = fresh(
        f"""
        import sys
        from swarm.guards.policy import load_policy
        from swarm.guards.rules import Unjudgeable
        policy = load_policy({str(tmp_path / "policy.yaml")!r})
        out = {{"walker_at_load": "swarm.guards.bash._walker" in sys.modules}}
        out["rm"] = policy.decide("shell", {{"command": "cd src && r''m -rf build"}}).action
        out["ls"] = policy.decide("shell", {{"command": "ls -l"}}).action
        try:
            policy.decide("shell", {{"command": "echo 'unclosed"}})
            out["unclosed"] = "decided"
        except Unjudgeable:
            out["unclosed"] = "unjudgeable"
        out["undo"] = [policy.undo.max_bytes, policy.undo.over_budget]
        """
    )
    assert out["walker_at_load"] is False
    assert out["rm"] == "deny"
    assert out["ls"] == "allow"
    assert out["unclosed"] == "unjudgeable"
    assert out["undo"] == [2 * 1024**3, "run"]
