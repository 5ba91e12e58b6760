"""What a policy says about sandboxing: its ``sandbox:`` key, merged over the one it
extends field by field, and the check a ``PolicyGuard`` makes on tools that start
processes (those whose context is a ``swarm.sandbox.select.ToolSandbox``, which
``apply_policy`` binds the policy's settings to)."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic

from swarm.errors import GuardError
from swarm.sandbox import (
    Mode,
    Network,
    Reads,
    ResourceLimits,
    Sandbox,
    SandboxSettings,
    SandboxUnavailable,
)
from swarm.sandbox.egress import AllowList, Egress, parse_allow_entry
from swarm.sandbox.limits import parse_size
from swarm.sandbox.select import ToolSandbox
from swarm.scope import CallRecord

__all__ = [
    "SANDBOX_RULE",
    "LimitsFile",
    "NetworkFile",
    "SandboxFile",
    "confine",
    "describe_sandbox",
    "merge_sandbox",
]

SANDBOX_RULE = "sandbox-required"
"""The rule id of a denial because no sandbox meets the settings."""


def _env_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError("a variable name has letters, digits and '_' only, no digit first")
    return name


EnvName = Annotated[str, pydantic.AfterValidator(_env_name)]
UNLIMITED = "unlimited"
"""The word that lifts a limit."""


def _size(value: Any) -> int | str:
    if value == UNLIMITED:
        return UNLIMITED
    if isinstance(value, int | str) and not isinstance(value, bool):
        return parse_size(value)
    raise ValueError("give a size such as 4GiB, 512MiB or 100k, or 'unlimited'")


def _count(value: Any) -> int | str:
    if value == UNLIMITED:
        return UNLIMITED
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    raise ValueError("give a whole number above 0, or 'unlimited'")


Size = Annotated[int | str, pydantic.BeforeValidator(_size)]
Count = Annotated[int | str, pydantic.BeforeValidator(_count)]


class LimitsFile(pydantic.BaseModel):
    """The ``limits:`` key of a policy's ``sandbox:``: each a number, a size for
    ``memory`` and ``file_size`` (``4GiB``), or ``unlimited``; a key left out is
    inherited."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    cpu: Count | None = None
    memory: Size | None = None
    file_size: Size | None = None
    processes: Count | None = None
    open_files: Count | None = None
    tmpfs: Size | None = None
    """The size of each private tmpfs (``/tmp``, ``/var/tmp``, ``/dev/shm``, ``/run``,
    the emptied homes); not a resource limit of ``ResourceLimits``."""


_NOT_RESOURCE_LIMITS = ("tmpfs",)


def _limits(spec: LimitsFile | None, base: ResourceLimits) -> ResourceLimits:
    if spec is None:
        return base
    values: dict[str, int | None] = {}
    for name in LimitsFile.model_fields:
        if name in _NOT_RESOURCE_LIMITS:
            continue
        given = getattr(spec, name)
        if given is not None:
            values[name] = None if given == UNLIMITED else int(given)
    return dataclasses.replace(base, **values)


