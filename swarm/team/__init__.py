"""Teams in files: role files, their loaders, and the validated delegation graph."""

from swarm.team.graph import DEFAULT_MAX_DEPTH, Team
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
