"""The Python examples of docs/loop.md run as they are."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).parents[1] / "docs" / "loop.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_doc_has_its_examples() -> None:
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize("block", BLOCKS, ids=[f"example-{i}" for i in range(len(BLOCKS))])
def test_an_example_of_docs_loop_runs(block: str) -> None:
    done = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
