"""Policy files: rule kinds, precedence, extend, located errors, PolicyGuard, apply_policy."""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path
from typing import Any

import pytest

from swarm.errors import ConfigError, GuardError
from swarm.guards import (
    Policy,
    PolicyGuard,
    RateLimitGuard,
    apply_policy,
    load_policy,
    shipped_policies,
)
from swarm.guards.paths import PathGuard
from swarm.scope import CallRecord, RunScope, use_call, use_scope
from swarm.tools import Tool

pytestmark = pytest.mark.anyio


def policy(*rules: dict[str, Any], default: str = "deny") -> Policy:
    return Policy.from_mapping({"default": default, "rules": list(rules)}, name="test")


def action(p: Policy, tool: str, role: str | None = None, **arguments: Any) -> str:
    return p.decide(tool, arguments, role=role).action


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    return path


# ---- rule kinds ----


def test_tool_globs_select_the_rules() -> None:
    p = policy({"allow": ["read_*", "search"]})
    assert [action(p, t) for t in ("read_file", "search", "write_file")] == [
        "allow",
        "allow",
        "deny",
    ]


def test_glob_condition_matches_the_whole_string() -> None:
    p = policy({"allow": "search", "args": {"query": {"glob": "TODO*"}}})
    assert action(p, "search", query="TODO: fix") == "allow"
    assert action(p, "search", query="a TODO") == "deny"


def test_regex_condition_searches_anywhere() -> None:
    p = policy({"deny": "search", "args": {"query": {"regex": r"passw(or)?d"}}}, default="allow")
    assert action(p, "search", query="find the password file") == "deny"
    assert action(p, "search", query="pass") == "allow"


def test_path_condition_is_segment_aware_and_normalised() -> None:
    p = policy({"allow": "read_file", "args": {"path": {"path": "src/*.py"}}})
    assert action(p, "read_file", path="src/a.py") == "allow"
    assert action(p, "read_file", path="./src/a.py") == "allow"
    assert action(p, "read_file", path="src/pkg/a.py") == "deny"
    assert action(p, "read_file", path="src/../secrets/a.py") == "deny"
    deep = policy({"allow": "read_file", "args": {"path": {"path": "src/**/*.py"}}})
    assert action(deep, "read_file", path="src/a.py") == "allow"
    assert action(deep, "read_file", path="src/pkg/sub/a.py") == "allow"


def test_numeric_bounds() -> None:
    p = policy({"allow": "sleep", "args": {"seconds": {"ge": 1, "lt": 60}}})
    assert [action(p, "sleep", seconds=s) for s in (0, 1, 59.5, 60)] == [
        "deny",
        "allow",
        "allow",
        "deny",
    ]
    assert action(p, "sleep", seconds=True) == "deny"
    assert action(p, "sleep", seconds="30") == "deny"


def test_equals_and_one_of() -> None:
    p = policy(
        {"allow": "todo", "args": {"action": {"one_of": ["add", "list"]}}},
        {"deny": "todo", "args": {"force": {"equals": True}}},
    )
    assert action(p, "todo", action="add") == "allow"
    assert action(p, "todo", action="drop") == "deny"
    assert action(p, "todo", action="add", force=True) == "deny"
    assert action(p, "todo", action="add", force=1) == "allow"


def test_shell_condition_sees_the_parsed_programs() -> None:
    p = policy({"deny": "shell", "args": {"command": {"shell": "curl"}}}, default="allow")
    assert action(p, "shell", command="ls && env X=1 'cu'rl x") == "deny"
    assert action(p, "shell", command="echo curl") == "allow"


def test_conditions_reach_into_nested_arguments() -> None:
    p = policy({"deny": "search", "args": {"options.depth": {"gt": 3}}}, default="allow")
    assert action(p, "search", options={"depth": 5}) == "deny"
    assert action(p, "search", options={"depth": 2}) == "allow"


def test_missing_argument_never_matches() -> None:
    p = policy({"deny": "*", "args": {"path": {"path": "/etc/**"}}}, default="allow")
    assert action(p, "search", query="x") == "allow"
    assert action(p, "search", path=None) == "allow"


