"""Install hints name this project: the checkout's extras (``pip install -e
'<checkout>[ray]'``), never ``swarm[...]``, which on PyPI is an unrelated game; the
distribution is ``swarm-teams`` and ``swarm --version`` finds it."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _swarm_without(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``swarm ARGS`` in an interpreter where ``module`` cannot be imported."""
    code = (
        f"import sys; sys.modules[{module!r}] = None; from swarm.cli import main; sys.exit(main())"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_the_distribution_has_a_name_of_its_own_and_the_extras_the_hints_name() -> None:
    assert PROJECT["name"] == "swarm-teams"
    assert {"mcp", "otel", "ray", "local"} <= PROJECT["optional-dependencies"].keys()


def test_version_is_the_installed_distributions() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "swarm", "--version"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert done.stdout == f"swarm {PROJECT['version']}\n"


def test_a_missing_ray_names_the_checkouts_extra_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "lead.yaml").write_text("name: lead\nsystem: You lead.\n")
    (tmp_path / "script.yaml").write_text("script:\n  lead:\n    - text: done\n")
    (tmp_path / "tasks.jsonl").write_text(json.dumps({"id": "a", "task": "go"}) + "\n")
    done = _swarm_without(
        "ray",
        *("batch", "--team", "team", "--tasks", "tasks.jsonl", "-o", "out.jsonl"),
        *("--model", "script:script.yaml", "--executor", "ray"),
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert f"pip install -e '{REPO}[ray]'" in done.stderr
    assert "'swarm[" not in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_a_missing_mcp_sdk_names_the_checkouts_extra(tmp_path: Path) -> None:
    done = _swarm_without("mcp", "mcp", "serve", "--team", "team", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"pip install -e '{REPO}[mcp]'" in done.stderr
    assert "'swarm[" not in done.stderr and "Traceback" not in done.stderr


def test_a_missing_opentelemetry_names_the_checkouts_extra(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['opentelemetry'] = None\n"
        "from swarm.otel import otlp_tracer_provider\n"
        "try:\n    otlp_tracer_provider()\n"
        "except ImportError as exc:\n    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.stdout == f"OpenTelemetry is not installed: pip install -e '{REPO}[otel]'\n"
