"""OpenTelemetry spans of a run: names, parentage across three levels, attributes, the
guard's decision and the audit hash, errors as status; an export over OTLP/HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from swarm import OtelObserver
from swarm._dist import install_hint
from swarm.scenario import load_scenario, run_scenario

ROLES = Path(__file__).parents[2] / "roles"

SCENARIO = """\
name: traced
team: {roles}
entry: orchestrator
policy: default
task: Build and test.
model:
  script:
    orchestrator:
      - call: developer
        args: {{task: build it}}
      - text: built
    developer:
      - calls:
          - tool: shell
            args: {{command: rm -rf /tmp/nothing-here}}
          - tool: tester
            args: {{task: test it}}
      - text: tested
    tester:
      - call: list_files
        args: {{}}
      - text: all there
"""


def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO.format(roles=ROLES))
    return path


@pytest.fixture
def traced(tmp_path: Path) -> tuple[list[ReadableSpan], Path]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    observer = OtelObserver("orchestrator", model="scripted", tracer_provider=provider)
    scenario = load_scenario(scenario_file(tmp_path))
    outcome = anyio.run(
        lambda: run_scenario(
            scenario,
            workspace=tmp_path / "ws",
            runs_dir=tmp_path / "runs",
            on_event=observer,
            observers=(observer,),
        )
    )
    observer.close()
    return list(exporter.get_finished_spans()), outcome.record_dir


def one(spans: list[ReadableSpan], name: str, **attributes: Any) -> ReadableSpan:
    found = [
        s
        for s in spans
        if s.name == name and all((s.attributes or {}).get(k) == v for k, v in attributes.items())
    ]
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


def parent_of(spans: list[ReadableSpan], span: ReadableSpan) -> ReadableSpan:
    assert span.parent is not None
    return next(s for s in spans if s.context.span_id == span.parent.span_id)


def test_agents_nest_under_the_calls_that_delegated_to_them(
    traced: tuple[list[ReadableSpan], Path],
) -> None:
    spans, _ = traced
    root = one(spans, "invoke_agent orchestrator")
    developer = one(spans, "invoke_agent developer")
    tester = one(spans, "invoke_agent tester")
    assert root.parent is None
    delegate = parent_of(spans, developer)
    assert delegate.name == "execute_tool developer" and parent_of(spans, delegate) is root
    delegate = parent_of(spans, tester)
    assert delegate.name == "execute_tool tester" and parent_of(spans, delegate) is developer
    listing = one(spans, "execute_tool list_files")
    assert parent_of(spans, listing) is tester
    assert {s.context.trace_id for s in spans} == {root.context.trace_id}
    assert tester.attributes is not None
    assert tester.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert tester.attributes["gen_ai.agent.name"] == "tester"
    assert tester.attributes["swarm.agent.path"] == "orchestrator/developer#1/tester#1"


def test_model_calls_carry_the_model_and_their_tokens(
    traced: tuple[list[ReadableSpan], Path],
) -> None:
    spans, _ = traced
    chats = [s for s in spans if s.name == "chat scripted"]
    assert len(chats) == 6  # two turns for each of the three agents
    for chat in chats:
        attrs = chat.attributes or {}
        assert attrs["gen_ai.operation.name"] == "chat"
        assert attrs["gen_ai.request.model"] == "scripted"
        assert int(attrs["gen_ai.usage.input_tokens"]) > 0  # type: ignore[arg-type]
        assert parent_of(spans, chat).name.startswith("invoke_agent ")
    tester = one(spans, "invoke_agent tester")
    totals = [c for c in chats if parent_of(spans, c) is tester]
    assert (tester.attributes or {})["gen_ai.usage.input_tokens"] == sum(
        int((c.attributes or {})["gen_ai.usage.input_tokens"])
        for c in totals  # type: ignore[arg-type]
    )


def test_tool_calls_carry_the_guard_decision_rule_and_audit_hash(
    traced: tuple[list[ReadableSpan], Path],
) -> None:
    spans, record = traced
    denied = one(spans, "execute_tool shell")
    attrs = denied.attributes or {}
    assert attrs["gen_ai.tool.name"] == "shell"
    assert attrs["swarm.guard.decision"] == "deny"
    assert attrs["swarm.guard.rule"] == "no-recursive-delete"
    assert denied.status.status_code == StatusCode.ERROR
    assert "Permission denied" in (denied.status.description or "")
    audit = [json.loads(line) for line in (record / "audit.jsonl").read_text().splitlines()]
    decision = next(r for r in audit if r["event"] == "decision" and r["tool"] == "shell")
    finish = next(r for r in audit if r["event"] == "finish" and r["tool"] == "shell")
    assert attrs["gen_ai.tool.call.id"] == decision["call_id"]
    assert attrs["swarm.audit.decision_hash"] == decision["hash"]
    assert attrs["swarm.audit.hash"] == finish["hash"]
    assert [e.name for e in denied.events] == ["guard.decision"]
    listing = one(spans, "execute_tool list_files")
    assert (listing.attributes or {})["swarm.guard.decision"] == "allow"
    assert listing.status.status_code == StatusCode.UNSET


def test_a_failed_agent_is_an_error_span(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    observer = OtelObserver("orchestrator", tracer_provider=provider)
    path = tmp_path / "s.yaml"
    path.write_text(f"team: {ROLES}\ntask: x\nmodel:\n  script:\n    orchestrator: []\n")
    anyio.run(
        lambda: run_scenario(
            load_scenario(path),
            workspace=tmp_path / "ws",
            runs_dir=tmp_path / "runs",
            on_event=observer,
            observers=(observer,),
        )
    )
    root = one(exporter.get_finished_spans(), "invoke_agent orchestrator")  # type: ignore[arg-type]
    assert root.status.status_code == StatusCode.ERROR
    assert "script" in (root.status.description or "")


def test_import_swarm_does_not_load_opentelemetry() -> None:
    code = "import sys, swarm; print(any(m.startswith('opentelemetry') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


class Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP trace receiver: decodes each export and keeps its spans."""

    received: ClassVar[list[tuple[str, dict[str, Any]]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource in request.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    attrs = {a.key: a.value for a in span.attributes}
                    self.received.append((span.name, attrs))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()
        self.wfile.write(b"")

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def collector() -> Iterator[str]:
    Collector.received = []
    server = HTTPServer(("127.0.0.1", 0), Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_swarm_run_otel_exports_over_otlp_http(collector: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector
    done = subprocess.run(
        [sys.executable, "-m", "swarm", "run", scenario_file(tmp_path), "--otel", "--plain"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    names = [name for name, _ in Collector.received]
    for name in ("invoke_agent orchestrator", "invoke_agent tester", "chat scripted"):
        assert name in names
    shell = next(attrs for name, attrs in Collector.received if name == "execute_tool shell")
    assert shell["swarm.guard.rule"].string_value == "no-recursive-delete"
    assert shell["gen_ai.operation.name"].string_value == "execute_tool"


def test_swarm_run_otel_without_the_extra_says_how_to_get_it(tmp_path: Path) -> None:
    # None in sys.modules makes every import of the package fail, as if not installed
    code = (
        "import sys; sys.modules['opentelemetry'] = None; sys.argv[0] = 'swarm';"
        " from swarm.cli import entry_point; entry_point()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "run", scenario_file(tmp_path), "--otel", "--plain"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert f"--otel: OpenTelemetry is not installed: {install_hint('otel')}" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / ".swarm").exists()  # refused before any run started
