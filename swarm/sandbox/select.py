"""Choosing the sandbox tier: the strongest one that works here, as the settings allow.

Order: bubblewrap (Linux, namespaces), then Landlock (Linux, no namespaces needed), then
``sandbox-exec`` (macOS). A tier whose module is not there counts as not working. With
none working, ``required`` raises ``SandboxUnavailable`` saying how to get one, ``auto``
runs commands unconfined (the caller warns once per run), and ``off`` never looks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from swarm.sandbox.base import (
    Confinement,
    Launch,
    Network,
    Sandbox,
    SandboxSettings,
    SandboxUnavailable,
)

if TYPE_CHECKING:
    from swarm.sandbox.egress import Egress
    from swarm.sandbox.proxy import Resolver

__all__ = [
    "HOW_TO_SANDBOX",
    "TIERS",
    "SandboxFinder",
    "ToolSandbox",
    "Unconfined",
    "find_sandbox",
    "narrow_network",
]

TIERS = ("bubblewrap", "landlock", "sandbox-exec")
"""The tiers ``find_sandbox`` tries, strongest first."""

HOW_TO_SANDBOX = (
    "install bubblewrap ('apt-get install bubblewrap' or 'dnf install bubblewrap'), or set"
    " 'sandbox: off' (or 'auto') in the policy to run commands unconfined"
)
"""How to get a sandbox, for messages saying there is none."""

SandboxFinder = Callable[[SandboxSettings], Sandbox]
"""What picks the tier for some settings (``find_sandbox``, or one a test injects)."""

# Tiers written in other modules, found by name: module, and its function ``probe()``
# returning the working tier (or None, or raising SandboxUnavailable, when it does not
# work here).
_OTHER_TIERS = {
    "landlock": ("swarm.sandbox.landlock", "probe"),
    "sandbox-exec": ("swarm.sandbox.seatbelt", "probe"),
}


@dataclass(frozen=True, slots=True)
class Unconfined:
    """No sandbox: the command runs as it is (``tier`` is ``none``). ``why`` says why it
    is unconfined (``sandbox: off``, or what the tiers lacked)."""

    why: str = "sandbox: off"

    @property
    def tier(self) -> str:
        """``none``."""
        return "none"

    def describe(self, network: Network) -> str:
        """``none (unconfined: WHY)``; the network is the machine's whatever was asked."""
        return f"none (unconfined: {self.why})"

    def launch(
        self, argv: tuple[str, ...], confinement: Confinement
    ) -> AbstractContextManager[Launch]:
        """``argv`` unchanged, with the confinement's environment and workspace."""
        return _plain(argv, confinement)


@contextlib.contextmanager
def _plain(argv: tuple[str, ...], confinement: Confinement) -> Iterator[Launch]:
    yield Launch(argv, dict(confinement.env), confinement.workspace)


def _other_tier(name: str) -> Sandbox:
    module_name, function = _OTHER_TIERS[name]
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        raise SandboxUnavailable("not built into this swarm") from None
    probe: Any = getattr(module, function, None)
    if not callable(probe):
        raise SandboxUnavailable(f"{module_name} has no {function}()")
    try:
        found = probe()
    except (OSError, RuntimeError) as exc:  # a tier that cannot tell does not work
        raise SandboxUnavailable(f"its check failed: {exc}") from None
    if found is None:
        raise SandboxUnavailable("does not work here")
    return found  # type: ignore[no-any-return]


def _try(name: str, bwrap: str) -> Sandbox:
    if name == "bubblewrap":
        if not sys.platform.startswith("linux"):
            raise SandboxUnavailable("Linux only")
        from swarm.sandbox.bubblewrap import probe_bubblewrap  # with the first sandbox sought

        return probe_bubblewrap(bwrap)
    if name == "sandbox-exec" and sys.platform != "darwin":
        raise SandboxUnavailable("macOS only")
    return _other_tier(name)


