"""Teams in files: role files, their loaders, and the validated delegation graph."""

from typing import TYPE_CHECKING

from swarm._lazy import lazy_exports

if TYPE_CHECKING:
    from swarm.team.graph import (
        DEFAULT_MAX_DEPTH,
        Team,
    )
    from swarm.team.loader import (
        AgentLoader,
        JsonAgentLoader,
        MarkdownAgentLoader,
        MultiFormatLoader,
        TomlAgentLoader,
        YamlAgentLoader,
        default_roles_dir,
        load_agents,
        load_specs,
    )
    from swarm.team.spec import (
        AgentSpec,
        BudgetSettings,
        CompactionSettings,
        RoleFile,
        ToolChoice,
    )

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "AgentLoader",
    "AgentSpec",
    "BudgetSettings",
    "CompactionSettings",
    "JsonAgentLoader",
    "MarkdownAgentLoader",
    "MultiFormatLoader",
    "RoleFile",
    "Team",
    "TomlAgentLoader",
    "ToolChoice",
    "YamlAgentLoader",
    "default_roles_dir",
    "load_agents",
    "load_specs",
]

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

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
