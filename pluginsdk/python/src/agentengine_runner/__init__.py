"""agentengine runner SDK: make a Python process an agentengine runner (go-plugin, gRPC).

    from agentengine_runner import Description, Emitter, Runner, RunRequest, serve

    class Echo(Runner):
        def describe(self) -> Description:
            return Description(framework="langgraph", agent_name="echo")

        async def run(self, request: RunRequest, emit: Emitter) -> None:
            await emit.text(str(request.input))

Start it with `python -m agentengine_runner mymodule:Echo` (the host does this).
"""

from .context import (
    InvocationContext,
    PlatformInvocationContext,
    ToolExecutionContext,
    get_current_invocation_context,
    get_current_invocation_context_or_default,
    invocation_scope,
)
from .emitter import Emitter
from .handshake import APP_PROTOCOL_VERSION, MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE
from .runner import (
    NATIVE_CALL,
    Artifact,
    CallError,
    Capabilities,
    Description,
    Framework,
    Runner,
    RunnerError,
    RunRequest,
    SummarizeRequest,
)
from .server import broker, prepare, serve
from .services import Broker

__all__ = [
    "APP_PROTOCOL_VERSION",
    "MAGIC_COOKIE_KEY",
    "MAGIC_COOKIE_VALUE",
    "NATIVE_CALL",
    "Artifact",
    "Broker",
    "CallError",
    "Capabilities",
    "Description",
    "Emitter",
    "Framework",
    "InvocationContext",
    "PlatformInvocationContext",
    "RunRequest",
    "Runner",
    "RunnerError",
    "SummarizeRequest",
    "ToolExecutionContext",
    "broker",
    "get_current_invocation_context",
    "get_current_invocation_context_or_default",
    "invocation_scope",
    "prepare",
    "serve",
]
