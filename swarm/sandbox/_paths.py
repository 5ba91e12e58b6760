"""Paths every tier treats alike: the home's and the machine's secrets, and what lies
within what."""

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

ROOT_SECRETS = (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
    "/etc/ssl/private",
)
"""The machine's secrets that only root reads (password hashes, sudo rules, SSH host keys,
TLS private keys): hidden from a command run as root, which keeps uid 0 in every tier."""


TOOLCHAIN_SECRETS = ("credentials", "credentials.toml", ".credentials.toml")
"""Files hidden inside a toolchain directory of the home (cargo keeps its token there)."""


def is_within(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or lies below it (both already resolved)."""
    return path == root or root in path.parents