def test_list_values_deny_when_any_item_matches_and_allow_when_all_do() -> None:
    p = policy(
        {"deny": "read_files", "args": {"paths": {"path": ".git/**"}}},
        {"allow": "read_files", "args": {"paths": {"path": "src/**"}}},
    )
    assert action(p, "read_files", paths=["src/a", "src/b"]) == "allow"
    assert action(p, "read_files", paths=["src/a", "docs/b"]) == "deny"
    assert action(p, "read_files", paths=["src/a", ".git/config"]) == "deny"


def test_shell_allow_needs_every_program_and_deny_any() -> None:
    p = policy({"allow": "shell", "args": {"command": {"shell": ["ls", "wc"]}}})
    assert action(p, "shell", command="ls | wc -l") == "allow"
    assert action(p, "shell", command="ls | cat") == "deny"


def test_roles_limit_a_rule() -> None:
    p = policy({"deny": "developer", "roles": ["reviewer"]}, default="allow")
    assert action(p, "developer", role="reviewer") == "deny"
    assert action(p, "developer", role="architect") == "allow"
    assert action(p, "developer") == "allow"


# ---- precedence ----

RULES = [{"deny": "shell"}, {"ask": "shell"}, {"allow": "shell"}]


@pytest.mark.parametrize("order", list(itertools.permutations(RULES)))
def test_deny_wins_whatever_the_order(order: tuple[dict[str, Any], ...]) -> None:
    assert action(policy(*order), "shell") == "deny"


@pytest.mark.parametrize("order", list(itertools.permutations(RULES[1:])))
def test_ask_wins_over_allow(order: tuple[dict[str, Any], ...]) -> None:
    assert action(policy(*order), "shell") == "ask"


@pytest.mark.parametrize("default", ["deny", "ask", "allow"])
def test_no_match_falls_to_the_default(default: str) -> None:
    decision = policy({"allow": "read_file"}, default=default).decide("shell", {})
    assert (decision.action, decision.rule) == (default, None)


def test_first_matching_rule_of_the_winning_kind_is_reported() -> None:
    p = policy(
        {"allow": "*", "id": "all"}, {"deny": "sh*", "id": "one"}, {"deny": "*", "id": "two"}
    )
    decision = p.decide("shell", {})
    assert decision.rule is not None and decision.rule.id == "one"


# ---- files ----


def test_policy_loads_by_name_from_search_dirs(tmp_path: Path) -> None:
    write(tmp_path, "team.yaml", "rules:\n  - allow: read_file\n")
    loaded = load_policy("team", search_dirs=[tmp_path])
    assert loaded.name == "team"
    assert loaded.hash == hashlib.sha256((tmp_path / "team.yaml").read_bytes()).hexdigest()
    assert loaded.path == tmp_path / "team.yaml"


def test_policy_loads_by_path_relative_to_a_directory(tmp_path: Path) -> None:
    write(tmp_path, "p.yml", "name: mine\ndefault: allow\n")
    assert load_policy("p.yml", relative_to=tmp_path).name == "mine"


def test_shipped_policies_load() -> None:
    names = ["default", "network-packages", "readonly", "strict"]
    assert shipped_policies() == names
    assert {load_policy(n).name for n in shipped_policies()} == set(names)
    assert load_policy("builtin:default") == load_policy("default")


def test_extend_puts_inherited_rules_and_guards_first(tmp_path: Path) -> None:
    write(
        tmp_path,
        "base.yaml",
        "default: allow\nrules:\n  - {id: b, deny: x}\nguards:\n  - use: budget\n",
    )
    write(
        tmp_path,
        "child.yaml",
        "extend: base\nrules:\n  - {id: c, ask: y}\nguards:\n  - use: audit\n",
    )
    child = load_policy(tmp_path / "child.yaml")
    assert [(r.id, r.policy) for r in child.rules] == [("b", "base"), ("c", "child")]
    assert [g.use for g in child.guards] == ["budget", "audit"]
    assert child.default == "allow"
    base_rule = child.rules[0]
    assert (
        base_rule.policy_hash == hashlib.sha256((tmp_path / "base.yaml").read_bytes()).hexdigest()
    )


