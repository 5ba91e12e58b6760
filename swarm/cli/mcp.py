"""``swarm mcp serve``: a team served as an MCP server (stdio, or streamable HTTP)."""

from __future__ import annotations

import argparse
import sys

import anyio

from swarm._dist import install_hint
from swarm.cli.exits import OK
from swarm.errors import ConfigError

__all__ = ["cmd_serve"]


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--http wants HOST:PORT (such as 127.0.0.1:8765), not '{text}'")
    return host.strip("[]"), int(port)


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from swarm.cli.mcp_serve import team_server
    except ImportError as exc:
        raise ConfigError(
            f"serving over MCP needs the mcp package ({exc}): {install_hint('mcp')}"
        ) from None
    from swarm.scenario import Scenario, load_scenario
    from swarm.scenario.runner import NO_MODEL_HELP

    if args.scenario is not None:
        scenario = load_scenario(args.scenario)
        if args.team is not None:
            raise ConfigError("give a scenario file or --team, not both")
    elif args.team is not None:
        scenario = Scenario(name="mcp", task="", team=args.team)
    else:
        raise ConfigError("give a scenario file or --team DIR")
    if args.model is None and scenario.model is None:
        raise ConfigError(NO_MODEL_HELP, path=scenario.path, field="model")
    if args.entry is not None or args.policy is not None:
        from dataclasses import replace

        scenario = replace(
            scenario, entry=args.entry or scenario.entry, policy=args.policy or scenario.policy
        )
    address = _address(args.http) if args.http else None
    roles = None
    if args.all:
        from swarm.team import load_specs

        roles = sorted(load_specs(scenario.team))
    server = team_server(
        scenario,
        roles=roles,
        model=args.model,
        workspace=args.workspace,
        runs_dir=args.runs_dir,
    )
    if address is None:
        anyio.run(server.run_stdio_async)
    else:
        host, port = address
        sys.stderr.write(f"serving MCP on http://{host}:{port}/mcp\n")
        anyio.run(lambda: server.run_streamable_http_async(host=host, port=port))
    return OK
