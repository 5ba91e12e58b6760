"""``swarm policy test POLICY [RUNS...]`` and ``swarm validate --against RUNS``: what a
policy would have decided on recorded runs (see ``swarm.guards.replay``)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from swarm._text import plural
from swarm._visible import visible
from swarm.cli.exits import FAILED, OK
from swarm.errors import ConfigError
from swarm.guards.policy import Policy, load_policy
from swarm.guards.replay import ReplayReport, audit_logs, replay_decisions
from swarm.record.record import default_runs_dir

__all__ = ["FAIL_ON", "cmd_policy_test", "print_replay", "replay_exit", "run_replay"]

FAIL_ON = ("loosened", "tightened", "any")
"""What ``--fail-on`` takes."""
_ARGUMENTS_SHOWN = 200


def _arguments(arguments: object) -> str:
    text = json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)
    if len(text) > _ARGUMENTS_SHOWN:
        text = text[: _ARGUMENTS_SHOWN - 1] + "…"
    return visible(text)


def print_replay(result: ReplayReport, runs: int) -> None:
    """Print each changed call, then the summary line."""
    for call in result.changed:
        redacted = " (arguments as redacted in the log)" if call.redacted else ""
        where = f"{visible(call.path)}  {visible(call.tool)}"
        print(f"{call.change}  {where}  {_arguments(call.arguments)}")
        print(
            f"  was {call.old} (rule {visible(call.old_rule or '-')}), now {call.new}"
            f" (rule {visible(call.new_rule)}): {visible(call.reason)}{redacted}"
        )
    print(
        f"replayed {plural(result.replayed, 'call')} of {plural(runs, 'run')}:"
        f" {len(result.changed)} changed ({result.count('loosened')} loosened,"
        f" {result.count('tightened')} tightened)"
    )


def replay_exit(result: ReplayReport, fail_on: str | None) -> int:
    """``FAILED`` when the changes meet ``fail_on``, else ``OK``."""
    if fail_on is not None and fail_on not in FAIL_ON:
        raise ConfigError(f"--fail-on takes {', '.join(FAIL_ON)}, not {fail_on!r}")
    return FAILED if result.fails(fail_on) else OK


def run_replay(
    runs: list[Path], policy_for: Callable[[str], Policy | None]
) -> tuple[ReplayReport, int]:
    """Replay ``runs`` (default: every run in the default runs directory)."""
    logs = audit_logs(runs or [default_runs_dir()])
    return replay_decisions(logs, policy_for), len(logs)


def cmd_policy_test(args: argparse.Namespace) -> int:
    """``swarm policy test``: one policy for every role (or ``--role``'s calls only)."""
    policy = load_policy(args.policy)
    role: str | None = args.role

    def policy_for(name: str) -> Policy | None:
        return policy if role is None or name == role else None

    result, runs = run_replay(list(args.runs), policy_for)
    print_replay(result, runs)
    return replay_exit(result, args.fail_on)
