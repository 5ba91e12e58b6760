"""Transport benchmarks: SSE decoding throughput and many concurrent streams.

Run: ``python benchmarks/bench_transports.py`` (not part of the test run). Uses the real
recordings in ``shared/fixtures/llm`` beside the repository.

1. Decoding: a recorded OpenAI and a recorded Anthropic stream, held in memory, fed to the
   SSE parser and the provider's decoder one network chunk per SSE event (as servers flush),
   repeated until the run is long enough. Reports chunks (SSE events) per second on one core.
2. Concurrency: 200 concurrent streams from a local server (a subprocess, so it does not
   share this process's core) through one ``OpenAITransport``. Reports chunks per second.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import yaml

from swarm import Message, TextDelta, ToolInputDelta
from swarm.transports import (
    AnthropicStreamDecoder,
    OpenAIStreamDecoder,
    OpenAITransport,
    SSEParser,
    StreamDecoder,
)

FIXTURES = Path(__file__).resolve().parents[1].parent / "shared/fixtures/llm"
OPENAI = "openai-chat-stream__parallel-tool-calls__multi-turn__gpt-4o.vcr.yaml"
ANTHROPIC = "anthropic-stream__thinking_delta__signature_delta__text_delta.vcr.yaml"


def recorded_body(name: str, interaction: int) -> bytes:
    data = yaml.safe_load((FIXTURES / name).read_text())
    body = data["interactions"][interaction]["response"]["body"]["string"]
    return body if isinstance(body, bytes) else body.encode()


def event_chunks(raw: bytes) -> list[bytes]:
    """The stream cut after each blank line: one network chunk per SSE event."""
    parts = raw.split(b"\n\n")
    chunks = [part + b"\n\n" for part in parts[:-1]]
    return chunks + ([parts[-1]] if parts[-1] else [])


def bench_decode(label: str, raw: bytes, decoder: Callable[[], StreamDecoder]) -> float:
    chunks = event_chunks(raw)
    rounds = max(1, 200_000 // len(chunks))
    best = 0.0
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(rounds):
            parser, dec = SSEParser(), decoder()
            for chunk in chunks:
                for sse in parser.feed(chunk):
                    dec.feed(sse)
            for sse in parser.close():
                dec.feed(sse)
            dec.finish()
        elapsed = time.perf_counter() - started
        best = max(best, rounds * len(chunks) / elapsed)
    print(f"{label:<44} {len(chunks):>4} chunks/stream  {best:>12,.0f} chunks/s")
    return best


SERVER = r"""
import asyncio, sys
body = open(sys.argv[1], "rb").read()
parts = [p + b"\n\n" for p in body.split(b"\n\n") if p]
payload = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"
head = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        b"transfer-encoding: chunked\r\n\r\n")

async def handle(reader, writer):
    try:
        while True:
            header = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in header.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await reader.readexactly(length)
            writer.write(head)
            for i in range(0, len(parts)):
                writer.write(b"%x\r\n%s\r\n" % (len(parts[i]), parts[i]))
                if i % 8 == 0:
                    await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()

async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()

asyncio.run(main())
"""


async def bench_concurrent(streams: int, port: int, chunks_per_stream: int) -> None:
    transport = OpenAITransport(
        "gpt-4o", base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_connections=None
    )
    counts: list[int] = []

    async def one() -> None:
        n = 0
        async for event in transport.stream([Message.user("hi")], [], ""):
            if isinstance(event, TextDelta | ToolInputDelta):
                n += 1
        counts.append(n)

    async with transport:
        async with anyio.create_task_group() as group:  # warm up: open the connections
            for _ in range(streams):
                group.start_soon(one)
        counts.clear()
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(streams):
                group.start_soon(one)
        elapsed = time.perf_counter() - started
    chunks = chunks_per_stream * streams
    print(
        f"{streams} concurrent streams, one OpenAITransport:"
        f" {elapsed:.2f}s, {streams / elapsed:,.0f} streams/s,"
        f" {chunks / elapsed:,.0f} chunks/s ({sum(counts)} deltas delivered)"
    )


def serve(body_path: Path) -> subprocess.Popen[str]:
    """Start the SSE server in its own process; returns once it listens."""
    return subprocess.Popen(
        [sys.executable, "-c", SERVER, str(body_path)], stdout=subprocess.PIPE, text=True
    )


def main() -> None:
    if not FIXTURES.is_dir():
        raise SystemExit(f"the recordings are missing: expected {FIXTURES}")
    print("SSE parse + decode throughput (one core, in memory):")
    openai_raw = recorded_body(OPENAI, 2)
    anthropic_raw = recorded_body(ANTHROPIC, 0)
    bench_decode("OpenAI  (gpt-4o tool-call stream)", openai_raw, OpenAIStreamDecoder)
    bench_decode("Anthropic (sonnet-4 thinking+text stream)", anthropic_raw, AnthropicStreamDecoder)
    tmp = Path(__file__).resolve().parent / ".bench_stream.sse"
    tmp.write_bytes(openai_raw)
    process = serve(tmp)
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        asyncio.run(bench_concurrent(200, port, len(event_chunks(openai_raw))))
    finally:
        process.terminate()
        process.wait()
        tmp.unlink()


if __name__ == "__main__":
    main()
