"""Batch benchmark: one team over 200 tasks, in this process and on Ray (not a test).

    python benchmarks/bench_batch.py [--tasks 200] [--latency 0.05] [--parallel 16]
                                     [--serial 20] [--cpus-per-task 1 0.25]

The model is a real HTTP server on 127.0.0.1 (OpenAI-compatible, streamed) started here:
every call waits ``--latency`` seconds, then the first call of a task writes ``out.txt``
with ``write_file`` and the second answers; each task's expectation checks the file. The
model travels to workers as a spec (``openai-compatible:http://127.0.0.1:PORT/v1:bench``),
as a provider's would. Reported, in one process and one run:

- the wall time of the batch with ``--executor local`` (``--parallel`` runs at once);
- Ray's start (a local Ray with 2 CPUs), then the wall time of the same batch on it, once
  for each ``--cpus-per-task`` (1: two tasks at a time on 2 CPUs; 0.25: eight);
- the per-task overhead of the Ray path: ``--serial`` tasks one at a time on each
  executor, (Ray wall - local wall) / tasks.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio

from swarm.batch import BatchTask, LocalExecutor, RayExecutor, run_batch

LATENCY = 0.05
ROLE = """\
name: writer
description: Writes one file.
system: You write the file you are asked for.
tools: [write_file]
max_iterations: 4
"""


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "bench",
        "object": "chat.completion.chunk",
        "model": "bench",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _usage() -> bytes:
    body = {
        "id": "bench",
        "object": "chat.completion.chunk",
        "model": "bench",
        "choices": [],
        "usage": {"prompt_tokens": 200, "completion_tokens": 10, "total_tokens": 210},
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class _Model(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        time.sleep(LATENCY)
        if request["messages"][-1]["role"] == "tool":
            body = _chunk({"role": "assistant", "content": "wrote out.txt"}) + _chunk({}, "stop")
        else:
            call = {
                "index": 0,
                "id": "call_1",
                "type": "function",
                "function": {
                    "name": "write_file",
                    "arguments": json.dumps({"path": "out.txt", "content": "ok"}),
                },
            }
            body = _chunk({"role": "assistant", "tool_calls": [call]}) + _chunk({}, "tool_calls")
        body += _usage() + b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return None


def _tasks(count: int) -> list[BatchTask]:
    from swarm.scenario.spec import Expectations

    expect = Expectations.model_validate({"files": {"out.txt": "ok"}})
    return [BatchTask(f"t{i:03d}", f"write out.txt ({i})", expect=expect) for i in range(count)]


async def _timed(tasks: list[BatchTask], executor: Any, root: Path, model: str, name: str) -> float:
    out = root / f"{name}.jsonl"
    started = time.perf_counter()
    summary = await run_batch(
        tasks,
        team=root / "team",
        results=out,
        model=model,
        executor=executor,
        runs_dir=root / "runs" / name,
    )
    took = time.perf_counter() - started
    if summary.failed:
        failed = [r for r in summary.results if not r.ok][:3]
        raise SystemExit(f"{name}: {summary.failed} tasks failed, e.g. {failed}")
    return took


def main() -> None:
    global LATENCY
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--latency", type=float, default=LATENCY)
    parser.add_argument("--parallel", type=int, default=16)
    parser.add_argument("--serial", type=int, default=20)
    parser.add_argument("--cpus-per-task", type=float, nargs="+", default=[1.0, 0.25])
    args = parser.parse_args()
    LATENCY = args.latency
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    model = f"openai-compatible:http://127.0.0.1:{server.server_address[1]}/v1:bench"
    tasks, serial = _tasks(args.tasks), _tasks(args.serial)
    import ray

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "team").mkdir()
        (root / "team" / "writer.yaml").write_text(ROLE)
        print(f"{args.tasks} tasks, 2 model calls each at {LATENCY * 1000:.0f} ms")
        local = anyio.run(_timed, tasks, LocalExecutor(args.parallel), root, model, "local")
        print(
            f"local (--parallel {args.parallel}): {local:.2f} s ({args.tasks / local:.1f} tasks/s)"
        )
        started = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        print(f"ray start (2 CPUs): {time.perf_counter() - started:.2f} s")
        try:
            for cpus in args.cpus_per_task:
                name = f"ray-{cpus}"
                took = anyio.run(_timed, tasks, RayExecutor(cpus_per_task=cpus), root, model, name)
                print(
                    f"ray, {cpus:g} CPU a task ({int(2 / cpus)} at once): {took:.2f} s"
                    f" ({args.tasks / took:.1f} tasks/s)"
                )
            one_local = anyio.run(_timed, serial, LocalExecutor(1), root, model, "serial-local")
            one_ray = anyio.run(_timed, serial, RayExecutor(parallel=1), root, model, "serial-ray")
            print(
                f"one at a time, {args.serial} tasks: local {one_local / args.serial * 1000:.0f}"
                f" ms a task, ray {one_ray / args.serial * 1000:.0f} ms a task; overhead of"
                f" the Ray path {(one_ray - one_local) / args.serial * 1000:.0f} ms a task"
            )
        finally:
            ray.shutdown()
            server.shutdown()


if __name__ == "__main__":
    main()
