"""Permission guards: the chain every tool call passes before its handler runs.

Built in: ``PolicyGuard`` (rules from policy files, ``load_policy``/``apply_policy``),
``CeilingGuard`` (a parent's denials for its subtree), ``PathGuard`` (workspace
confinement), ``ShellGuard`` (the programs a command would run),
``CommandPrefixGuard`` (commands that start with given words), ``RateLimitGuard``,
``BudgetGuard``, ``ApprovalGuard`` and ``AuditGuard``; guard factories
by name (``make_guard``, ``register_guard``) let policy files use them.
``replay_decisions`` replays recorded runs' decisions under a changed policy.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from swarm._lazy import lazy_exports as _lazy_exports

if _TYPE_CHECKING:
    from swarm.guards.approval import ApprovalGuard as ApprovalGuard
    from swarm.guards.audit import AuditGuard as AuditGuard
    from swarm.guards.base import (
        AllowAllGuard as AllowAllGuard,
        ConcurrentGuard as ConcurrentGuard,
        DenyAllGuard as DenyAllGuard,
        PermissionGuard as PermissionGuard,
    )
    from swarm.guards.bash.parse import (
        Invocation as Invocation,
        ShellSyntaxError as ShellSyntaxError,
        UnknownWord as UnknownWord,
        parse_command as parse_command,
    )
    from swarm.guards.ceiling import CeilingGuard as CeilingGuard
    from swarm.guards.claude_rules import (
        ClaudePermissions as ClaudePermissions,
        ClaudeRule as ClaudeRule,
        ClaudeRulesGuard as ClaudeRulesGuard,
    )
    from swarm.guards.limits import (
        BudgetGuard as BudgetGuard,
        HasBudget as HasBudget,
        RateLimitGuard as RateLimitGuard,
    )
    from swarm.guards.paths import PathGuard as PathGuard, path_arguments as path_arguments
    from swarm.guards.policy import (
        Policy as Policy,
        PolicyGuard as PolicyGuard,
        apply_policy as apply_policy,
        load_policy as load_policy,
        shipped_policies as shipped_policies,
    )
    from swarm.guards.prefixes import (
        CommandDenyGuard as CommandDenyGuard,
        CommandPrefixGuard as CommandPrefixGuard,
    )
    from swarm.guards.registry import (
        GuardContext as GuardContext,
        guard_names as guard_names,
        make_guard as make_guard,
        register_guard as register_guard,
    )
    from swarm.guards.replay import (
        ChangedCall as ChangedCall,
        ReplayReport as ReplayReport,
        audit_logs as audit_logs,
        replay_decisions as replay_decisions,
    )
    from swarm.guards.rules import Decision as Decision, Rule as Rule
    from swarm.guards.shell import CommandPattern as CommandPattern, ShellGuard as ShellGuard


_LAZY: dict[str, tuple[str, ...]] = {
    "swarm.guards.approval": ("ApprovalGuard",),
    "swarm.guards.audit": ("AuditGuard",),
    "swarm.guards.base": (
        "AllowAllGuard",
        "ConcurrentGuard",
        "DenyAllGuard",
        "PermissionGuard",
    ),
    "swarm.guards.ceiling": ("CeilingGuard",),
    "swarm.guards.limits": (
        "BudgetGuard",
        "HasBudget",
        "RateLimitGuard",
    ),
    "swarm.guards.claude_rules": ("ClaudePermissions", "ClaudeRule", "ClaudeRulesGuard"),
    "swarm.guards.paths": (
        "PathGuard",
        "path_arguments",
    ),
    "swarm.guards.policy": (
        "Policy",
        "PolicyGuard",
        "apply_policy",
        "load_policy",
        "shipped_policies",
    ),
    "swarm.guards.prefixes": ("CommandDenyGuard", "CommandPrefixGuard"),
    "swarm.guards.registry": (
        "GuardContext",
        "guard_names",
        "make_guard",
        "register_guard",
    ),
    "swarm.guards.replay": (
        "ChangedCall",
        "ReplayReport",
        "audit_logs",
        "replay_decisions",
    ),
    "swarm.guards.rules": (
        "Decision",
        "Rule",
    ),
    "swarm.guards.shell": (
        "CommandPattern",
        "ShellGuard",
    ),
    "swarm.guards.bash.parse": (
        "Invocation",
        "ShellSyntaxError",
        "UnknownWord",
        "parse_command",
    ),
}

__getattr__, __dir__, __all__ = _lazy_exports(__name__, _LAZY)
