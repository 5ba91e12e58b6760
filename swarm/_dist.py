"""What swarm is installed as: its distribution name, its version, and how to add an extra.

The import name is ``swarm``; the distribution is ``swarm-teams`` (``swarm`` on PyPI is
an unrelated game). An install hint names the checkout when swarm runs from one (an
editable install, or a source tree), since that works before anything is published.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DISTRIBUTION", "install_hint", "version"]

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
