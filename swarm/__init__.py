"""swarm: multi-agent orchestration with guarded tools, delegation and durable context.

Everything a user imports is here; ``__all__`` lists it (sorted, built from the imports
below and the table of names loaded on first use, ``swarm._lazy``). ``import swarm`` loads
the core (agent, loop, tools, messages, events, errors); the team, guards, transports,
sandbox, audit, scenario, batch, local, MCP, OpenTelemetry, report and toolbox names are
imported on first use, so a program that never draws a ``Team.graph`` never imports
networkx, and one that never makes an HTTP transport never imports httpx.

Where things live, from the bottom up (a module imports only from its own layer or lower
ones; ``tests/test_imports.py`` holds the rule):

- ``types``, ``errors``: ids, usage, stop reasons; the exception tree.
- ``messages``, ``events``, ``tools`` (``Tool``, ``@tool``, the guard chain), ``scope``
  (what a whole run shares), ``budget``, ``control``, ``contracts`` (typed answers),
  ``models/registry`` (context windows and prices), ``sandbox/`` (confinement, a leaf).
- ``transports/`` (providers), ``models/`` (model spec strings, the resolver),
  ``context/`` (history stores, compaction), ``guards/`` (policies and guards; the bash
  analyser in ``guards/bash/``), ``toolbox/``, ``audit/``, ``undo/``, ``mcp/`` (client),
  ``local/``.
- ``loop/``: one agent's run: ``agent``, ``loop`` (start reading here), ``state``,
  ``turn``, ``calls``, ``outputs``.
- ``team/``: role files, the delegation graph, sub-agents as tools (``team/delegation``).
- ``record/``: a run's record on disk; ``approvals/``, ``otel/``.
- ``scenario/`` (file format and runner), ``batch/``, ``report/``; then ``cli/``.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from swarm._lazy import lazy_exports as _lazy_exports
from swarm.budget import Budget as Budget, BudgetLimits as BudgetLimits
from swarm.context.base import (
    ContextStore as ContextStore,
    MemoryContextStore as MemoryContextStore,
    SessionInfo as SessionInfo,
)
from swarm.contracts import (
    DEFAULT_OUTPUT_RETRIES as DEFAULT_OUTPUT_RETRIES,
    FINAL_ANSWER as FINAL_ANSWER,
    OutputContract as OutputContract,
)
from swarm.errors import (
    BudgetExceeded as BudgetExceeded,
    CompactionError as CompactionError,
    ConfigError as ConfigError,
    ContextStoreError as ContextStoreError,
    GuardError as GuardError,
    InvalidOutput as InvalidOutput,
    MaxIterationsReached as MaxIterationsReached,
    ProviderError as ProviderError,
    SwarmError as SwarmError,
    ToolError as ToolError,
    ToolTimeout as ToolTimeout,
    TransportError as TransportError,
)
from swarm.events import (
    AgentStart as AgentStart,
    ApprovalRequested as ApprovalRequested,
    ContextCompacted as ContextCompacted,
    Error as Error,
    IterationEnd as IterationEnd,
    MessageEnd as MessageEnd,
    OutputInvalid as OutputInvalid,
    ReasoningDelta as ReasoningDelta,
    SessionEndEvent as SessionEndEvent,
    StreamEvent as StreamEvent,
    SubAgentEvent as SubAgentEvent,
    TextDelta as TextDelta,
    ToolCallStart as ToolCallStart,
    ToolInputDelta as ToolInputDelta,
    ToolOutputDelta as ToolOutputDelta,
    ToolResult as ToolResult,
    ToolUseStart as ToolUseStart,
    TurnEnd as TurnEnd,
    TurnStart as TurnStart,
)
from swarm.loop.agent import (
    Agent as Agent,
    AgentStream as AgentStream,
    ToolSelector as ToolSelector,
)
from swarm.loop.calls import (
    DEFAULT_TOOL_TIMEOUT as DEFAULT_TOOL_TIMEOUT,
    AfterCallHook as AfterCallHook,
)
from swarm.loop.outputs import DEFAULT_MAX_RESULT_CHARS as DEFAULT_MAX_RESULT_CHARS
from swarm.messages import (
    ContentBlock as ContentBlock,
    ImageBlock as ImageBlock,
    Message as Message,
    ReasoningBlock as ReasoningBlock,
    TextBlock as TextBlock,
    ToolResultBlock as ToolResultBlock,
    ToolUseBlock as ToolUseBlock,
)
from swarm.scope import (
    ApprovalDecision as ApprovalDecision,
    ApprovalRequest as ApprovalRequest,
    Approver as Approver,
    CallCapture as CallCapture,
    CallObserver as CallObserver,
    CallRecord as CallRecord,
    OverlayCapture as OverlayCapture,
    RunScope as RunScope,
    current_call as current_call,
    current_scope as current_scope,
    emit as emit,
)
from swarm.tools import (
    MISSING as MISSING,
    Field as Field,
    FieldInfo as FieldInfo,
    Progress as Progress,
    Tool as Tool,
    ToolContext as ToolContext,
    ToolOutput as ToolOutput,
    tool as tool,
)
from swarm.transports.base import (
    CompletionTransport as CompletionTransport,
    DummyCompletionTransport as DummyCompletionTransport,
)
from swarm.types import (
    StopReason as StopReason,
    ToolCallID as ToolCallID,
    ToolName as ToolName,
    Usage as Usage,
    UsageNode as UsageNode,
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
    "swarm.toolbox.make": ("make_toolbox",),
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
    from swarm.approvals.approver import RunApprover as RunApprover
    from swarm.approvals.store import ApprovalStore as ApprovalStore
    from swarm.audit.anchor import AuditHead as AuditHead
    from swarm.audit.log import AuditLog as AuditLog
    from swarm.audit.show import audit_table as audit_table
    from swarm.audit.verify import AuditReport as AuditReport, verify_log as verify_log
    from swarm.batch.batch import (
        BatchResult as BatchResult,
        BatchSummary as BatchSummary,
        run_batch as run_batch,
    )
    from swarm.batch.executors import (
        Executor as Executor,
        LocalExecutor as LocalExecutor,
        RayExecutor as RayExecutor,
    )
    from swarm.batch.job import JobReport as JobReport
    from swarm.batch.suite import run_suite as run_suite
    from swarm.batch.tasks import BatchTask as BatchTask, load_tasks as load_tasks
    from swarm.context.compaction import (
        AutoCompactStore as AutoCompactStore,
        compact_context as compact_context,
    )
    from swarm.context.sqlite import (
        ArchivedSegment as ArchivedSegment,
        SQLiteContextStore as SQLiteContextStore,
    )
    from swarm.event_codec import event_from_dict as event_from_dict, event_to_dict as event_to_dict
    from swarm.guards.approval import ApprovalGuard as ApprovalGuard
    from swarm.guards.audit import AuditGuard as AuditGuard
    from swarm.guards.base import (
        AllowAllGuard as AllowAllGuard,
        ConcurrentGuard as ConcurrentGuard,
        DenyAllGuard as DenyAllGuard,
        PermissionGuard as PermissionGuard,
    )
    from swarm.guards.ceiling import CeilingGuard as CeilingGuard
    from swarm.guards.claude_rules import ClaudeRulesGuard as ClaudeRulesGuard
    from swarm.guards.limits import BudgetGuard as BudgetGuard, RateLimitGuard as RateLimitGuard
    from swarm.guards.paths import PathGuard as PathGuard
    from swarm.guards.policy import (
        Policy as Policy,
        PolicyGuard as PolicyGuard,
        apply_policy as apply_policy,
        load_policy as load_policy,
    )
    from swarm.guards.prefixes import (
        CommandDenyGuard as CommandDenyGuard,
        CommandPrefixGuard as CommandPrefixGuard,
    )
    from swarm.guards.replay import replay_decisions as replay_decisions
    from swarm.guards.shell import ShellGuard as ShellGuard
    from swarm.mcp.config import (
        McpHttpServer as McpHttpServer,
        McpServer as McpServer,
        McpStdioServer as McpStdioServer,
        load_mcp_servers as load_mcp_servers,
    )
    from swarm.models.registry import ModelSpec as ModelSpec, estimate_cost as estimate_cost
    from swarm.models.resolver import ModelResolver as ModelResolver, model_spec as model_spec
    from swarm.models.spec import (
        register_provider as register_provider,
        transport_from_spec as transport_from_spec,
    )
    from swarm.otel.observer import OtelObserver as OtelObserver
    from swarm.report import build_report as build_report, write_report as write_report
    from swarm.sandbox.base import (
        Confinement as Confinement,
        Launch as Launch,
        Overlay as Overlay,
        Sandbox as Sandbox,
        SandboxSettings as SandboxSettings,
        SandboxUnavailable as SandboxUnavailable,
    )
    from swarm.sandbox.egress import AllowList as AllowList, Egress as Egress
    from swarm.sandbox.environment import command_environment as command_environment
    from swarm.sandbox.limits import ResourceLimits as ResourceLimits
    from swarm.sandbox.proxy import (
        ConnectionRecord as ConnectionRecord,
        EgressProxy as EgressProxy,
        mapped_resolver as mapped_resolver,
    )
    from swarm.sandbox.select import find_sandbox as find_sandbox
    from swarm.team.background import agents_tool as agents_tool
    from swarm.team.commands import (
        Command as Command,
        CommandTask as CommandTask,
        read_command as read_command,
    )
    from swarm.team.crewai import Crew as Crew, CrewTask as CrewTask, load_crew as load_crew
    from swarm.team.delegation import (
        AgentContext as AgentContext,
        build_team as build_team,
        make_agent_tools as make_agent_tools,
        run_team as run_team,
    )
    from swarm.team.graph import Team as Team
    from swarm.team.loader import (
        AgentLoader as AgentLoader,
        JsonAgentLoader as JsonAgentLoader,
        MarkdownAgentLoader as MarkdownAgentLoader,
        MultiFormatLoader as MultiFormatLoader,
        TomlAgentLoader as TomlAgentLoader,
        YamlAgentLoader as YamlAgentLoader,
        load_agents as load_agents,
        load_specs as load_specs,
    )
    from swarm.team.references import load_tool_reference as load_tool_reference
    from swarm.team.skills import Skill as Skill, load_skills as load_skills
    from swarm.team.spec import (
        AgentSpec as AgentSpec,
        BudgetSettings as BudgetSettings,
        CompactionSettings as CompactionSettings,
    )
    from swarm.toolbox.make import make_toolbox as make_toolbox
    from swarm.toolbox.shell import safe_environment as safe_environment
    from swarm.transports.anthropic import AnthropicTransport as AnthropicTransport
    from swarm.transports.openai import OpenAITransport as OpenAITransport
    from swarm.transports.options import Timeouts as Timeouts, on_user_turn as on_user_turn
    from swarm.transports.recording import (
        RecordingTransport as RecordingTransport,
        ReplayTransport as ReplayTransport,
    )
    from swarm.transports.retry import RetryPolicy as RetryPolicy
    from swarm.undo.capture import UndoCapture as UndoCapture, UndoSettings as UndoSettings
    from swarm.undo.log import CallChanges as CallChanges, Change as Change
    from swarm.undo.restore import UndoRefused as UndoRefused
    from swarm.undo.state import PathState as PathState
    from swarm.undo.taking import UndoResult as UndoResult

__version__ = "0.1.0"


__getattr__, __dir__, __all__ = _lazy_exports(__name__, _LAZY)
