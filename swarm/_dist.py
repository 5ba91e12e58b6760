"""What swarm is installed as: its distribution name, its version, how to add an extra,
and where it keeps the models it installs.

The import name is ``swarm``; the distribution is ``swarm-teams`` (``swarm`` on PyPI is
an unrelated game). An install hint names the checkout when swarm runs from one (an
editable install, or a source tree), since that works before anything is published.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DISTRIBUTION", "install_hint", "models_cache", "version"]

DISTRIBUTION = "swarm-teams"
"""The name swarm is installed (and would be published) under."""

_CHECKOUT = Path(__file__).resolve().parents[1]


def version() -> str:
    """The installed version (``pyproject.toml``'s), or ``"0+unknown"`` in a bare tree."""
    import importlib.metadata  # a few dozen modules: only when asked

    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def install_hint(extra: str) -> str:
    """The command that installs ``extra`` (``mcp``, ``otel``, ``ray``, ``local``) for
    this swarm: ``pip install -e '<checkout>[extra]'`` from a checkout, else the
    distribution's name."""
    if (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / "swarm").is_dir():
        return f"pip install -e '{_CHECKOUT}[{extra}]'"
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def models_cache() -> Path:
    """Where ``swarm local install`` keeps the model files it writes:
    ``$XDG_CACHE_HOME/swarm/models`` (default ``~/.cache``). What is there is loaded later
    by a server outside any sandbox, so it is swarm's own code to the protected paths."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "swarm" / "models"
