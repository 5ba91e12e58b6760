"""Teams in files: role files, their loaders, and the validated delegation graph."""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from swarm._lazy import lazy_exports as _lazy_exports

if _TYPE_CHECKING:
    from swarm.team.graph import DEFAULT_MAX_DEPTH as DEFAULT_MAX_DEPTH, Team as Team
    from swarm.team.loader import (
        AgentLoader as AgentLoader,
        JsonAgentLoader as JsonAgentLoader,
        MarkdownAgentLoader as MarkdownAgentLoader,
        MultiFormatLoader as MultiFormatLoader,
        TomlAgentLoader as TomlAgentLoader,
        YamlAgentLoader as YamlAgentLoader,
        default_roles_dir as default_roles_dir,
        load_agents as load_agents,
        load_specs as load_specs,
    )
    from swarm.team.spec import (
        AgentSpec as AgentSpec,
        BudgetSettings as BudgetSettings,
        CompactionSettings as CompactionSettings,
        RoleFile as RoleFile,
        ToolChoice as ToolChoice,
    )


_LAZY: dict[str, tuple[str, ...]] = {
    "swarm.team.graph": (
        "DEFAULT_MAX_DEPTH",
        "Team",
    ),
    "swarm.team.loader": (
        "AgentLoader",
        "JsonAgentLoader",
        "MarkdownAgentLoader",
        "MultiFormatLoader",
        "TomlAgentLoader",
        "YamlAgentLoader",
        "default_roles_dir",
        "load_agents",
        "load_specs",
    ),
    "swarm.team.spec": (
        "AgentSpec",
        "BudgetSettings",
        "CompactionSettings",
        "RoleFile",
        "ToolChoice",
    ),
}

__getattr__, __dir__, __all__ = _lazy_exports(__name__, _LAZY)
