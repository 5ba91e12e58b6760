"""The child process that runs llama.cpp's server: ``python .../swarm/local/server.py``.

Run by path (stdlib and xllamacpp only): as ``python -m swarm.local.server`` it would
import the ``swarm`` package first, half a second of CPU at every start.

It starts ``xllamacpp.Server`` on 127.0.0.1 with a port the OS picks, prints one JSON line
(``{"port": N}``) once it listens, and runs until it is sent SIGTERM (or its parent's
pipe closes). ``LocalServer`` starts and stops it; run it directly only to debug.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="server.py")
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--template", type=Path, required=True)
    parser.add_argument("--alias", default="smollm2-135m-instruct")
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--slots", type=int, default=2)
    args = parser.parse_args(argv)

    import xllamacpp  # type: ignore[import-untyped]  # only this process needs it

    params = xllamacpp.CommonParams()
    params.model.path = str(args.model)
    params.n_ctx = args.ctx
    # parallel sub-agents are served side by side, not queued; the slots share one
    # context of --ctx tokens, each able to use all of it
    params.n_parallel = args.slots
    params.kv_unified = True
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.offline = True
    # llama.cpp would fit the context and layers to the free device memory by loading
    # the model's tensors several times over: a third of the start-up's CPU, for a 135M
    # model whose 8192-token context (190 MB of cache) fits anywhere
    params.fit_params = False
    params.chat_template = args.template.read_text(encoding="utf-8")
    params.model_alias = [args.alias]
    server = xllamacpp.Server(params)
    address = str(server.listening_address)
    port = int(address.rsplit(":", 1)[-1])
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    sys.stdout.write(json.dumps({"port": port}) + "\n")
    sys.stdout.flush()

    def watch_parent() -> None:  # the parent died without stopping us: stop too
        sys.stdin.read()
        stop.set()

    threading.Thread(target=watch_parent, daemon=True).start()
    stop.wait()
    del server
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
