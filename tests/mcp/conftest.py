"""Helpers for the MCP tests: HTTP servers started as processes on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Callable, Iterator

import pytest

StartHttp = Callable[[Callable[[int], list[str]]], str]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def start_http() -> Iterator[StartHttp]:
    """Start ``argv(port)`` on a free port, wait until it listens (a bounded poll, failing
    with its stderr if it exits), and return its ``/mcp`` URL; stopped after the test."""
    processes: list[subprocess.Popen[bytes]] = []

    def start(argv: Callable[[int], list[str]]) -> str:
        port = _free_port()
        process = subprocess.Popen(argv(port), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        processes.append(process)
        for _ in range(1200):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return f"http://127.0.0.1:{port}/mcp"
            except OSError:
                try:
                    process.wait(timeout=0.05)
                except subprocess.TimeoutExpired:
                    continue
                said = process.stderr.read() if process.stderr else b""
                raise AssertionError(f"the server exited: {said!r}") from None
        raise AssertionError("the server did not listen within a minute")

    yield start
    for process in processes:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()