def test_a_policy_edited_between_loads_is_loaded_as_it_now_is(tmp_path: Path) -> None:
    # a run loads its policies several times and a batch runs many: what was built from a
    # file is reused only while the file, and the one it extends, say the same
    write(tmp_path, "base.yaml", "default: allow\n")
    child = write(tmp_path, "child.yaml", "extend: base\nrules:\n  - {id: c, deny: y}\n")
    assert action(load_policy(child), "x") == "allow"
    assert load_policy(child) is load_policy(child)  # unchanged: built once
    write(tmp_path, "base.yaml", "default: allow\nrules:\n  - {id: b, deny: x}\n")
    assert action(load_policy(child), "x") == "deny"
    write(tmp_path, "child.yaml", "extend: base\nrules:\n  - {id: c, allow: x}\n")
    assert [r.id for r in load_policy(child).rules] == ["b", "c"]
    write(tmp_path, "child.yaml", "extend: strict\n")  # another base, by name
    assert load_policy(child).rules == load_policy("strict").rules
    write(tmp_path, "strict.yaml", "default: ask\n")  # now found beside it, first
    assert action(load_policy(child), "x") == "ask"


def test_unnamed_rules_of_base_and_child_do_not_clash(tmp_path: Path) -> None:
    write(tmp_path, "base.yaml", "rules:\n  - deny: x\n")
    write(tmp_path, "child.yaml", "extend: base\nrules:\n  - allow: y\n")
    child = load_policy("child", search_dirs=[tmp_path])
    assert [(r.policy, r.id) for r in child.rules] == [("base", "rules[0]"), ("child", "rules[0]")]


def test_child_default_overrides_the_base(tmp_path: Path) -> None:
    write(tmp_path, "base.yaml", "default: allow\n")
    write(tmp_path, "child.yaml", "extend: base\ndefault: ask\n")
    assert load_policy("child", search_dirs=[tmp_path]).default == "ask"


def test_extend_cycle_is_a_located_error(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "extend: b\n")
    write(tmp_path, "b.yaml", "description: b\nextend: a\n")
    with pytest.raises(ConfigError) as caught:
        load_policy("a", search_dirs=[tmp_path])
    assert (Path(caught.value.path or "").name, caught.value.line, caught.value.field) == (
        "b.yaml",
        2,
        "extend",
    )
    assert "a -> b -> a" in caught.value.message


def test_a_file_extending_its_own_name_is_a_cycle(tmp_path: Path) -> None:
    write(tmp_path, "default.yaml", "extend: default\n")
    with pytest.raises(ConfigError, match="cycle"):
        load_policy(tmp_path / "default.yaml")


def test_builtin_prefix_extends_the_shipped_policy(tmp_path: Path) -> None:
    write(tmp_path, "default.yaml", "extend: builtin:default\nrules:\n  - {id: mine, deny: x}\n")
    loaded = load_policy(tmp_path / "default.yaml")
    assert loaded.rules[-1].id == "mine" and len(loaded.rules) > 1


def test_unknown_policy_name_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown policy 'nope'"):
        load_policy("nope", search_dirs=[tmp_path])


def test_unknown_extend_is_located(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "# a\nextend: nope\n")
    with pytest.raises(ConfigError) as caught:
        load_policy(tmp_path / "a.yaml")
    assert (caught.value.line, caught.value.field) == (2, "extend")


