"""KsADK-compatible runtime context helpers (`from ksadk.runtime_context import
get_current_invocation_context`), backed by agentengine_runner's per-run contextvar."""

from agentengine_runner.context import (
    InvocationContext,
    PlatformInvocationContext,
    ToolExecutionContext,
    get_current_account_id,
    get_current_invocation_context,
    get_current_invocation_context_or_default,
    get_current_tool_execution_context_or_default,
    get_current_user_id,
    invocation_scope,
    platform_invocation_scope,
)

__all__ = [
    "InvocationContext",
    "PlatformInvocationContext",
    "ToolExecutionContext",
    "get_current_account_id",
    "get_current_invocation_context",
    "get_current_invocation_context_or_default",
    "get_current_tool_execution_context_or_default",
    "get_current_user_id",
    "invocation_scope",
    "platform_invocation_scope",
]
