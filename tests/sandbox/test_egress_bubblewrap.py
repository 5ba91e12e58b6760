"""bubblewrap with a network allow-list: the command's only way out is swarm's proxy.
Servers on 127.0.0.1 under invented names (the proxy's resolver is given a map); curl,
``pip download`` and ``git clone`` work for allowed names, everything else is refused,
leaves nothing at the servers, and is written to the audit log."""

from __future__ import annotations

import functools
import http.server
import json
import socket
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from swarm import SandboxSettings, Tool
from swarm.audit import AuditLog
from swarm.guards import Policy, apply_policy
from swarm.sandbox import Bubblewrap
from swarm.sandbox.egress import AllowList, Egress
from swarm.sandbox.proxy import mapped_resolver
from swarm.scope import CallRecord, RunScope, use_call, use_scope
from swarm.toolbox import make_toolbox
from swarm.tools import run_guards

from .conftest import text

pytestmark = pytest.mark.anyio

NAMES = {
    "pkg.test": "127.0.0.1",
    "git.test": "127.0.0.1",
    "evil.test": "127.0.0.1",
    "local.test": "127.0.0.1",
    "meta.test": "169.254.169.254",
}


@dataclass
class Server:
    """A static HTTP server on 127.0.0.1 that the test starts: ``root`` is served, and
    ``hosts`` records the Host header of every request it answered."""

    root: Path
    port: int = 0
    hosts: list[str] = field(default_factory=list)


def _wheel(directory: Path) -> None:
    """A minimal wheel of ``demo-pkg`` 1.0, and a simple index naming it."""
    files = directory / "files"
    files.mkdir()
    info = "demo_pkg-1.0.dist-info"
    with zipfile.ZipFile(files / "demo_pkg-1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("demo_pkg/__init__.py", "")
        wheel.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n")
        wheel.writestr(
            f"{info}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr(f"{info}/RECORD", "")
    index = directory / "simple" / "demo-pkg"
    index.mkdir(parents=True)
    (index / "index.html").write_text(
        '<html><body><a href="../../files/demo_pkg-1.0-py3-none-any.whl">'
        "demo_pkg-1.0-py3-none-any.whl</a></body></html>"
    )


def _repository(directory: Path) -> None:
    """A bare git repository served over dumb HTTP, with one commit."""
    work = directory / "work"
    git = [
        "git",
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t.invalid",
        "-c",
        "init.defaultBranch=main",
    ]
    subprocess.run([*git, "init", "-q", str(work)], check=True)
    (work / "README").write_text("cloned through the proxy\n")
    subprocess.run([*git, "-C", str(work), "add", "README"], check=True)
    subprocess.run([*git, "-C", str(work), "commit", "-qm", "one"], check=True)
    bare = directory / "repo.git"
    subprocess.run([*git, "clone", "-q", "--bare", str(work), str(bare)], check=True)
    subprocess.run(["git", "-C", str(bare), "update-server-info"], check=True)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    root = tmp_path / "served"
    root.mkdir()
    (root / "hello.txt").write_text("hello through the proxy\n")
    _wheel(root)
    _repository(root)
    found = Server(root)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            found.hosts.append(self.headers.get("Host", ""))
            super().do_GET()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(root))
    )
    found.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield found
    httpd.shutdown()
    thread.join()
    httpd.server_close()


def shell_allowing(ws: Path, *entries: str) -> Tool[Any]:
    egress = Egress((AllowList.parse(entries, source="test"),))
    settings = SandboxSettings(mode="required", egress=egress)
    return make_toolbox(ws, sandbox=settings, resolver=mapped_resolver(NAMES))["shell"]


