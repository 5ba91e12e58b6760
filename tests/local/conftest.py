"""One llama.cpp server (SmolLM2-135M) on 127.0.0.1 for the whole local-model session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from swarm.local import LocalServer


@pytest.fixture(scope="session")
def server() -> Iterator[LocalServer]:
    with LocalServer() as running:
        yield running
