"""Per-run LangGraph/LangChain config and context.

Everything the agent may want from the request reaches it three ways: the runtime context
(`ksadk.runtime_context.get_current_invocation_context()`, set by the SDK), the run config
(`config["configurable"]["agentengine"]` and `config["metadata"]`), and LangGraph's
`context=` when the graph declares a context_schema whose fields we can fill.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from agentengine_runner import InvocationContext, RunRequest, get_current_invocation_context


def invocation_context(request: RunRequest, framework: str) -> InvocationContext:
    current = get_current_invocation_context()
    if current is not None:
        return current
    return InvocationContext.from_request(
        request.payload,
        request.session_context,
        app_name=request.app_name,
        user_id=request.user_id,
        session_id=request.session_id,
        invocation_id=request.invocation_id,
        runner_type=framework,
    )


def thread_id(request: RunRequest) -> str:
    platform = request.session_context.get("platform_context") or {}
    session = request.session_id or str(platform.get("session_id") or request.payload.get("session_id") or "")
    # A checkpointer needs some thread: without a session the run is its own thread.
    if not session:
        return f"invocation-{request.invocation_id}"
    # Sessions are per user: two users may both have a session "s1", and must never share
    # its checkpoints. The user id's length prefix keeps the key unambiguous.
    user = request.user_id or str(platform.get("user_id") or "")
    return f"{len(user)}:{user}/{session}"


def run_config(request: RunRequest, ctx: InvocationContext) -> dict[str, Any]:
    # Not bare configurable["model"]: configurable chat models read that key as a model
    # name, and payload.model is the agent name the client addressed.
    agentengine = {
        "app_name": ctx.app_name,
        "user_id": ctx.user_id,
        "session_id": ctx.session_id,
        "invocation_id": ctx.invocation_id,
        "model": ctx.model,
        "model_metadata": ctx.model_metadata,
        "model_options": ctx.model_options,
        "is_resume": ctx.is_resume,
    }
    config: dict[str, Any] = {
        "configurable": {
            "thread_id": thread_id(request),
            "user_id": ctx.user_id,
            "agentengine": agentengine,
        },
        "metadata": {
            "agentengine_invocation_id": ctx.invocation_id,
            "agentengine_session_id": ctx.session_id,
            "user_id": ctx.user_id,
        },
    }
    if ctx.app_name:
        config["run_name"] = ctx.app_name
    # Imported here: the callback handler needs langchain_core, which only the LangChain
    # family's bridges (this function's callers) have; the module is also read without it.
    from . import otel

    spans = otel.handlers()  # model and tool spans, in a traced run only
    if spans:
        config["callbacks"] = spans
    return config


def graph_context(schema: Any, ctx: InvocationContext) -> Any:
    """An instance of the graph's context_schema filled from the invocation context, or
    None when there is no schema or it needs fields we do not have."""
    if schema is None:
        return None
    values = {
        **{f.name: getattr(ctx, f.name) for f in dataclasses.fields(ctx)},
        "platform_context": ctx.to_payload(),
    }
    fields = _fields(schema)
    if fields is None:
        return None
    chosen = {k: v for k, v in values.items() if k in fields}
    try:
        if _is_typeddict(schema) or schema is dict:
            return chosen
        return schema(**chosen)
    except Exception:  # required fields we cannot fill: let the graph use its defaults
        return None


def _fields(schema: Any) -> set[str] | None:
    if schema is dict:
        return {f.name for f in dataclasses.fields(InvocationContext)} | {"platform_context"}
    if dataclasses.is_dataclass(schema):
        return {f.name for f in dataclasses.fields(schema)}
    model_fields = getattr(schema, "model_fields", None)
    if isinstance(model_fields, dict):
        return set(model_fields)
    annotations = getattr(schema, "__annotations__", None)
    if isinstance(annotations, dict):
        return set(annotations)
    return None


def _is_typeddict(schema: Any) -> bool:
    return isinstance(schema, type) and issubclass(schema, dict) and hasattr(schema, "__total__")
