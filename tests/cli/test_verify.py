"""``swarm audit verify`` against someone who can write the run record but not read its key."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, Any as Swarm

import pytest
from swarm_command import run_swarm

from swarm.audit import GENESIS, record_hash

EXAMPLE = Path(__file__).parents[2] / "examples" / "denied-shell.yaml"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished run of the denied-shell example (its record, copied per test)."""
    state = tmp_path_factory.mktemp("state")
    home = tmp_path_factory.mktemp("run")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = run_swarm(
        ["run", EXAMPLE, "--workspace", "ws", "--plain"],
        cwd=home,
        env={**env, "XDG_STATE_HOME": str(state)},
    )
    assert done.returncode == 0, done.stderr
    (record,) = (state / "swarm" / "runs").iterdir()
    return record


@pytest.fixture
def record(pristine: Path, runs: Path) -> Path:
    runs.mkdir(parents=True)
    return Path(shutil.copytree(pristine, runs / pristine.name))


def _records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def _write(log: Path, records: list[dict[str, Any]]) -> None:
    log.write_text("".join(json.dumps(r) + "\n" for r in records))


def _rechain(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What an attacker without the key can do: renumber and recompute every hash."""
    prev = GENESIS
    for seq, record in enumerate(records):
        record["seq"], record["prev"] = seq, prev
        record["hash"] = prev = record_hash(record)
    return records


def append_forged(log: Path) -> None:
    records = _records(log)
    forged = {**records[-1], "tool": "read_file", "decision": "allow", "mac": "0" * 64}
    _write(log, _rechain([*records, forged]))


def truncate_by_one(log: Path) -> None:
    _write(log, _records(log)[:-1])


def edit_and_rechain(log: Path) -> None:
    records = _records(log)
    denied = next(r for r in records if r.get("decision") == "deny")
    denied["decision"], denied["reason"] = "allow", None  # hide the denied rm -rf
    _write(log, _rechain(records))


def replace_with_two(log: Path) -> None:
    records = _records(log)[:2]
    for record in records:
        record["run_id"] = "forged"
    _write(log, _rechain(records))


def duplicate_key(log: Path) -> None:
    lines = log.read_text().splitlines()
    # a reader that keeps the first value sees "allow"; json.loads keeps the second
    lines[0] = lines[0].replace('"decision":', '"decision":"allow","decision":', 1)
    log.write_text("\n".join(lines) + "\n")


def empty(log: Path) -> None:
    log.write_text("")


def reorder(log: Path) -> None:
    records = _records(log)
    records[0], records[1] = records[1], records[0]
    _write(log, records)


TAMPERING: dict[str, tuple[Callable[[Path], None], str]] = {
    "forged record appended, hashes recomputed": (append_forged, "MAC does not match"),
    "truncated by one record": (truncate_by_one, "records were cut"),
    "record edited, chain recomputed": (edit_and_rechain, "MAC does not match"),
    "log replaced by a forged two-record chain": (replace_with_two, "MAC does not match"),
    "duplicated key, first value forged": (duplicate_key, "appears twice"),
    "empty file": (empty, "empty"),
    "records reordered": (reorder, "record"),
}


@pytest.mark.parametrize("tamper", list(TAMPERING), ids=list(TAMPERING))
def test_verify_detects_tampering_with_the_record_number(
    swarm: Swarm, record: Path, tamper: str
) -> None:
    change, said = TAMPERING[tamper]
    assert swarm("audit", "verify", record.name).returncode == 0
    change(record / "audit.jsonl")
    done = swarm("audit", "verify", record.name)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "tampered or damaged at" in done.stdout and "(record " in done.stdout
    assert said in done.stdout


def test_verify_by_run_id_checks_macs_and_the_head(swarm: Swarm, record: Path) -> None:
    done = swarm("audit", "verify", record.name)
    assert done.returncode == 0, done.stderr
    assert "chain intact, MACs valid, head anchored" in done.stdout


def test_verify_without_the_key_says_the_macs_were_not_checked(swarm: Swarm, record: Path) -> None:
    (record / "audit.key").unlink()
    done = swarm("audit", "verify", record / "audit.jsonl")
    assert done.returncode == 0 and "MACs not checked" in done.stdout


def test_a_head_rewritten_to_match_a_cut_log_is_detected(swarm: Swarm, record: Path) -> None:
    log = record / "audit.jsonl"
    records = _records(log)[:-2]
    _write(log, records)
    last = records[-1]
    head = {"records": len(records), "hash": last["hash"], "mac": last["mac"], "seal": "0" * 64}
    (record / "head.json").write_text(json.dumps(head))
    done = swarm("audit", "verify", record.name)
    assert done.returncode == 1 and "seal does not match" in done.stdout


def test_a_missing_log_of_a_run_fails(swarm: Swarm, record: Path) -> None:
    (record / "audit.jsonl").unlink()
    done = swarm("audit", "verify", record.name)
    assert done.returncode == 1 and "missing" in done.stdout


def test_a_file_that_is_not_a_log_is_bad_input(swarm: Swarm, tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("shopping list\n")
    done = swarm("audit", "verify", other)
    assert done.returncode == 2 and "not an audit log" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_record_is_private(record: Path, pristine: Path) -> None:
    assert pristine.stat().st_mode & 0o777 == 0o700
    assert pristine.parent.stat().st_mode & 0o777 == 0o700
    assert (pristine / "audit.key").stat().st_mode & 0o777 == 0o600


REWRITE = """\
import json, hashlib, pathlib, sys
log = next(pathlib.Path(sys.argv[1]).glob("swarm/runs/*/audit.jsonl"))
records = [json.loads(line) for line in log.read_text().splitlines()]
kept = [r for r in records if r.get("decision") != "deny" and r.get("outcome") != "denied"]
prev = "0" * 64
for seq, r in enumerate(kept):
    r.pop("mac", None)
    r["seq"], r["prev"] = seq, prev
    body = json.dumps({k: v for k, v in r.items() if k != "hash"}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False)
    r["hash"] = prev = hashlib.sha256(body.encode()).hexdigest()
log.write_text("".join(json.dumps(r) + "\\n" for r in kept))
print("rewrote", len(records) - len(kept), "records")
"""

AGENT = """\
team: {roles}
entry: developer
task: Clean up.
files: {{rewrite.py: {script}}}
model:
  script:
    developer:
      - call: shell
        args: {{command: "rm -rf build"}}
      - call: shell
        args: {{command: "python3 rewrite.py {state}"}}
      - call: list_files
        args: {{}}
      - text: Done.
"""


def _rewrite_run(
    swarm: Swarm, runs: Path, state_home: Path, tmp_path: Path, policy: str
) -> tuple[Path, list[dict[str, Any]]]:
    """A run whose agent runs a script rewriting the audit log, under ``policy``."""
    roles = Path(__file__).parents[2] / "roles"
    (tmp_path / "policy.yaml").write_text(policy)
    scenario = tmp_path / "rewrite.yaml"
    text = AGENT.format(roles=roles, script=json.dumps(REWRITE), state=state_home)
    scenario.write_text(text + "policy: policy.yaml\n")
    done = swarm("run", scenario, "--workspace", tmp_path / "ws", "--plain")
    assert done.returncode == 0, done.stdout + done.stderr
    (record,) = runs.iterdir()
    return record, _records(record / "audit.jsonl")


def test_an_agent_cannot_reach_the_log_from_the_sandbox(
    swarm: Swarm, runs: Path, state_home: Path, tmp_path: Path
) -> None:
    policy = "name: sandboxed\nextend: builtin:default\nsandbox: required\n"
    record, records = _rewrite_run(swarm, runs, state_home, tmp_path, policy)
    assert any(r.get("decision") == "deny" for r in records)  # the denial is still there
    assert swarm("audit", "verify", record.name).returncode == 0


def test_an_agent_rewriting_the_log_without_a_sandbox_is_detected(
    swarm: Swarm, runs: Path, state_home: Path, tmp_path: Path
) -> None:
    policy = "name: unsandboxed\nextend: builtin:default\nsandbox: off\n"
    record, records = _rewrite_run(swarm, runs, state_home, tmp_path, policy)
    assert not any(r.get("decision") == "deny" for r in records)  # the script did rewrite it
    verified = swarm("audit", "verify", record.name)
    assert verified.returncode == 1 and "MAC does not match" in verified.stdout