@pytest.mark.parametrize(
    ("text", "line", "field", "words"),
    [
        ("name: x\nrulez: []\n", 2, "rulez", "unknown field"),
        ("rules:\n  - allow: a\n  - denny: b\n", 3, "rules.1.denny", "unknown field"),
        ("rules:\n  - allow: a\n    deny: b\n", 2, "rules.0", "exactly one of"),
        ("rules:\n  - allow: []\n", 2, "rules.0", "at least one tool"),
        (
            "rules:\n  - allow: a\n    args:\n      q: {regex: '('}\n",
            4,
            "rules.0.args.q.regex",
            "invalid regular",
        ),
        (
            "rules:\n  - allow: a\n    args:\n      q: {glob: a, within: b}\n",
            4,
            "rules.0.args.q.within",
            "unknown field",
        ),
        (
            "rules:\n  - allow: a\n    args:\n      q: {}\n",
            4,
            "rules.0.args.q",
            "at least one test",
        ),
        ("default: maybe\n", 1, "default", "'deny', 'ask' or 'allow'"),
        ("guards:\n  - use: pathz\n", 2, "guards.0.use", "unknown guard 'pathz'"),
        (
            "guards:\n  - use: rate_limit\n    with:\n      calls: 0\n      window: 5\n",
            4,
            "guards.0.with.calls",
            "greater than or equal to 1",
        ),
        (
            "guards:\n  - use: path\n    with: {roots: x}\n",
            3,
            "guards.0.with.roots",
            "unknown field",
        ),
        ("rules:\n  - {id: x, allow: a}\n  - {id: x, deny: b}\n", 3, "rules.1.id", "used twice"),
        ("rules:\n  - {id: 'rules[3]', allow: a}\n", 2, "rules.0.id", "choose another"),
        ("rules: [\n", 2, None, "invalid YAML"),
    ],
)
def test_bad_policy_files_are_located_errors(
    tmp_path: Path, text: str, line: int, field: str | None, words: str
) -> None:
    write(tmp_path, "bad.yaml", text)
    with pytest.raises(ConfigError) as caught:
        load_policy(tmp_path / "bad.yaml")
    error = caught.value
    assert (Path(error.path or "").name, error.line, error.field) == ("bad.yaml", line, field)
    assert words in error.message


# ---- PolicyGuard ----


async def test_policy_guard_notes_the_deciding_rule_on_the_call(
    tmp_path: Path, read_file: Tool[Any]
) -> None:
    write(tmp_path, "base.yaml", "rules:\n  - {id: reads, allow: read_file}\n")
    write(tmp_path, "team.yaml", "extend: base\n")
    team = load_policy("team", search_dirs=[tmp_path])
    call = CallRecord("c1", "read_file", "lead/dev#1", {"path": "a"})
    with use_call(call):
        await PolicyGuard(team)(read_file, path="a")
    assert (call.guard, call.rule, call.policy) == ("policy:team", "reads", "base")
    assert call.policy_hash == team.rules[0].policy_hash


async def test_policy_guard_denial_names_rule_and_default(shell: Tool[Any]) -> None:
    p = policy({"id": "no-shell", "deny": "shell", "reason": "no shells here"})
    with pytest.raises(GuardError) as caught:
        await PolicyGuard(p)(shell, command="ls")
    assert (caught.value.guard, caught.value.rule, caught.value.reason) == (
        "policy:test",
        "no-shell",
        "no shells here",
    )
    with pytest.raises(GuardError) as caught:
        await PolicyGuard(p)(Tool(name="other", handler=lambda: None))
    assert caught.value.rule == "default"


async def test_policy_guard_takes_the_role_from_the_agent_path(shell: Tool[Any]) -> None:
    p = policy({"deny": "shell", "roles": "reviewer"}, default="allow")
    with use_call(CallRecord("c", "shell", "lead/reviewer#2", {})), pytest.raises(GuardError):
        await PolicyGuard(p)(shell, command="ls")
    with use_call(CallRecord("c", "shell", "lead/developer#1", {})):
        assert await PolicyGuard(p)(shell, command="ls")


async def test_ask_without_an_approver_is_denied(shell: Tool[Any]) -> None:
    with pytest.raises(GuardError, match="nobody can approve"):
        await PolicyGuard(policy({"ask": "shell"}))(shell, command="ls")


async def test_ask_goes_to_the_run_approver(shell: Tool[Any]) -> None:
    asked = []

    async def approver(request: Any) -> bool:
        asked.append((request.tool, dict(request.arguments), request.rule, request.policy))
        return True

    with use_scope(RunScope(approver=approver)):
        assert await PolicyGuard(policy({"id": "q", "ask": "shell"}))(shell, command="ls")
    assert asked == [("shell", {"command": "ls"}, "q", "test")]


# ---- apply_policy ----


