"""Network allow-lists: what an entry means, what it refuses, how a policy file says it
with errors that name the place, and how lists narrow down the delegation tree."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import pytest

from swarm.errors import ConfigError, ToolError
from swarm.guards import Policy, apply_policy, load_policy
from swarm.sandbox import Confinement, Sandbox, SandboxSettings, SandboxUnavailable
from swarm.sandbox.egress import AllowList, Egress, parse_allow_entry
from swarm.sandbox.select import narrow_network
from swarm.scope import CallRecord, RunScope, use_call, use_scope
from swarm.toolbox import make_toolbox
from swarm.tools import run_guards

PUBLIC = ipaddress.ip_address("93.184.216.34")


def allows(entries: list[str], host: str, port: int = 443, address: str = "93.184.216.34") -> bool:
    return AllowList.parse(entries).check(host, port, ipaddress.ip_address(address)).allowed


def test_wildcard_matches_names_below_the_domain_only() -> None:
    entries = ["*.pythonhosted.org"]
    assert allows(entries, "files.pythonhosted.org")
    assert allows(entries, "a.b.pythonhosted.org")
    assert not allows(entries, "pythonhosted.org")
    assert not allows(entries, "evilpythonhosted.org")
    assert not allows(entries, "files.pythonhosted.org.evil.com")


def test_names_compare_without_case_or_trailing_dot() -> None:
    assert allows(["PyPI.org"], "pypi.ORG.")
    assert not allows(["pypi.org"], "pypi.org.evil.com")


def test_port_in_an_entry_limits_the_port() -> None:
    assert allows(["git.example.com:443"], "git.example.com", 443)
    assert not allows(["git.example.com:443"], "git.example.com", 22)
    assert allows(["git.example.com"], "git.example.com", 22)


def test_listed_name_resolving_to_loopback_or_metadata_is_refused() -> None:
    for address in (
        "127.0.0.1",
        "169.254.169.254",
        "::1",
        "fe80::1",
        "0.0.0.0",
        "::ffff:127.0.0.1",
    ):
        assert not allows(["pkg.test"], "pkg.test", 80, address), address
    assert allows(["pkg.test", "127.0.0.0/8"], "pkg.test", 80, "127.0.0.1")


def test_address_literals_need_an_address_entry() -> None:
    assert not allows(["pypi.org"], "93.184.216.34", 443)
    assert allows(["93.184.216.0/24"], "93.184.216.34", 443)
    assert allows(["[2001:db8::]/32:443"], "[2001:db8::7]", 443, "2001:db8::7")
    assert not allows(["[2001:db8::]/32:443"], "[2001:db8::7]", 80, "2001:db8::7")


def test_numeric_names_are_not_names() -> None:
    # resolvers read these as 127.0.0.1
    for host in ("2130706433", "127.1", "0x7f.1", "017700000001"):
        assert not allows(["*.example.com", "example.com"], host, 80, "127.0.0.1"), host


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("*", "every host"),
        ("*.com", "top-level domain"),
        ("git.*.com", "only at the start"),
        ("https://pypi.org", "not a URL"),
        ("pypi.org:99999", "port"),
        ("pypi.org:x", "port"),
        ("10.0.0.0/33", "not an address range"),
        ("[::1", "']'"),
        ("exa mple.com", "not a host name"),
    ],
)
def test_bad_entries_say_what_is_wrong(entry: str, says: str) -> None:
    with pytest.raises(ValueError, match=says.replace("*", r"\*")):
        parse_allow_entry(entry)


def test_policy_error_names_file_line_and_field(tmp_path: Path) -> None:
    policy = tmp_path / "net.yaml"
    policy.write_text(
        "rules:\n  - allow: '*'\nsandbox:\n  network:\n    allow:\n      - pypi.org\n      - '*'\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_policy(policy)
    message = str(caught.value)
    assert "net.yaml" in message
    assert "sandbox.network" in message and "allow" in message
    assert "every host" in message


def test_policy_allow_list_gives_network_none_with_egress(tmp_path: Path) -> None:
    policy = tmp_path / "net.yaml"
    policy.write_text("sandbox:\n  network:\n    allow: [pypi.org, '*.pythonhosted.org']\n")
    settings = load_policy(policy).sandbox
    assert settings is not None and settings.network == "none"
    assert settings.egress is not None
    assert settings.egress.texts() == [["pypi.org", "*.pythonhosted.org"]]


def test_extending_policy_with_network_host_drops_the_list(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text("sandbox:\n  network: {allow: [pypi.org]}\n")
    (tmp_path / "wide.yaml").write_text("extend: base\nsandbox:\n  network: host\n")
    (tmp_path / "same.yaml").write_text("extend: base\nsandbox:\n  mode: required\n")
    wide = load_policy(tmp_path / "wide.yaml").sandbox
    same = load_policy(tmp_path / "same.yaml").sandbox
    assert wide is not None and wide.network == "host" and wide.egress is None
    assert same is not None and same.egress is not None


def test_child_list_cannot_widen_its_parents() -> None:
    parent = AllowList.parse(["pypi.org", "*.pythonhosted.org"], source="lead")
    child = Egress((AllowList.parse(["pypi.org", "evil.com"], source="dev"),))
    both = child.narrowed(parent)
    assert both.check("pypi.org", 443, PUBLIC).allowed
    refused = both.check("evil.com", 443, PUBLIC)
    assert not refused.allowed and "lead" in refused.reason
    assert not both.check("files.pythonhosted.org", 443, PUBLIC).allowed


def test_child_network_host_under_a_parent_list_gets_the_parents_list() -> None:
    parent = Egress((AllowList.parse(["pypi.org"], source="lead"),))
    host = narrow_network(SandboxSettings(network="host"), parent)
    assert host.network == "none" and host.egress is not None
    assert host.egress.check("pypi.org", 443, PUBLIC).allowed
    assert not host.egress.check("example.com", 443, PUBLIC).allowed
    none = narrow_network(SandboxSettings(network="none"), parent)
    assert none.egress is None and none.network == "none"


class Recording:
    """A tier that launches nothing: it keeps the network each command was to get."""

    tier = "none"

    def __init__(self) -> None:
        self.networks: list[str] = []

    def describe(self, network: str) -> str:
        return f"recording, network {network}"

    def launch(self, argv: tuple[str, ...], confinement: Confinement) -> Any:
        self.networks.append(confinement.network)
        raise SandboxUnavailable("recorded, not run")


@pytest.mark.anyio
async def test_a_roles_shell_runs_under_the_lists_above_it_wherever_the_role_is_reached(
    tmp_path: Path,
) -> None:
    # dev's tools are guarded once; the same shell serves dev as the entry and under lead
    lead = Policy.from_mapping({"name": "lead", "sandbox": {"network": {"allow": ["pypi.org"]}}})
    dev = Policy.from_mapping({"name": "dev", "default": "allow", "sandbox": {"network": "host"}})
    recording, seen = Recording(), []

    def finder(settings: SandboxSettings) -> Sandbox:
        seen.append(settings)
        return recording

    toolbox = make_toolbox(tmp_path, find=finder)
    [shell] = apply_policy([toolbox["shell"]], dev, role="dev", ceiling={"lead": lead, "dev": dev})
    for path in ("dev", "lead/dev#1"):
        with use_scope(RunScope(path, "run-1")):
            arguments = shell.validate({"command": "curl https://example.com"})
            call = CallRecord(f"call-{path}", "shell", path, arguments, arguments)
            with use_call(call), pytest.raises(ToolError, match="recorded, not run"):
                await shell.execute(await run_guards(shell, arguments))
    # as the entry: the host's network; under lead: lead's list, both checked and run
    assert recording.networks == ["host", "none"]
    entry, below = seen[0], seen[-1]
    assert entry.network == "host" and entry.egress is None
    assert below.network == "none" and below.egress is not None
    assert below.egress.check("pypi.org", 443, PUBLIC).allowed
    assert not below.egress.check("example.com", 443, PUBLIC).allowed
    assert {s.network for s in seen[: len(seen) // 2]} == {"host"}
    assert {s.network for s in seen[len(seen) // 2 :]} == {"none"}


def test_shipped_network_packages_policy_reaches_the_package_indexes_only() -> None:
    settings = load_policy("network-packages").sandbox
    assert settings is not None and settings.mode == "required" and settings.egress is not None
    for host in (
        "pypi.org",
        "files.pythonhosted.org",
        "registry.npmjs.org",
        "index.crates.io",
        "static.crates.io",
        "proxy.golang.org",
        "sum.golang.org",
    ):
        assert settings.egress.check(host, 443, PUBLIC).allowed, host
    assert not settings.egress.check("pypi.org", 80, PUBLIC).allowed
    assert not settings.egress.check("github.com", 443, PUBLIC).allowed
    assert not settings.egress.check("evil.pypi.org", 443, PUBLIC).allowed