def find_sandbox(
    settings: SandboxSettings,
    *,
    tiers: Sequence[str] = TIERS,
    bwrap: str = "bwrap",
) -> Sandbox:
    """The sandbox for ``settings``: the first of ``tiers`` that works (each is checked
    once per process), ``Unconfined`` for mode ``off``, or for ``auto`` when none works.

    ``bwrap`` is the bubblewrap program (a name on ``PATH`` or a path). Raises
    ``SandboxUnavailable`` for mode ``required`` when no tier works, saying what each
    lacked and how to get one; raises ``ValueError`` for an unknown tier name.
    """
    unknown = [t for t in tiers if t not in TIERS]
    if unknown:
        raise ValueError(f"unknown sandbox tier {unknown[0]!r} (known: {', '.join(TIERS)})")
    if settings.mode == "off":
        return Unconfined()
    problems: list[str] = []
    for name in tiers:
        try:
            return _try(name, bwrap)
        except SandboxUnavailable as exc:
            problems.append(f"{name}: {exc}")
    lacking = "; ".join(problems) if problems else "no sandbox tier was allowed"
    if settings.mode == "required":
        raise SandboxUnavailable(
            f"the policy requires a sandbox and none works here ({lacking}): {HOW_TO_SANDBOX}"
        )
    return Unconfined(f"no sandbox works here: {lacking}")


@dataclass(frozen=True, slots=True)
class ToolSandbox:
    """The context of a tool that starts processes (``Tool[ToolSandbox]``, the ``shell``
    tool's): the sandbox settings bound to it and how it finds its tier. Its handler
    takes it as a parameter marked ``swarm.tools.ToolContext``.

    ``settings`` are the toolbox's until a policy with ``sandbox:`` settings is applied
    (``apply_policy`` binds the policy's, per role, when the role's tools are guarded):
    they are the policy's, not the call's, and nothing a model sends can change them. A
    ``PolicyGuard`` seeing it checks, before the call runs, that the settings in force
    for the call (``in_force``) can be met, and denies the call (rule
    ``sandbox-required``) when they cannot. ``resolver`` resolves the names commands
    connect to through the egress proxy (a policy's network allow-list; default: the
    machine's resolver).
    """

    settings: SandboxSettings = field(default_factory=SandboxSettings)
    finder: SandboxFinder = find_sandbox
    resolver: Resolver | None = None

    def bound(self, settings: SandboxSettings) -> ToolSandbox:
        """This context with ``settings`` (a policy's) bound in place of its own."""
        return dataclasses.replace(self, settings=settings)

    def in_force(self, ceiling: Egress | None) -> SandboxSettings:
        """The settings in force for a call: the bound ones under ``ceiling``, the
        network allow-lists of the policies of the roles above the caller (see
        ``narrow_network``).

        The ceiling is the call's (``CallRecord.network_ceiling``), not bound here: a
        team's tools are built and guarded once per role, and one role may be reached
        at several places of the delegation graph (``lead/tester`` and
        ``lead/dev/tester``), under different roles, so what is above the caller is
        known only from the path of the agent making the call."""
        if ceiling is None:
            return self.settings
        return narrow_network(self.settings, ceiling)

    def find(self, settings: SandboxSettings | None = None) -> Sandbox:
        """The tier for ``settings`` (default: the bound ones). Raises
        ``SandboxUnavailable`` as ``find_sandbox`` does."""
        return self.finder(settings or self.settings)


def narrow_network(settings: SandboxSettings, ceiling: Egress) -> SandboxSettings:
    """``settings`` under the allow-lists of the policies above (``ceiling``): an
    allow-list is intersected with them, network ``host`` becomes them, network
    ``none`` stays none."""
    if settings.egress is not None:
        return dataclasses.replace(settings, egress=settings.egress.narrowed(ceiling))
    if settings.network == "host":
        return dataclasses.replace(settings, network="none", egress=ceiling)
    return settings