async def test_apply_policy_puts_the_policy_guard_first(
    tmp_path: Path, shell: Tool[Any], read_file: Tool[Any]
) -> None:
    own = RateLimitGuard(1, 1.0)
    mine = shell.copy(guards=(own,))
    write(tmp_path, "p.yaml", "guards:\n  - use: path\n  - {use: budget, tools: [shell]}\n")
    guarded = apply_policy([mine, read_file], load_policy(tmp_path / "p.yaml"), workspace=tmp_path)
    shell_chain = [type(g).__name__ for g in guarded[0].guards]
    read_chain = [type(g).__name__ for g in guarded[1].guards]
    assert shell_chain == ["PolicyGuard", "PathGuard", "BudgetGuard", "RateLimitGuard"]
    assert read_chain == ["PolicyGuard", "PathGuard"]
    assert guarded[0].guards[1] is guarded[1].guards[1]
    assert isinstance(guarded[0].guards[1], PathGuard)
    assert shell.guards == ()


def test_path_guard_without_a_workspace_is_a_located_error(shell: Tool[Any]) -> None:
    with pytest.raises(ConfigError) as caught:
        apply_policy([shell], load_policy("default"))
    assert Path(caught.value.path or "").name == "default.yaml"
    assert "workspace" in caught.value.message


async def test_a_role_can_be_denied_delegating_to_a_role() -> None:
    async def delegate(task: str) -> str:
        return "done"

    tools: list[Tool[Any]] = [
        Tool(name="developer", handler=delegate),
        Tool(name="tester", handler=delegate),
    ]
    p = policy({"id": "no-dev", "deny": "developer"}, {"allow": "*"})
    developer, tester = apply_policy(tools, p, role="reviewer")
    with pytest.raises(GuardError) as caught:
        await developer(task="ship it")
    assert caught.value.rule == "no-dev"
    assert await tester(task="test it") == "done"


def test_unknown_policy_name_suggests_a_close_one() -> None:
    with pytest.raises(ConfigError, match="did you mean 'readonly'"):
        load_policy("read-only")


def test_remembered_decisions_tell_true_from_1() -> None:
    policy = Policy.from_mapping(
        {"default": "deny", "rules": [{"allow": "t", "args": {"flag": {"equals": True}}}]}
    )
    assert policy.decide("t", {"flag": 1}).action == "deny"
    assert policy.decide("t", {"flag": True}).action == "allow"
    assert policy.decide("t", {"flag": 1}).action == "deny"
    assert policy.decide("t", {"flag": True}, role="x").action == "allow"


# ---- remembered decisions ----


def test_remembered_decision_is_not_reused_for_a_different_command() -> None:
    p = load_policy("default")
    assert action(p, "shell", command="ls | sort | head -1") == "allow"
    assert action(p, "shell", command="ls | sort | rm -rf ~") == "deny"
    assert action(p, "shell", command="ls | sort | head -1") == "allow"


def test_remembered_decision_is_not_reused_for_a_different_directory() -> None:
    p = load_policy("default")
    assert action(p, "shell", command="cd src && echo x > passwd") == "allow"
    assert action(p, "shell", command="cd /etc && echo x > passwd") == "deny"


def test_remembered_decision_is_not_reused_for_a_different_role() -> None:
    p = policy(
        {"deny": "shell", "roles": "reviewer", "args": {"command": {"shell": "git"}}},
        {"allow": "shell"},
    )
    assert action(p, "shell", "developer", command="git push") == "allow"
    assert action(p, "shell", "reviewer", command="git push") == "deny"
    assert action(p, "shell", "developer", command="git push") == "allow"


def test_remembered_decision_is_not_reused_for_a_different_policy() -> None:
    # both policies judge the same parsed command; each decides by its own rules
    command = "ls | python3 -c 'print(1)' | head"
    assert action(load_policy("default"), "shell", command=command) == "allow"
    assert action(load_policy("strict"), "shell", command=command) == "deny"
    assert action(load_policy("default"), "shell", command=command) == "allow"


def test_remembered_decision_is_not_reused_for_an_argument_of_another_type() -> None:
    p = policy({"deny": "t", "args": {"n": {"equals": 1}}}, default="allow")
    assert action(p, "t", n=1) == "deny"
    assert action(p, "t", n=True) == "allow"