async def run_audited(
    shell: Tool[Any],
    command: str,
    log: Path,
    *,
    path: str = "lead",
    calls: list[CallRecord] | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """Run ``command`` as agent ``path`` with an audit log; the output and the log's
    connection records (the call's record goes to ``calls``)."""
    with (
        AuditLog(log, fsync=False) as audit,
        use_scope(RunScope(path, "run-1", observers=(audit,))),
    ):
        arguments = shell.validate({"command": command})
        call = CallRecord("call_1", "shell", path, arguments, arguments)
        if calls is not None:
            calls.append(call)
        with use_call(call):
            checked = await run_guards(shell, arguments)
            out = await shell.execute(checked)
    return text(out), connections(log)


def connections(log: Path) -> list[dict[str, Any]]:
    """The ``connection`` records of an audit log."""
    records = [json.loads(line) for line in log.read_text().splitlines()]
    return [r for r in records if r["event"] == "connection"]


async def test_allowed_name_works_for_curl(
    bwrap: Bubblewrap, ws: Path, server: Server, tmp_path: Path
) -> None:
    shell = shell_allowing(ws, "pkg.test", "127.0.0.1/32")
    out, records = await run_audited(
        shell, f"curl -sS http://pkg.test:{server.port}/hello.txt", tmp_path / "audit.jsonl"
    )
    assert "hello through the proxy" in out
    assert server.hosts == [f"pkg.test:{server.port}"]
    (record,) = records
    assert record["decision"] == "allow" and record["host"] == "pkg.test"
    assert record["path"] == "lead" and record["port"] == server.port
    assert record["received"] > len("hello through the proxy") and record["duration"] >= 0


async def test_pip_download_from_a_local_index(
    bwrap: Bubblewrap, ws: Path, server: Server, tmp_path: Path
) -> None:
    shell = shell_allowing(ws, "pkg.test", "127.0.0.1/32")
    command = (
        f"{sys.executable} -m pip download --no-deps --no-cache-dir --disable-pip-version-check"
        f" --index-url http://pkg.test:{server.port}/simple/ --trusted-host pkg.test"
        " -d dl demo-pkg"
    )
    out, records = await run_audited(shell, command, tmp_path / "audit.jsonl")
    assert (ws / "dl" / "demo_pkg-1.0-py3-none-any.whl").is_file(), out
    assert records and all(r["decision"] == "allow" for r in records)


async def test_git_clone_over_http(
    bwrap: Bubblewrap, ws: Path, server: Server, tmp_path: Path
) -> None:
    shell = shell_allowing(ws, "git.test", "127.0.0.1/32")
    out, records = await run_audited(
        shell, f"git clone -q http://git.test:{server.port}/repo.git copy", tmp_path / "audit.jsonl"
    )
    assert (ws / "copy" / "README").read_text() == "cloned through the proxy\n", out
    assert {r["host"] for r in records} == {"git.test"}


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("evil.test", "not on the allow-list"),  # a name not on the list
        ("127.0.0.1", "address 127.0.0.1 is not on the allow-list"),  # an IP literal
        ("local.test", "resolves to 127.0.0.1"),  # a listed name resolving to loopback
        ("meta.test", "resolves to 169.254.169.254"),  # ... to the metadata address
    ],
)
async def test_refused_and_audited(
    bwrap: Bubblewrap, ws: Path, server: Server, tmp_path: Path, target: str, why: str
) -> None:
    shell = shell_allowing(ws, "pkg.test", "local.test", "meta.test")
    out, records = await run_audited(
        shell,
        f"curl -sS --noproxy '' http://{target}:{server.port}/hello.txt; echo;"
        f" curl -sS -p --noproxy '' https://{target}:{server.port}/hello.txt",
        tmp_path / "audit.jsonl",
    )
    assert "hello through the proxy" not in out
    assert "swarm proxy:" in out and why in out
    assert server.hosts == []
    assert [r["decision"] for r in records] == ["deny", "deny"]
    assert [r["method"] for r in records] == ["GET", "CONNECT"]
    assert all(why in r["reason"] and r["host"] == target for r in records)


async def test_connect_to_the_proxy_itself_is_refused_and_audited(
    bwrap: Bubblewrap, ws: Path, tmp_path: Path
) -> None:
    shell = shell_allowing(ws, "pkg.test")
    out, records = await run_audited(
        shell,
        "curl -sS -p --noproxy '' -x http://127.0.0.1:3128 http://127.0.0.1:3128/; echo;"
        " curl -sS -p --noproxy '' -x http://127.0.0.1:3128 http://localhost:3128/",
        tmp_path / "audit.jsonl",
    )
    assert out.count("CONNECT tunnel failed, response 403") == 2
    assert [(r["host"], r["decision"]) for r in records] == [
        ("127.0.0.1", "deny"),
        ("localhost", "deny"),
    ]


async def test_dns_and_udp_do_not_leave_the_sandbox(
    bwrap: Bubblewrap, ws: Path, tmp_path: Path
) -> None:
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    receiver.setblocking(False)
    port = receiver.getsockname()[1]
    query = (
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM);"
        " q = bytes.fromhex('123401000001000000000000');"
        f" s.sendto(q, ('127.0.0.1', {port}));"
        " print(socket.getaddrinfo('pkg.test', 80))"
    )
    try:
        out, records = await run_audited(
            shell_allowing(ws, "pkg.test", "127.0.0.1/32"),
            f'python3 -c "{query}"; echo bash > /dev/udp/127.0.0.1/{port}; echo done',
            tmp_path / "audit.jsonl",
        )
        with pytest.raises(BlockingIOError):
            receiver.recv(100)
    finally:
        receiver.close()
    assert "Temporary failure in name resolution" in out
    assert records == []  # nothing reached the proxy either


async def test_child_list_cannot_widen_its_parents(
    bwrap: Bubblewrap, ws: Path, server: Server, tmp_path: Path
) -> None:
    lead = Policy.from_mapping(
        {
            "name": "lead",
            "default": "allow",
            "sandbox": {"network": {"allow": ["pkg.test", "127.0.0.1/32"]}},
        }
    )
    dev = Policy.from_mapping(
        {
            "name": "dev",
            "default": "allow",
            "sandbox": {
                "mode": "required",
                "network": {"allow": ["pkg.test", "evil.test", "127.0.0.1/32"]},
            },
        }
    )
    toolbox = make_toolbox(
        ws, sandbox=SandboxSettings(mode="required"), resolver=mapped_resolver(NAMES)
    )
    [shell] = apply_policy([toolbox["shell"]], dev, role="dev", ceiling={"lead": lead, "dev": dev})
    calls: list[CallRecord] = []
    out, records = await run_audited(
        shell,
        f"curl -sS http://pkg.test:{server.port}/hello.txt; curl -sS http://evil.test:{server.port}/hello.txt",
        tmp_path / "audit.jsonl",
        path="lead/dev#1",
        calls=calls,
    )
    assert out.count("hello through the proxy") == 1
    assert server.hosts == [f"pkg.test:{server.port}"]
    assert [(r["host"], r["decision"]) for r in records] == [
        ("pkg.test", "allow"),
        ("evil.test", "deny"),
    ]
    assert "policy 'lead'" in records[1]["reason"] and records[1]["path"] == "lead/dev#1"
    (call,) = calls
    assert call.sandbox is not None
    assert call.sandbox.endswith(
        "out through the egress proxy to: pkg.test, evil.test, 127.0.0.1/32"
        " ∩ pkg.test, 127.0.0.1/32"
    )
