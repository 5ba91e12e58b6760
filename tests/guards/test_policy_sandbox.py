"""Policy files' ``sandbox:`` key: its forms, inheritance field by field, located errors,
and what the PolicyGuard does with it for tools that start processes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest

from swarm import ResourceLimits, SandboxSettings, SandboxUnavailable
from swarm.errors import ConfigError, GuardError
from swarm.guards import Policy, PolicyGuard, apply_policy, load_policy, shipped_policies
from swarm.sandbox import Confinement, Sandbox, find_sandbox
from swarm.sandbox.limits import default_memory
from swarm.sandbox.select import ToolSandbox, Unconfined
from swarm.scope import CallRecord, use_call
from swarm.tools import Tool, ToolContext


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text)
    return path


def test_a_mode_alone(tmp_path: Path) -> None:
    p = load_policy(write(tmp_path, "p.yaml", "default: allow\nsandbox: required\n"))
    assert p.sandbox == SandboxSettings(mode="required")


@pytest.mark.parametrize("text", ["sandbox: off\n", "sandbox: {mode: off}\n", "sandbox: 'off'\n"])
def test_off_written_bare_is_off_though_yaml_reads_it_as_false(tmp_path: Path, text: str) -> None:
    assert load_policy(write(tmp_path, "p.yaml", text)).sandbox == SandboxSettings(mode="off")


def test_a_bare_yes_is_refused_naming_the_modes(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="required, auto or off"):
        load_policy(write(tmp_path, "p.yaml", "sandbox: {mode: yes}\n"))


def test_a_mapping_with_every_field(tmp_path: Path) -> None:
    text = "sandbox:\n  mode: auto\n  network: host\n  env: [CARGO_HOME, GOPATH]\n"
    p = load_policy(write(tmp_path, "p.yaml", text))
    assert p.sandbox == SandboxSettings("auto", "host", ("CARGO_HOME", "GOPATH"))


def test_a_policy_that_says_nothing_leaves_it_to_the_toolbox(tmp_path: Path) -> None:
    assert load_policy(write(tmp_path, "p.yaml", "default: allow\n")).sandbox is None


def test_an_extending_policy_overrides_field_by_field(tmp_path: Path) -> None:
    write(tmp_path, "base.yaml", "sandbox: {mode: required, network: none, env: [A]}\n")
    child = load_policy(write(tmp_path, "child.yaml", "extend: base\nsandbox: {network: host}\n"))
    assert child.sandbox == SandboxSettings("required", "host", ("A",))
    relaxed = load_policy(write(tmp_path, "relaxed.yaml", "extend: base\nsandbox: auto\n"))
    assert relaxed.sandbox == SandboxSettings("auto", "none", ("A",))
    same = load_policy(write(tmp_path, "same.yaml", "extend: base\n"))
    assert same.sandbox == SandboxSettings("required", "none", ("A",))


@pytest.mark.parametrize("name", ["default", "strict", "readonly"])
def test_shipped_policies_require_a_sandbox_without_network(name: str) -> None:
    assert name in shipped_policies()
    assert load_policy(name).sandbox == SandboxSettings(mode="required", network="none")


@pytest.mark.parametrize(
    ("text", "line", "field", "says"),
    [
        ("default: allow\nsandbox: requird\n", 2, "sandbox.mode", "'required', 'auto' or 'off'"),
        ("sandbox:\n  mode: auto\n  network: internet\n", 3, "sandbox.network", "'none' or"),
        ("sandbox:\n  env: [OK, 'BAD NAME']\n", 2, "sandbox.env.1", "letters, digits and"),
        ("sandbox:\n  mode: auto\n  netwrk: none\n", 3, "sandbox.netwrk", "unknown field"),
        ("sandbox: [required]\n", 1, "sandbox", "expected a mapping"),
    ],
)
def test_bad_sandbox_settings_name_file_line_and_field(
    tmp_path: Path, text: str, line: int, field: str, says: str
) -> None:
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(ConfigError) as caught:
        load_policy(path)
    problem = caught.value
    assert (str(problem.path), problem.line, problem.field) == (str(path), line, field)
    assert says in problem.message


def test_policy_from_a_mapping_takes_the_key_too() -> None:
    p = Policy.from_mapping({"sandbox": {"mode": "off"}})
    assert p.sandbox == SandboxSettings(mode="off")


# ---- the guard ----


async def _shell(sandbox: Annotated[ToolSandbox, ToolContext], command: str) -> str:
    return f"ran {command} under {sandbox.in_force(None)}"


async def _echo(command: str) -> str:
    return command


def process_tool(finder: Any = find_sandbox, settings: SandboxSettings | None = None) -> Tool[Any]:
    return Tool("shell", _shell, context=ToolSandbox(settings or SandboxSettings(), finder))


def nothing_works(settings: SandboxSettings) -> Sandbox:
    return find_sandbox(settings, tiers=())


def guarded(policy: Policy, tool: Tool[Any]) -> Tool[Any]:
    [copy] = apply_policy([tool], policy)
    return copy


@pytest.mark.anyio
async def test_required_and_nothing_works_denies_with_how_to_get_one() -> None:
    p = Policy.from_mapping({"default": "allow", "sandbox": "required"})
    shell = guarded(p, process_tool(nothing_works))
    call = CallRecord("c1", "shell", "agent", {"command": "ls"})
    with use_call(call), pytest.raises(GuardError) as caught:
        await shell.check({"command": "ls"})
    assert caught.value.rule == "sandbox-required"
    assert "apt-get install bubblewrap" in caught.value.reason
    assert "dnf install bubblewrap" in caught.value.reason
    assert "sandbox: off" in caught.value.reason
    assert call.sandbox is None


@pytest.mark.anyio
async def test_a_denying_rule_is_reported_before_the_sandbox() -> None:
    p = Policy.from_mapping({"sandbox": "required", "rules": [{"id": "no-shell", "deny": "shell"}]})
    with pytest.raises(GuardError) as caught:
        await guarded(p, process_tool(nothing_works)).check({"command": "ls"})
    assert caught.value.rule == "no-shell"


@pytest.mark.anyio
async def test_tools_that_start_no_process_need_no_sandbox() -> None:
    guard = PolicyGuard(Policy.from_mapping({"default": "allow", "sandbox": "required"}))
    plain = Tool("shell_like", _echo)
    assert await guard.check(plain, command="ls") == {"command": "ls"}


@pytest.mark.anyio
async def test_auto_and_nothing_works_allows_and_notes_unconfined() -> None:
    p = Policy.from_mapping({"default": "allow", "sandbox": "auto"})
    shell = guarded(p, process_tool(nothing_works, SandboxSettings(mode="off")))
    call = CallRecord("c1", "shell", "agent", {"command": "ls"})
    with use_call(call):
        await shell.check({"command": "ls"})
    assert shell.context.settings == SandboxSettings(mode="auto")
    assert call.sandbox is not None and call.sandbox.startswith("none (unconfined")


class Recorder:
    tier = "test"

    def describe(self, network: str) -> str:
        return f"test tier, network {network}"

    def launch(self, argv: tuple[str, ...], confinement: Confinement) -> Any:
        raise AssertionError("nothing is launched here")


@pytest.mark.anyio
async def test_the_policys_settings_win_over_the_tools_and_reach_its_handler() -> None:
    seen: list[SandboxSettings] = []

    def finder(settings: SandboxSettings) -> Sandbox:
        seen.append(settings)
        return Recorder()

    p = Policy.from_mapping(
        {"default": "allow", "sandbox": {"mode": "required", "network": "host"}}
    )
    shell = guarded(p, process_tool(finder, SandboxSettings(mode="off")))
    call = CallRecord("c1", "shell", "agent", {"command": "ls"})
    with use_call(call):
        out = await shell.execute(await shell.check({"command": "ls"}))
    policys = SandboxSettings(mode="required", network="host")
    assert seen == [policys]
    assert call.sandbox == "test tier, network host"
    assert out.content == f"ran ls under {policys}"


@pytest.mark.anyio
async def test_a_policy_guard_whose_settings_are_not_bound_to_the_tool_denies() -> None:
    # put in the chain by hand, not by apply_policy: the tool would run under its own
    p = Policy.from_mapping({"default": "allow", "sandbox": {"network": "host"}})
    shell = process_tool(lambda settings: Recorder())
    with pytest.raises(GuardError) as caught:
        await PolicyGuard(p).check(shell, command="ls")
    assert caught.value.rule == "sandbox-required"
    assert "apply_policy" in caught.value.reason


@pytest.mark.anyio
async def test_two_policies_asking_different_sandboxes_of_one_tool_deny_its_calls() -> None:
    inner = Policy.from_mapping({"name": "inner", "default": "allow", "sandbox": "off"})
    outer = Policy.from_mapping({"name": "outer", "default": "allow", "sandbox": "required"})
    shell = guarded(outer, guarded(inner, process_tool(lambda settings: Recorder())))
    assert shell.context.settings == SandboxSettings(mode="required")
    with pytest.raises(GuardError) as caught:
        await shell.check({"command": "ls"})
    assert caught.value.guard == "policy:inner" and caught.value.rule == "sandbox-required"


@pytest.mark.anyio
async def test_a_policy_saying_nothing_of_sandboxes_keeps_the_tools_settings() -> None:
    own = SandboxSettings(mode="off")
    shell = guarded(Policy.from_mapping({"default": "allow"}), process_tool(settings=own))
    assert shell.context.settings is own
    assert await shell.check({"command": "ls"}) == {"command": "ls"}


def test_unconfined_describes_why() -> None:
    with pytest.raises(SandboxUnavailable):
        nothing_works(SandboxSettings(mode="required"))
    assert Unconfined().describe("none") == "none (unconfined: sandbox: off)"


# ---- resource limits ----


def test_limits_default_to_ones_ordinary_work_never_meets(tmp_path: Path) -> None:
    p = load_policy(write(tmp_path, "p.yaml", "sandbox: required\n"))
    assert p.sandbox is not None
    assert p.sandbox.limits == ResourceLimits(
        cpu=600, memory=default_memory(), file_size=1024**3, processes=512, open_files=4096
    )
    # The memory budget: the smaller of 4 GiB and half of the RAM.
    assert default_memory() <= 4 * 1024**3


def test_limits_take_numbers_sizes_and_unlimited(tmp_path: Path) -> None:
    text = (
        "sandbox:\n  limits:\n    cpu: 30\n    memory: 512MiB\n    file_size: 100k\n"
        "    processes: 64\n    open_files: unlimited\n"
    )
    p = load_policy(write(tmp_path, "p.yaml", text))
    assert p.sandbox is not None
    assert p.sandbox.limits == ResourceLimits(30, 512 * 1024**2, 100 * 1024, 64, None)


def test_an_extending_policy_overrides_limits_one_by_one(tmp_path: Path) -> None:
    write(tmp_path, "base.yaml", "sandbox: {mode: required, limits: {cpu: 30, memory: 1G}}\n")
    text = "extend: base\nsandbox: {limits: {memory: 2G}}\n"
    child = load_policy(write(tmp_path, "child.yaml", text))
    assert child.sandbox is not None
    assert child.sandbox.mode == "required"
    assert child.sandbox.limits == ResourceLimits(cpu=30, memory=2 * 1024**3)


@pytest.mark.parametrize(
    ("text", "line", "field", "says"),
    [
        ("sandbox:\n  limits:\n    cpu: 0\n", 3, "sandbox.limits.cpu", "above 0"),
        ("sandbox:\n  limits:\n    cpu: 1.5\n", 3, "sandbox.limits.cpu", "whole number"),
        ("sandbox:\n  limits:\n    memory: 4 gigs\n", 3, "sandbox.limits.memory", "4GiB"),
        ("sandbox:\n  limits:\n    memory: -1\n", 3, "sandbox.limits.memory", "above 0"),
        ("sandbox:\n  limits:\n    file_size: true\n", 3, "sandbox.limits.file_size", "size"),
        ("sandbox:\n  limits:\n    procs: 5\n", 3, "sandbox.limits.procs", "unknown field"),
        ("sandbox:\n  limits: 100\n", 2, "sandbox.limits", "expected a mapping"),
    ],
)
def test_bad_limits_name_file_line_and_field(
    tmp_path: Path, text: str, line: int, field: str, says: str
) -> None:
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(ConfigError) as caught:
        load_policy(path)
    problem = caught.value
    assert (str(problem.path), problem.line, problem.field) == (str(path), line, field)
    assert says in problem.message
