"""Paths every tier treats alike: the home's secrets, and what lies within what."""

from __future__ import annotations

from pathlib import Path

HOME_SECRETS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".password-store",
    ".pki",
)
"""Paths below the home never granted, even through a ``PATH`` directory at or above them."""


TOOLCHAIN_SECRETS = ("credentials", "credentials.toml", ".credentials.toml")
"""Files hidden inside a toolchain directory of the home (cargo keeps its token there)."""


def is_within(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or lies below it (both already resolved)."""
    return path == root or root in path.parents
