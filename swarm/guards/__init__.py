"""Permission guards: the chain every tool call passes before its handler runs.

Built in: ``PolicyGuard`` (rules from policy files, ``load_policy``/``apply_policy``),
``CeilingGuard`` (a parent's denials for its subtree), ``PathGuard`` (workspace
confinement), ``ShellGuard`` (the programs a command would run),
``CommandPrefixGuard`` (commands that start with given words), ``RateLimitGuard``,
``BudgetGuard``, ``ApprovalGuard`` and ``AuditGuard``; guard factories
by name (``make_guard``, ``register_guard``) let policy files use them.
``replay_decisions`` replays recorded runs' decisions under a changed policy.
"""

from typing import TYPE_CHECKING

from swarm._lazy import lazy_exports

if TYPE_CHECKING:
    from swarm.guards.approval import (
        ApprovalDecision,
        ApprovalGuard,
        ApprovalRequest,
        Approver,
    )
    from swarm.guards.audit import (
        AuditGuard,
    )
    from swarm.guards.base import (
        AllowAllGuard,
        ConcurrentGuard,
        DenyAllGuard,
        PermissionGuard,
    )
    from swarm.guards.bash.parse import (
        Invocation,
        ShellSyntaxError,
        UnknownWord,
        parse_command,
    )
    from swarm.guards.ceiling import (
        CeilingGuard,
    )
    from swarm.guards.chain import (
        run_guards,
    )
    from swarm.guards.claude_rules import (
        ClaudePermissions,
        ClaudeRule,
        ClaudeRulesGuard,
    )
    from swarm.guards.limits import (
        BudgetGuard,
        HasBudget,
        RateLimitGuard,
        role_of,
    )
    from swarm.guards.paths import (
        PathGuard,
        path_arguments,
    )
    from swarm.guards.policy import (
        Policy,
        PolicyGuard,
        apply_policy,
        load_policy,
        shipped_policies,
    )
    from swarm.guards.prefixes import (
        CommandDenyGuard,
        CommandPrefixGuard,
    )
    from swarm.guards.registry import (
        GuardContext,
        guard_names,
        make_guard,
        register_guard,
    )
    from swarm.guards.replay import (
        ChangedCall,
        ReplayReport,
        audit_logs,
        replay_decisions,
    )
    from swarm.guards.rules import (
        Decision,
        Rule,
    )
    from swarm.guards.shell import (
        CommandPattern,
        ShellGuard,
    )

__all__ = [
    "AllowAllGuard",
    "ApprovalDecision",
    "ApprovalGuard",
    "ApprovalRequest",
    "Approver",
    "AuditGuard",
    "BudgetGuard",
    "CeilingGuard",
    "ChangedCall",
    "ClaudePermissions",
    "ClaudeRule",
    "ClaudeRulesGuard",
    "CommandPattern",
    "CommandDenyGuard",
    "CommandPrefixGuard",
    "ConcurrentGuard",
    "Decision",
    "DenyAllGuard",
    "GuardContext",
    "HasBudget",
    "Invocation",
    "PathGuard",
    "PermissionGuard",
    "Policy",
    "PolicyGuard",
    "RateLimitGuard",
    "ReplayReport",
    "Rule",
    "ShellGuard",
    "ShellSyntaxError",
    "UnknownWord",
    "apply_policy",
    "audit_logs",
    "guard_names",
    "load_policy",
    "make_guard",
    "parse_command",
    "path_arguments",
    "register_guard",
    "replay_decisions",
    "role_of",
    "run_guards",
    "shipped_policies",
]

_LAZY: dict[str, tuple[str, ...]] = {
    "swarm.guards.approval": (
        "ApprovalDecision",
        "ApprovalGuard",
        "ApprovalRequest",
        "Approver",
    ),
    "swarm.guards.audit": ("AuditGuard",),
    "swarm.guards.base": (
        "AllowAllGuard",
        "ConcurrentGuard",
        "DenyAllGuard",
        "PermissionGuard",
    ),
    "swarm.guards.ceiling": ("CeilingGuard",),
    "swarm.guards.chain": ("run_guards",),
    "swarm.guards.limits": (
        "BudgetGuard",
        "HasBudget",
        "RateLimitGuard",
        "role_of",
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

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
