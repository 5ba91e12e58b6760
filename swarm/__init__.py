"""swarm: multi-agent orchestration with guarded tools, delegation and durable context.

Everything a user imports is here; ``__all__`` lists it (sorted). ``import swarm`` loads the
core (agent, loop, tools, messages, events, errors); the team, guards, transports, sandbox,
audit, scenario, batch, local, MCP, OpenTelemetry, report and toolbox names are imported on
first use (``swarm._lazy``), so a program that never draws a ``Team.graph`` never imports networkx,
and one that never makes an HTTP transport never imports httpx.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from swarm._lazy import lazy_exports as _lazy_exports
from swarm.budget import (
    Budget,
    BudgetLimits,
)
from swarm.context.base import ContextStore, MemoryContextStore, SessionInfo
from swarm.contracts import DEFAULT_OUTPUT_RETRIES, FINAL_ANSWER, OutputContract
from swarm.errors import (
    BudgetExceeded,
    CompactionError,
    ConfigError,
    ContextStoreError,
    GuardError,
    InvalidOutput,
    MaxIterationsReached,
    ProviderError,
    SwarmError,
    ToolError,
    ToolTimeout,
    TransportError,
)
from swarm.events import (
    AgentStart,
    ApprovalRequested,
    ContextCompacted,
    Error,
    IterationEnd,
    MessageEnd,
    OutputInvalid,
    ReasoningDelta,
    SessionEndEvent,
    StreamEvent,
    SubAgentEvent,
    TextDelta,
    ToolCallStart,
    ToolInputDelta,
    ToolOutputDelta,
    ToolResult,
    ToolUseStart,
    TurnEnd,
    TurnStart,
)
from swarm.loop.agent import (
    Agent,
    AgentStream,
    ToolSelector,
)
from swarm.loop.calls import (
    DEFAULT_TOOL_TIMEOUT,
    AfterCallHook,
)
from swarm.loop.outputs import DEFAULT_MAX_RESULT_CHARS
from swarm.messages import (
    ContentBlock,
    ImageBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from swarm.scope import (
    ApprovalDecision,
    ApprovalRequest,
    Approver,
    CallCapture,
    CallObserver,
    CallRecord,
    OverlayCapture,
    RunScope,
    current_call,
    current_scope,
    emit,
)
from swarm.tools import (
    MISSING,
    Field,
    FieldInfo,
    Progress,
    Tool,
    ToolOutput,
    tool,
)
from swarm.transports.base import CompletionTransport, DummyCompletionTransport
from swarm.types import (
    StopReason,
    ToolCallID,
    ToolName,
    Usage,
    UsageNode,
)

_LAZY: dict[str, tuple[str, ...]] = {
    "swarm.approvals.approver": ("RunApprover",),
    "swarm.approvals.store": ("ApprovalStore",),
    "swarm.audit.anchor": ("AuditHead",),
    "swarm.audit.log": ("AuditLog",),
    "swarm.audit.show": ("audit_table",),
    "swarm.audit.verify": ("AuditReport", "verify_log"),
    "swarm.batch.batch": ("BatchResult", "BatchSummary", "run_batch"),
    "swarm.batch.executors": ("Executor", "LocalExecutor", "RayExecutor"),
    "swarm.batch.job": ("JobReport",),
    "swarm.batch.suite": ("run_suite",),
    "swarm.batch.tasks": ("BatchTask", "load_tasks"),
    "swarm.context.compaction": ("AutoCompactStore", "compact_context"),
    "swarm.context.sqlite": ("ArchivedSegment", "SQLiteContextStore"),
    "swarm.guards.approval": ("ApprovalGuard",),
    "swarm.guards.audit": ("AuditGuard",),
    "swarm.guards.base": ("AllowAllGuard", "ConcurrentGuard", "DenyAllGuard", "PermissionGuard"),
    "swarm.guards.ceiling": ("CeilingGuard",),
    "swarm.guards.claude_rules": ("ClaudeRulesGuard",),
    "swarm.guards.limits": ("BudgetGuard", "RateLimitGuard"),
    "swarm.guards.paths": ("PathGuard",),
    "swarm.guards.policy": ("Policy", "PolicyGuard", "apply_policy", "load_policy"),
    "swarm.guards.prefixes": ("CommandDenyGuard", "CommandPrefixGuard"),
    "swarm.guards.replay": ("replay_decisions",),
    "swarm.guards.shell": ("ShellGuard",),
    "swarm.mcp.config": ("McpHttpServer", "McpServer", "McpStdioServer", "load_mcp_servers"),
    "swarm.otel.observer": ("OtelObserver",),
    "swarm.report": ("build_report", "write_report"),
    "swarm.sandbox.base": (
        "Confinement",
        "Launch",
        "Overlay",
        "Sandbox",
        "SandboxSettings",
        "SandboxUnavailable",
    ),
    "swarm.sandbox.egress": ("AllowList", "Egress"),
    "swarm.sandbox.environment": ("command_environment",),
    "swarm.sandbox.limits": ("ResourceLimits",),
    "swarm.sandbox.proxy": ("ConnectionRecord", "EgressProxy", "mapped_resolver"),
    "swarm.sandbox.select": ("find_sandbox",),
    "swarm.team.background": ("agents_tool",),
    "swarm.team.commands": ("Command", "CommandTask", "read_command"),
    "swarm.team.crewai": ("Crew", "CrewTask", "load_crew"),
    "swarm.team.delegation": ("AgentContext", "build_team", "make_agent_tools", "run_team"),
    "swarm.team.graph": ("Team",),
    "swarm.team.loader": (
        "AgentLoader",
        "JsonAgentLoader",
        "MarkdownAgentLoader",
        "MultiFormatLoader",
        "TomlAgentLoader",
        "YamlAgentLoader",
        "load_agents",
        "load_specs",
    ),
    "swarm.team.references": ("load_tool_reference",),
    "swarm.team.skills": ("Skill", "load_skills"),
    "swarm.team.spec": ("AgentSpec", "BudgetSettings", "CompactionSettings"),
    "swarm.toolbox": ("make_toolbox",),
    "swarm.toolbox.shell": ("safe_environment",),
    "swarm.transports.anthropic": ("AnthropicTransport",),
    "swarm.models.registry": ("ModelSpec", "estimate_cost"),
    "swarm.transports.openai": ("OpenAITransport",),
    "swarm.transports.options": ("Timeouts", "on_user_turn"),
    "swarm.transports.recording": ("RecordingTransport", "ReplayTransport"),
    "swarm.models.resolver": ("ModelResolver", "model_spec"),
    "swarm.transports.retry": ("RetryPolicy",),
    "swarm.event_codec": ("event_from_dict", "event_to_dict"),
    "swarm.models.spec": ("register_provider", "transport_from_spec"),
    "swarm.undo.capture": ("UndoCapture", "UndoSettings"),
    "swarm.undo.log": ("CallChanges", "Change"),
    "swarm.undo.restore": ("UndoRefused",),
    "swarm.undo.state": ("PathState",),
    "swarm.undo.taking": ("UndoResult",),
}
"""Where each name imported on first use lives (its defining module, so that using one
name does not import the rest of its package)."""

if _TYPE_CHECKING:
    from swarm.approvals.approver import RunApprover
    from swarm.approvals.store import ApprovalStore
    from swarm.audit.anchor import AuditHead
    from swarm.audit.log import AuditLog
    from swarm.audit.show import audit_table
    from swarm.audit.verify import AuditReport, verify_log
    from swarm.batch.batch import BatchResult, BatchSummary, run_batch
    from swarm.batch.executors import Executor, LocalExecutor, RayExecutor
    from swarm.batch.job import JobReport
    from swarm.batch.suite import run_suite
    from swarm.batch.tasks import BatchTask, load_tasks
    from swarm.context.compaction import AutoCompactStore, compact_context
    from swarm.context.sqlite import ArchivedSegment, SQLiteContextStore
    from swarm.event_codec import event_from_dict, event_to_dict
    from swarm.guards.approval import ApprovalGuard
    from swarm.guards.audit import AuditGuard
    from swarm.guards.base import AllowAllGuard, ConcurrentGuard, DenyAllGuard, PermissionGuard
    from swarm.guards.ceiling import CeilingGuard
    from swarm.guards.claude_rules import ClaudeRulesGuard
    from swarm.guards.limits import BudgetGuard, RateLimitGuard
    from swarm.guards.paths import PathGuard
    from swarm.guards.policy import Policy, PolicyGuard, apply_policy, load_policy
    from swarm.guards.prefixes import CommandDenyGuard, CommandPrefixGuard
    from swarm.guards.replay import replay_decisions
    from swarm.guards.shell import ShellGuard
    from swarm.mcp.config import McpHttpServer, McpServer, McpStdioServer, load_mcp_servers
    from swarm.models.registry import ModelSpec, estimate_cost
    from swarm.models.resolver import ModelResolver, model_spec
    from swarm.models.spec import register_provider, transport_from_spec
    from swarm.otel.observer import OtelObserver
    from swarm.report import build_report, write_report
    from swarm.sandbox.base import (
        Confinement,
        Launch,
        Overlay,
        Sandbox,
        SandboxSettings,
        SandboxUnavailable,
    )
    from swarm.sandbox.egress import AllowList, Egress
    from swarm.sandbox.environment import command_environment
    from swarm.sandbox.limits import ResourceLimits
    from swarm.sandbox.proxy import ConnectionRecord, EgressProxy, mapped_resolver
    from swarm.sandbox.select import find_sandbox
    from swarm.team.background import agents_tool
    from swarm.team.commands import Command, CommandTask, read_command
    from swarm.team.crewai import Crew, CrewTask, load_crew
    from swarm.team.delegation import AgentContext, build_team, make_agent_tools, run_team
    from swarm.team.graph import Team
    from swarm.team.loader import (
        AgentLoader,
        JsonAgentLoader,
        MarkdownAgentLoader,
        MultiFormatLoader,
        TomlAgentLoader,
        YamlAgentLoader,
        load_agents,
        load_specs,
    )
    from swarm.team.references import load_tool_reference
    from swarm.team.skills import Skill, load_skills
    from swarm.team.spec import AgentSpec, BudgetSettings, CompactionSettings
    from swarm.toolbox import make_toolbox
    from swarm.toolbox.shell import safe_environment
    from swarm.transports.anthropic import AnthropicTransport
    from swarm.transports.openai import OpenAITransport
    from swarm.transports.options import Timeouts, on_user_turn
    from swarm.transports.recording import RecordingTransport, ReplayTransport
    from swarm.transports.retry import RetryPolicy
    from swarm.undo.capture import UndoCapture, UndoSettings
    from swarm.undo.log import CallChanges, Change
    from swarm.undo.restore import UndoRefused
    from swarm.undo.state import PathState
    from swarm.undo.taking import UndoResult

__version__ = "0.1.0"

__all__ = [
    "AfterCallHook",
    "Agent",
    "AgentContext",
    "AgentLoader",
    "AgentSpec",
    "AgentStart",
    "AgentStream",
    "AllowAllGuard",
    "AllowList",
    "AnthropicTransport",
    "ApprovalDecision",
    "ApprovalGuard",
    "ApprovalRequest",
    "ApprovalRequested",
    "ApprovalStore",
    "Approver",
    "ArchivedSegment",
    "AuditGuard",
    "AuditHead",
    "AuditLog",
    "AuditReport",
    "AutoCompactStore",
    "BatchResult",
    "BatchSummary",
    "BatchTask",
    "Budget",
    "BudgetExceeded",
    "BudgetGuard",
    "BudgetLimits",
    "BudgetSettings",
    "CallCapture",
    "CallChanges",
    "CallObserver",
    "CallRecord",
    "CeilingGuard",
    "Change",
    "ClaudeRulesGuard",
    "Command",
    "CommandDenyGuard",
    "CommandPrefixGuard",
    "CommandTask",
    "CompactionError",
    "CompactionSettings",
    "CompletionTransport",
    "ConcurrentGuard",
    "ConfigError",
    "Confinement",
    "ConnectionRecord",
    "ContentBlock",
    "ContextCompacted",
    "ContextStore",
    "ContextStoreError",
    "Crew",
    "CrewTask",
    "DEFAULT_MAX_RESULT_CHARS",
    "DEFAULT_OUTPUT_RETRIES",
    "DEFAULT_TOOL_TIMEOUT",
    "DenyAllGuard",
    "DummyCompletionTransport",
    "Egress",
    "EgressProxy",
    "Error",
    "Executor",
    "FINAL_ANSWER",
    "Field",
    "FieldInfo",
    "GuardError",
    "ImageBlock",
    "InvalidOutput",
    "IterationEnd",
    "JobReport",
    "JsonAgentLoader",
    "Launch",
    "LocalExecutor",
    "MISSING",
    "MarkdownAgentLoader",
    "MaxIterationsReached",
    "McpHttpServer",
    "McpServer",
    "McpStdioServer",
    "MemoryContextStore",
    "Message",
    "MessageEnd",
    "ModelResolver",
    "ModelSpec",
    "MultiFormatLoader",
    "OpenAITransport",
    "OtelObserver",
    "OutputContract",
    "OutputInvalid",
    "Overlay",
    "OverlayCapture",
    "PathGuard",
    "PathState",
    "PermissionGuard",
    "Policy",
    "PolicyGuard",
    "Progress",
    "ProviderError",
    "RateLimitGuard",
    "RayExecutor",
    "ReasoningBlock",
    "ReasoningDelta",
    "RecordingTransport",
    "ReplayTransport",
    "ResourceLimits",
    "RetryPolicy",
    "RunApprover",
    "RunScope",
    "SQLiteContextStore",
    "Sandbox",
    "SandboxSettings",
    "SandboxUnavailable",
    "SessionEndEvent",
    "SessionInfo",
    "ShellGuard",
    "Skill",
    "StopReason",
    "StreamEvent",
    "SubAgentEvent",
    "SwarmError",
    "Team",
    "TextBlock",
    "TextDelta",
    "Timeouts",
    "TomlAgentLoader",
    "Tool",
    "ToolCallID",
    "ToolCallStart",
    "ToolError",
    "ToolInputDelta",
    "ToolName",
    "ToolOutput",
    "ToolOutputDelta",
    "ToolResult",
    "ToolResultBlock",
    "ToolSelector",
    "ToolTimeout",
    "ToolUseBlock",
    "ToolUseStart",
    "TransportError",
    "TurnEnd",
    "TurnStart",
    "UndoCapture",
    "UndoRefused",
    "UndoResult",
    "UndoSettings",
    "Usage",
    "UsageNode",
    "YamlAgentLoader",
    "agents_tool",
    "apply_policy",
    "audit_table",
    "build_report",
    "build_team",
    "command_environment",
    "compact_context",
    "current_call",
    "current_scope",
    "emit",
    "estimate_cost",
    "event_from_dict",
    "event_to_dict",
    "find_sandbox",
    "load_agents",
    "load_crew",
    "load_mcp_servers",
    "load_policy",
    "load_skills",
    "load_specs",
    "load_tasks",
    "load_tool_reference",
    "make_agent_tools",
    "make_toolbox",
    "mapped_resolver",
    "model_spec",
    "on_user_turn",
    "read_command",
    "register_provider",
    "replay_decisions",
    "run_batch",
    "run_suite",
    "run_team",
    "safe_environment",
    "tool",
    "transport_from_spec",
    "verify_log",
    "write_report",
]

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY, __all__)