def _read_path(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("a path to read is a string: an absolute path or one under '~/'")
    expanded = os.path.expanduser(value)
    if not os.path.isabs(expanded):
        raise ValueError(
            f"{value!r} is not an absolute path: write it from '/' (or '~/'), since a "
            "command's working directory changes"
        )
    if os.path.normpath(expanded) == "/":
        raise ValueError("'/' is the whole machine: write 'read: host' for that")
    return os.path.normpath(expanded)


ReadPath = Annotated[str, pydantic.BeforeValidator(_read_path)]


def _allow_entry(value: Any) -> str:
    parse_allow_entry(value)  # raises ValueError saying what is wrong
    return str(value).strip()


AllowText = Annotated[str, pydantic.BeforeValidator(_allow_entry)]


class NetworkFile(pydantic.BaseModel):
    """The mapping form of a policy's ``sandbox: {network: ...}``: ``allow`` lists the
    hosts (``pypi.org``, ``*.pythonhosted.org``, ``git.example.com:443``) and address
    ranges (``10.0.0.0/8``) a command may reach through swarm's egress proxy (see
    ``swarm.sandbox.egress``)."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    allow: list[AllowText]


class SandboxFile(pydantic.BaseModel):
    """The ``sandbox:`` key of a policy file, as a mapping (a string is its ``mode``).

    ``read`` is ``host`` (a command reads the whole machine, less the homes and root-only
    secrets) or a list of absolute paths a command may read besides the workspace and the
    system's directories (reads confined, the default). ``network`` is ``none``,
    ``host``, or ``{allow: [...]}`` (``NetworkFile``)."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    mode: Mode | None = None
    network: Network | NetworkFile | None = None
    env: list[EnvName] | None = None
    limits: LimitsFile | None = None
    read: Literal["host"] | list[ReadPath] | None = None

    @pydantic.field_validator("network", mode="before")
    @classmethod
    def _network(cls, value: Any) -> Any:
        """A word (``none``, ``host``) or an allow-list, each said plainly when wrong
        (rather than as two failed members of a union)."""
        if value is None or isinstance(value, NetworkFile):
            return value
        if isinstance(value, str):
            if value not in ("none", "host"):
                raise ValueError("say 'none' or 'host', or give {allow: [host, ...]}")
            return value
        if not isinstance(value, dict):
            raise ValueError("give 'none', 'host' or {allow: [host, ...]}")
        try:
            return NetworkFile.model_validate(value)
        except pydantic.ValidationError as exc:
            said = []
            for error in exc.errors():
                where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
                said.append(f"network{where}: {str(error['msg']).removeprefix('Value error, ')}")
            raise ValueError("; ".join(said)) from None

    @pydantic.field_validator("mode", mode="before")
    @classmethod
    def _yaml_off(cls, value: Any) -> Any:
        """YAML reads a bare ``off`` as false: take it as the word it was."""
        if value is False:
            return "off"
        if value is True:
            raise ValueError("say which mode: required, auto or off")
        return value


def merge_sandbox(
    spec: SandboxFile | None, base: SandboxSettings | None, *, source: str = ""
) -> SandboxSettings | None:
    """The settings ``spec`` (of policy ``source``) gives over those it inherits, field
    by field. An allow-list replaces the network it inherits (it is network ``none``
    with a way out through the proxy)."""
    if spec is None:
        return base
    start = base or SandboxSettings()
    read: Reads = start.read
    if spec.read == "host":
        read = "host"
    elif spec.read is not None:
        read = tuple(Path(p) for p in spec.read)
    tmpfs = start.tmpfs_size
    if spec.limits is not None and spec.limits.tmpfs is not None:
        tmpfs = None if spec.limits.tmpfs == UNLIMITED else int(spec.limits.tmpfs)
    network, egress = start.network, start.egress
    if isinstance(spec.network, NetworkFile):
        network, egress = "none", Egress((AllowList.parse(spec.network.allow, source=source),))
    elif spec.network is not None:
        network, egress = spec.network, None
    return SandboxSettings(
        mode=spec.mode or start.mode,
        network=network,
        egress=egress,
        env=tuple(spec.env) if spec.env is not None else start.env,
        limits=_limits(spec.limits, start.limits),
        read=read,
        tmpfs_size=tmpfs,
    )


def confine(
    use: ToolSandbox,
    call: CallRecord | None,
    settings: SandboxSettings | None,
    *,
    tool: str,
    guard: str,
) -> None:
    """For a tool that starts processes (``tool``, whose context is ``use``): check that
    the settings in force for ``call`` (the ones bound to the tool, under the call's
    network ceiling) can be met, and note on ``call`` the sandbox found for them.

    Raises ``GuardError`` (rule ``sandbox-required``) when they require a sandbox that
    does not work here, saying how to get one, and when ``settings`` (those of the
    policy of ``guard``) are not the ones bound to the tool (a ``PolicyGuard`` put in a
    chain by hand, not by ``apply_policy``): the tool would run under others.
    """
    if settings is not None and use.settings is not settings and use.settings != settings:
        raise GuardError(
            f"the sandbox settings of {guard} are not the ones bound to tool '{tool}', which"
            " would run under others: guard it with apply_policy, which binds them",
            guard=guard,
            rule=SANDBOX_RULE,
        )
    in_force = use.in_force(call.network_ceiling if call is not None else None)
    try:
        found = use.find(in_force)
    except SandboxUnavailable as exc:
        raise GuardError(str(exc), guard=guard, rule=SANDBOX_RULE) from None
    if call is not None:
        call.sandbox = describe_sandbox(found, in_force)


def describe_sandbox(found: Sandbox, settings: SandboxSettings) -> str:
    """One line naming the sandbox ``found`` for ``settings``, with the allow-lists of
    its way out through the egress proxy when it has one."""
    line = found.describe(settings.network)
    if settings.egress is None or found.tier == "none":
        return line
    allowed = " ∩ ".join(", ".join(texts) for texts in settings.egress.texts())
    return f"{line}, out through the egress proxy to: {allowed or 'nothing'}"
