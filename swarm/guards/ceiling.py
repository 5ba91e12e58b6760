"""A parent's denials are a ceiling for its whole subtree.

A role's policy decides its own calls; the ``deny`` rules of every role above it in the
run's tree apply too, whatever the sub-agent's own policy allows. An orchestrator whose
policy denies the network cannot get around it by delegating to a role whose policy is
looser. Only explicit ``deny`` rules are inherited: a parent's default (what it does when
no rule matches) and its ``allow``/``ask`` rules stay its own.

A parent's network allow-list (``sandbox: {network: {allow: [...]}}``) is a ceiling in
the same way: the guard notes the lists of the roles above on the call
(``CallRecord.network_ceiling``), and the sandbox settings bound to a tool that starts
processes are narrowed to their intersection for the call
(``swarm.sandbox.select.ToolSandbox.in_force``): a sub-agent's list, or its ``network:
host``, never reaches further than its parent's. The lists are noted per call, not bound
to the tool with the policy: a role's tools serve every place in the tree the role is
reached from, under different roles.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from swarm.errors import GuardError
from swarm.guards.base import PermissionGuard
from swarm.guards.limits import role_of
from swarm.guards.rules import UNPARSEABLE, Decision, Rule, Unjudgeable
from swarm.sandbox.base import SandboxSettings
from swarm.sandbox.egress import AllowList, Egress
from swarm.scope import CallRecord, current_call

if TYPE_CHECKING:
    from swarm.tools import Tool

__all__ = ["CeilingGuard", "RulePolicy", "inherited_denial"]


class RulePolicy(Protocol):
    """What the ceiling reads of a policy (``Policy`` is one): its name, its hash and
    its rules for a tool."""

    @property
    def name(self) -> str: ...
    @property
    def hash(self) -> str: ...
    def rules_for(self, tool: str) -> tuple[Rule, ...]: ...


def inherited_denial(
    policy: RulePolicy, tool: str, arguments: Mapping[str, Any], *, role: str | None
) -> Decision | None:
    """The first ``deny`` rule of ``policy`` that matches a call of ``tool`` by ``role``,
    as a decision, or ``None``. Raises ``Unjudgeable`` when a rule cannot tell."""
    parsed: dict[str, Any] = {}
    for rule in policy.rules_for(tool):
        if rule.action != "deny" or not rule.needs <= arguments.keys():
            continue
        if rule.matches(arguments, role, parsed):
            return Decision("deny", rule, rule.describe(tool, arguments))
    return None


class CeilingGuard(PermissionGuard):
    """Denies a call that a ``deny`` rule of an ancestor's policy matches.

    ``policies`` maps each role of the team to its policy; the ancestors of a call are the
    roles in the calling agent's path (``lead/dev#1/tester#2``: ``lead`` and ``dev`` for a
    call by ``tester``). ``own`` is the calling role's policy, which its own
    ``PolicyGuard`` applies. A rule that cannot judge the call denies it (fail closed).
    """

    def __init__(self, policies: Mapping[str, RulePolicy], *, own: RulePolicy) -> None:
        self.policies = policies
        self.own = own

    @property
    def name(self) -> str:
        """``ceiling``: how denials and audit records name this guard."""
        return "ceiling"

    async def check(self, tool: Tool[Any], **kwargs: Any) -> dict[str, Any]:
        call = current_call()
        if call is None or "/" not in call.path:
            return kwargs
        role = role_of(call.path)
        seen: set[int] = {id(self.own)}
        lists: list[AllowList] = []
        for segment in call.path.split("/")[:-1]:
            ancestor = role_of(segment)
            policy = self.policies.get(ancestor)
            if policy is None or id(policy) in seen:
                continue
            seen.add(id(policy))
            sandbox = getattr(policy, "sandbox", None)
            if isinstance(sandbox, SandboxSettings) and sandbox.egress is not None:
                lists += [a for a in sandbox.egress.lists if a not in lists]
            try:
                decision = inherited_denial(policy, tool.name, kwargs, role=role)
            except Unjudgeable as exc:
                self._note(call, policy, UNPARSEABLE)
                raise GuardError(
                    f"{exc}; a command that cannot be judged is not run",
                    guard=self.name,
                    rule=UNPARSEABLE,
                ) from None
            if decision is not None:
                assert decision.rule is not None
                self._note(call, policy, decision.rule.id)
                raise GuardError(
                    f"{decision.reason} (policy '{policy.name}' of role '{ancestor}' denies"
                    " this for every agent it delegates to)",
                    guard=self.name,
                    rule=decision.rule.id,
                )
        if lists:
            call.network_ceiling = Egress(tuple(lists))
        return kwargs

    def _note(self, call: CallRecord, policy: RulePolicy, rule: str) -> None:
        call.guard = self.name
        call.rule = rule
        call.policy = policy.name
        call.policy_hash = policy.hash
