"""swarm: multi-agent orchestration with guarded tools, delegation and durable context."""

from swarm.agent import Agent, AgentStream, ToolSelector
from swarm.context import ContextStore, MemoryContextStore, SessionInfo
from swarm.errors import (
    BudgetExceeded,
    ConfigError,
    GuardError,
    SwarmError,
    ToolError,
    ToolTimeout,
    TransportError,
)
from swarm.events import (
    ContextCompacted,
    Error,
    IterationEnd,
    ReasoningDelta,
    SessionEndEvent,
    StreamEvent,
    SubAgentEvent,
    TextDelta,
    ToolInputDelta,
    ToolOutputDelta,
    ToolResult,
    ToolUseStart,
)
from swarm.guards import AllowAllGuard, ConcurrentGuard, DenyAllGuard, PermissionGuard
from swarm.messages import (
    ContentBlock,
    ImageBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from swarm.run import RunScope, current_scope
from swarm.tools import MISSING, Field, FieldInfo, Progress, Tool, ToolOutput, tool
from swarm.transports import CompletionTransport, DummyCompletionTransport
from swarm.types import StopReason, ToolCallID, ToolName, Usage

__version__ = "0.1.0"

__all__ = [
    "MISSING",
    "Agent",
    "AgentStream",
    "AllowAllGuard",
    "BudgetExceeded",
    "CompletionTransport",
    "ConcurrentGuard",
    "ConfigError",
    "ContentBlock",
    "ContextCompacted",
    "ContextStore",
    "DenyAllGuard",
    "DummyCompletionTransport",
    "Error",
    "Field",
    "FieldInfo",
    "GuardError",
    "ImageBlock",
    "IterationEnd",
    "MemoryContextStore",
    "Message",
    "PermissionGuard",
    "Progress",
    "ReasoningBlock",
    "ReasoningDelta",
    "RunScope",
    "SessionEndEvent",
    "SessionInfo",
    "StopReason",
    "StreamEvent",
    "SubAgentEvent",
    "SwarmError",
    "TextBlock",
    "TextDelta",
    "Tool",
    "ToolCallID",
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
    "Usage",
    "current_scope",
    "tool",
]
