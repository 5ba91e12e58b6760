"""The macOS tier's profile and argv. sandbox-exec cannot run here, so the generated SBPL is
read back by a small evaluator of the subset it uses (rules in order, the last match wins, as
in Seatbelt) to check what a command could read and write."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from swarm.sandbox import Confinement, Launch, Network, SeatbeltSandbox
from swarm.sandbox.limits import ResourceLimits


@dataclass
class Rule:
    action: str
    operations: list[str]
    filters: list[tuple[str, str]]  # (subpath|literal, path)


def parse(launch: Launch) -> tuple[list[Rule], dict[str, str], list[str]]:
    """The profile's rules, the -D parameters and the command argv (after the launcher
    that sets the resource limits)."""
    argv = list(launch.argv)
    argv = argv[argv.index("/usr/bin/sandbox-exec") :]
    assert argv[1] == "-p"
    profile = argv[2]
    params: dict[str, str] = {}
    rest = argv[3:]
    while rest[:1] == ["-D"]:
        key, _, value = rest[1].partition("=")
        params[key] = value
        rest = rest[2:]
    rules = []
    for line in profile.splitlines():
        match = re.fullmatch(r"\((allow|deny) ((?:[a-z*-]+ ?)+)(.*)\)", line)
        if match is None:
            continue
        filters = [
            (kind, params[key])
            for kind, key in re.findall(r'\((subpath|literal) \(param "([A-Z_0-9]+)"\)\)', line)
        ]
        rules.append(Rule(match[1], match[2].split(), filters))
    return rules, params, rest


def profile_text(launch: Launch) -> str:
    """The SBPL profile given to sandbox-exec."""
    return launch.argv[launch.argv.index("/usr/bin/sandbox-exec") + 2]


def allowed(rules: list[Rule], operation: str, path: Path) -> bool:
    """Whether ``operation`` (file-read-data, file-write-data...) on ``path`` is allowed."""
    decision = False
    for rule in rules:
        family = operation.split("-")[0] + "-" + operation.split("-")[1] + "*"
        if operation not in rule.operations and family not in rule.operations:
            continue
        if rule.filters and not any(
            path == Path(p) or (kind == "subpath" and Path(p) in path.parents)
            for kind, p in rule.filters
        ):
            continue
        decision = rule.action == "allow"
    return decision


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "project" / ".swarm").mkdir(parents=True)
    return home


def launch_of(
    home: Path, confinement: Confinement, argv: tuple[str, ...] = ("ls",)
) -> tuple[Launch, list[Rule], dict[str, str], list[str]]:
    sandbox = SeatbeltSandbox(hide_home=home)
    with sandbox.launch(argv, confinement) as launch:
        rules, params, command = parse(launch)
    return launch, rules, params, command


def confinement(
    home: Path,
    *,
    network: Network = "none",
    writable: tuple[Path, ...] = (),
    readonly: tuple[Path, ...] = (),
    hidden: tuple[Path, ...] = (),
) -> Confinement:
    return Confinement(
        workspace=home / "project",
        env={"PATH": "/usr/bin:/bin"},
        network=network,
        writable=writable,
        readonly=readonly,
        hidden=hidden,
    )


def test_argv_is_sandbox_exec_with_profile_params_then_the_command(home: Path) -> None:
    launch, _, params, command = launch_of(home, confinement(home), ("bash", "-c", "echo hi"))
    limits = ResourceLimits().launcher()
    assert launch.argv[: len(limits)] == limits
    argv = launch.argv[len(limits) :]
    assert argv[:2] == ("/usr/bin/sandbox-exec", "-p")
    assert argv[2].startswith("(version 1)\n(deny default)\n")
    assert command == ["bash", "-c", "echo hi"]
    assert params["WRITE_0"] == str((home / "project").resolve())
    assert launch.cwd == home / "project"


def test_profile_text_holds_no_path_only_parameters(home: Path) -> None:
    odd = home / 'project") (allow file-write* (subpath "/'
    launch, rules, _, _ = launch_of(home, confinement(home, writable=(odd,)))
    assert str(home) not in profile_text(launch)
    assert not allowed(rules, "file-write-data", Path("/etc/passwd"))


def test_workspace_writable_and_its_swarm_dir_readonly(home: Path) -> None:
    workspace = (home / "project").resolve()
    conf = confinement(home, readonly=(home / "project" / ".swarm",))
    _, rules, _, _ = launch_of(home, conf)
    assert allowed(rules, "file-write-data", workspace / "src" / "main.py")
    assert allowed(rules, "file-read-data", workspace / ".swarm" / "policy.yaml")
    assert not allowed(rules, "file-write-data", workspace / ".swarm" / "policy.yaml")


def test_writes_only_in_workspace_private_dirs_and_devices(home: Path) -> None:
    launch, rules, _, _ = launch_of(home, confinement(home))
    for path in ("/tmp/x", "/etc/hosts", "/usr/local/bin/evil", str(home / "x")):
        assert not allowed(rules, "file-write-data", Path(path)), path
    assert allowed(rules, "file-write-data", Path(launch.env["HOME"]) / ".cache" / "x")
    assert allowed(rules, "file-write-data", Path(launch.env["TMPDIR"]) / "x")
    assert allowed(rules, "file-write-data", Path("/dev/null"))


def test_real_home_unreadable_but_path_dirs_below_it(home: Path) -> None:
    bin_dir = home / ".local" / "bin"
    conf = Confinement(
        workspace=home / "project", env={"PATH": f"/usr/bin:{bin_dir}:{home}:{home}/.ssh"}
    )
    _, rules, _, _ = launch_of(home, conf)
    resolved = home.resolve()
    assert not allowed(rules, "file-read-data", resolved / ".netrc")
    assert not allowed(rules, "file-read-data", resolved / "notes.txt")
    assert not allowed(rules, "file-read-data", resolved / ".ssh" / "id_ed25519")
    assert allowed(rules, "file-read-data", resolved / ".local" / "bin" / "tool")
    assert allowed(rules, "file-read-data", Path("/usr/lib/libz.dylib"))


def test_secrets_stay_denied_when_the_workspace_is_the_home(home: Path) -> None:
    conf = Confinement(workspace=home, env={"PATH": "/usr/bin"})
    _, rules, _, _ = launch_of(home, conf)
    resolved = home.resolve()
    assert allowed(rules, "file-write-data", resolved / "project" / "x")
    assert not allowed(rules, "file-read-data", resolved / ".ssh" / "id_ed25519")
    assert not allowed(rules, "file-read-data", resolved / ".aws" / "credentials")


def test_hidden_paths_are_denied_even_inside_the_workspace(home: Path) -> None:
    records = home / "project" / "records"
    _, rules, _, _ = launch_of(home, confinement(home, hidden=(records,)))
    audit = records.resolve() / "audit.jsonl"
    assert not allowed(rules, "file-read-data", audit)
    assert not allowed(rules, "file-write-data", audit)


@pytest.mark.parametrize(("network", "expected"), [("none", False), ("host", True)])
def test_network_allowed_only_for_host(home: Path, network: Network, expected: bool) -> None:
    launch, _, _, _ = launch_of(home, confinement(home, network=network))
    profile = profile_text(launch)
    assert ("(allow network*)" in profile) is expected
    assert ("com.apple.dnssd.service" in profile) is expected


def test_signals_only_within_the_sandbox(home: Path) -> None:
    launch, _, _, _ = launch_of(home, confinement(home))
    signal_rules = [line for line in profile_text(launch).splitlines() if "signal" in line]
    assert signal_rules == ["(allow signal (target same-sandbox))"]


def test_env_gets_private_home_and_tmp_removed_after(home: Path) -> None:
    conf = Confinement(workspace=home / "project", env={"PATH": "/usr/bin", "LANG": "C.UTF-8"})
    launch, _, _, _ = launch_of(home, conf)
    assert launch.env["LANG"] == "C.UTF-8"
    assert Path(launch.env["HOME"]) != home
    assert not Path(launch.env["HOME"]).exists()
    assert not Path(launch.env["TMPDIR"]).exists()


def test_describe_names_the_tier_and_its_limit() -> None:
    sandbox = SeatbeltSandbox()
    assert sandbox.tier == "sandbox-exec"
    assert sandbox.describe("none").startswith("sandbox-exec, network none")
