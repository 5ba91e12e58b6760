"""The environment of a command a tool starts, built from scratch.

Nothing of swarm's own environment reaches a command unless it is named: the command gets
``PATH``, ``HOME``, ``LANG``, ``TERM`` and ``TMPDIR``, plus the variables a policy's
``sandbox: {env: [...]}`` names. So an API key in swarm's environment stays out of every
command, whatever the key is called.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

__all__ = ["BASE_VARIABLES", "command_environment"]

BASE_VARIABLES = ("PATH", "HOME", "LANG", "TERM", "TMPDIR")
"""The variables every command gets."""


def command_environment(
    names: Iterable[str] = (), *, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a command: ``PATH``, ``HOME``, ``LANG`` (default ``C.UTF-8``),
    ``TERM`` (default ``dumb``) and ``TMPDIR`` (always ``/tmp``, private in a sandbox),
    then each variable of ``names`` that ``environ`` (default: this process's
    environment) holds. Never copies anything else."""
    source = os.environ if environ is None else environ
    env = {
        "PATH": source.get("PATH") or os.defpath,
        "HOME": source.get("HOME") or "/",
        "LANG": source.get("LANG") or "C.UTF-8",
        "TERM": source.get("TERM") or "dumb",
        "TMPDIR": "/tmp",
    }
    for name in names:
        if name in source:
            env[name] = source[name]
    return env
