"""When the third-party recordings are absent, their tests are skipped, never in CI."""

from pathlib import Path

import pytest

from .recordings import THIRD_PARTY, fixture, skip_conformance


def test_absent_recordings_skip_the_conformance_layer(tmp_path: Path) -> None:
    assert skip_conformance(tmp_path / "missing", {})


@pytest.mark.parametrize("value", ["true", "1", ""])
def test_absent_recordings_are_not_skipped_in_ci(tmp_path: Path, value: str) -> None:
    assert not skip_conformance(tmp_path / "missing", {"CI": value})


def test_present_recordings_always_run(tmp_path: Path) -> None:
    assert not skip_conformance(tmp_path, {})


def test_our_streams_never_depend_on_the_shared_folder() -> None:
    path = fixture("openai-chat__refusal-deltas.sse.txt")
    assert THIRD_PARTY not in path.parents
    assert path.is_relative_to(Path(__file__).parent / "fixtures")
