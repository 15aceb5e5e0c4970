"""The per-run invocation context, readable from anywhere inside a run.

Mirrors KsADK's `ksadk.runtime_context` (PlatformInvocationContext in a ContextVar) so
shared tools can call get_current_invocation_context() instead of threading the payload
through. The value lives in a contextvars.ContextVar set inside the run's own asyncio task,
so concurrent runs never see each other's context; tasks created by the run and
asyncio.to_thread() inherit it (loop.run_in_executor does not copy context).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

JSON = Any


@dataclass(frozen=True)
class InvocationContext:
    agent_id: str = ""
    user_id: str = ""
    account_id: str = ""
    app_name: str = ""
    session_id: str = ""
    invocation_id: str = ""
    history: list[JSON] = field(default_factory=list)
    input: JSON = None
    input_content: list[JSON] = field(default_factory=list)
    input_messages: list[JSON] = field(default_factory=list)
    input_parts: list[JSON] = field(default_factory=list)
    attachments: list[JSON] = field(default_factory=list)
    attachment_results: list[JSON] = field(default_factory=list)
    current_attachments: list[JSON] = field(default_factory=list)
    current_attachment_results: list[JSON] = field(default_factory=list)
    has_current_files: bool = False
    runner_type: str = ""
    metadata: dict[str, JSON] = field(default_factory=dict)
    model: str = ""
    model_options: dict[str, JSON] = field(default_factory=dict)
    model_metadata: dict[str, JSON] = field(default_factory=dict)
    instructions: str = ""
    kb_context: JSON = None
    memory_context: JSON = None
    tool_approval_mode: str = ""
    is_resume: bool = False
    state: dict[str, JSON] = field(default_factory=dict)
    platform_context: dict[str, JSON] = field(default_factory=dict)

    @classmethod
    def from_request(
        cls,
        payload: Mapping[str, JSON],
        session_context: Mapping[str, JSON],
        *,
        app_name: str = "",
        user_id: str = "",
        session_id: str = "",
        invocation_id: str = "",
        runner_type: str = "",
    ) -> InvocationContext:
        platform = _dict(session_context.get("platform_context"))
        history = payload.get("history")
        if history is None:
            history = session_context.get("history")
        return cls(
            agent_id=_str(platform.get("agent_id")),
            user_id=user_id or _str(platform.get("user_id")),
            account_id=_str(platform.get("account_id")),
            app_name=app_name or _str(platform.get("app_name")),
            session_id=session_id or _str(platform.get("session_id") or payload.get("session_id")),
            invocation_id=invocation_id
            or _str(platform.get("invocation_id") or payload.get("invocation_id")),
            history=_list(history),
            input=payload.get("input"),
            input_content=_list(payload.get("input_content")),
            input_messages=_list(payload.get("input_messages")),
            input_parts=_list(payload.get("input_parts")),
            attachments=_list(payload.get("attachments")),
            attachment_results=_list(payload.get("attachment_results")),
            current_attachments=_list(payload.get("current_attachments")),
            current_attachment_results=_list(payload.get("current_attachment_results")),
            has_current_files=bool(payload.get("has_current_files")),
            runner_type=runner_type,
            metadata=_dict(payload.get("metadata")),
            model=_str(payload.get("model")),
            model_options=_dict(payload.get("model_options")),
            model_metadata=_dict(payload.get("model_metadata")),
            instructions=_str(payload.get("instructions")),
            kb_context=session_context.get("kb_context"),
            memory_context=session_context.get("memory_context"),
            tool_approval_mode=_str(payload.get("tool_approval_mode")),
            is_resume=bool(session_context.get("is_resume")),
            state=_dict(session_context.get("state")),
            platform_context=platform,
        )

    def to_payload(self) -> dict[str, JSON]:
        """The context as a plain dict (KsADK passes this as payload["platform_context"])."""
        return asdict(self)


# KsADK's name for the same thing.
PlatformInvocationContext = InvocationContext


@dataclass(frozen=True)
class ToolExecutionContext:
    session_id: str = ""
    run_id: str = ""
    invocation_id: str = ""


_current: contextvars.ContextVar[InvocationContext | None] = contextvars.ContextVar(
    "agentengine_invocation_context", default=None
)


def get_current_invocation_context() -> InvocationContext | None:
    return _current.get()


def get_current_invocation_context_or_default() -> InvocationContext:
    return _current.get() or InvocationContext()


def get_current_user_id() -> str:
    ctx = _current.get()
    return ctx.user_id if ctx else ""


def get_current_account_id() -> str:
    ctx = _current.get()
    return (ctx.account_id or ctx.user_id) if ctx else ""


def get_current_tool_execution_context_or_default() -> ToolExecutionContext:
    ctx = _current.get()
    if ctx is None:
        return ToolExecutionContext()
    # A run is one invocation here, so run_id and invocation_id coincide.
    return ToolExecutionContext(ctx.session_id, ctx.invocation_id, ctx.invocation_id)


@contextmanager
def invocation_scope(ctx: InvocationContext) -> Iterator[InvocationContext]:
    """Makes ctx current for the enclosed code (the SDK does this around every run)."""
    token = _current.set(ctx)
    try:
        yield ctx
    finally:
        _current.reset(token)


# KsADK's name for the same thing.
platform_invocation_scope = invocation_scope


def _str(value: object) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _list(value: object) -> list[JSON]:
    return list(value) if isinstance(value, list | tuple) else []


def _dict(value: object) -> dict[str, JSON]:
    return dict(value) if isinstance(value, Mapping) else {}
