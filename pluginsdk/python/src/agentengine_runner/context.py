"""The per-run invocation context, readable from anywhere inside a run.

Mirrors KsADK's `ksadk.runtime_context` (PlatformInvocationContext in a ContextVar) so
shared tools can call get_current_invocation_context() instead of threading the payload
through. The value lives in a contextvars.ContextVar set inside the run's own asyncio task,
so concurrent runs never see each other's context; tasks created by the run and
asyncio.to_thread() inherit it (loop.run_in_executor does not copy context).

`import ksadk` in user code: where the project's environment has the real ksadk package,
it is used and nothing shadows it, and every run also enters ksadk's own
platform_invocation_scope / tool_execution_scope, so its getters return the run's values.
Elsewhere use_ksadk() appends a stand-in that provides only ksadk.runtime_context.
"""

from __future__ import annotations

import contextvars
import dataclasses
import importlib
import importlib.util
import logging
import sys
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

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


def get_current_user_id(default: str = "") -> str:
    ctx = _current.get()
    return (ctx.user_id or default) if ctx else default


def get_current_account_id(default: str = "") -> str:
    ctx = _current.get()
    return (ctx.account_id or ctx.user_id or default) if ctx else default


def get_current_tool_execution_context_or_default() -> ToolExecutionContext:
    ctx = _current.get()
    if ctx is None:
        return ToolExecutionContext()
    # A run is one invocation here, so run_id and invocation_id coincide.
    return ToolExecutionContext(ctx.session_id, ctx.invocation_id, ctx.invocation_id)


@contextmanager
def invocation_scope(ctx: InvocationContext) -> Iterator[InvocationContext]:
    """Makes ctx current for the enclosed code (the SDK does this around every run), also
    in the real ksadk.runtime_context when the process uses that."""
    token = _current.set(ctx)
    try:
        with ExitStack() as stack:
            real = _real_ksadk_context()
            if real is not None:
                _enter_ksadk_scope(stack, real, ctx)
            yield ctx
    finally:
        _current.reset(token)


# The stand-in's import root: a directory holding only the `ksadk` stand-in package.
KSADK_STANDIN_DIR = Path(__file__).with_name("_ksadk_compat")

_log = logging.getLogger("agentengine_runner.context")


def use_ksadk() -> Literal["installed", "stand-in"]:
    """Makes `import ksadk` work for user code; call once before importing it.

    With ksadk installed in the environment nothing is shadowed, and its runtime_context is
    imported now (a few small modules) so that every run can set its context. Without it,
    the stand-in directory is appended to sys.path, after everything else.
    """
    if _is_installed_ksadk():
        importlib.import_module("ksadk.runtime_context")
        return "installed"
    standin = str(KSADK_STANDIN_DIR)
    if standin not in sys.path:
        sys.path.append(standin)
    return "stand-in"


def _is_installed_ksadk() -> bool:
    loaded = sys.modules.get("ksadk")
    if loaded is not None:
        return not getattr(loaded, "AGENTENGINE_STANDIN", False)
    try:
        spec = importlib.util.find_spec("ksadk")
    except (ImportError, ValueError):
        return False
    # origin None: a namespace package, i.e. only some directory named ksadk (a regular
    # package, such as the stand-in, takes precedence over it at import).
    if spec is None or spec.origin is None or not spec.has_location:
        return False
    return Path(spec.origin).parent.parent != KSADK_STANDIN_DIR


def _real_ksadk_context() -> ModuleType | None:
    """The real ksadk.runtime_context if it has been imported (use_ksadk() does that)."""
    pkg = sys.modules.get("ksadk")
    mod = sys.modules.get("ksadk.runtime_context")
    if pkg is None or mod is None or getattr(pkg, "AGENTENGINE_STANDIN", False):
        return None
    return mod


def _enter_ksadk_scope(stack: ExitStack, mod: ModuleType, ctx: InvocationContext) -> None:
    """Sets this run's context through ksadk's own API. ksadk's context classes differ
    between releases, so only the fields the installed one declares are passed; a release
    this cannot build a context for is logged and the run goes on without it."""
    try:
        kctx = _ksadk_invocation_context(mod, ctx)
    except Exception as exc:  # a ksadk release with a context shape we do not know
        _log.warning(
            "cannot set ksadk's runtime context for this run: %s: %s", type(exc).__name__, exc
        )
        return
    stack.enter_context(mod.platform_invocation_scope(kctx))
    tool_scope = getattr(mod, "tool_execution_scope", None)
    if tool_scope is not None:
        # One run is one invocation here, as in ToolExecutionContext above.
        stack.enter_context(
            tool_scope(
                session_id=ctx.session_id, run_id=ctx.invocation_id, invocation_id=ctx.invocation_id
            )
        )


def _ksadk_invocation_context(mod: ModuleType, ctx: InvocationContext) -> Any:
    cls = mod.PlatformInvocationContext
    names = {f.name for f in dataclasses.fields(cls)}
    platform = ctx.platform_context
    values: dict[str, Any] = {
        "agent_id": ctx.agent_id,
        "user_id": ctx.user_id,
        "account_id": ctx.account_id,
        "session_id": ctx.session_id,
        "history": list(ctx.history),
        "input_content": list(ctx.input_content),
        "input_messages": list(ctx.input_messages),
        "input_parts": list(ctx.input_parts),
        "attachments": list(ctx.attachments),
        "attachment_results": list(ctx.attachment_results),
        "current_attachments": list(ctx.current_attachments),
        "current_attachment_results": list(ctx.current_attachment_results),
        "has_current_files": ctx.has_current_files,
        "runner_type": ctx.runner_type,
        "metadata": dict(ctx.metadata),
        "model": ctx.model or None,
        "model_options": dict(ctx.model_options) or None,
        "kb_context": ctx.kb_context,
        "memory_context": ctx.memory_context,
        "tool_approval_mode": ctx.tool_approval_mode,
    }
    identity_cls = getattr(mod, "PlatformIdentityContext", None)
    if "identity" in names and identity_cls is not None:
        values["identity"] = identity_cls.from_payload(_dict(platform.get("identity")))
    if "session" in names and isinstance(platform.get("session"), Mapping):
        session_cls = importlib.import_module("ksadk.session_context").SessionContext
        values["session"] = session_cls.from_payload(platform["session"])
    return cls(**{k: v for k, v in values.items() if k in names})


# KsADK's name for the same thing.
platform_invocation_scope = invocation_scope


def _str(value: object) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _list(value: object) -> list[JSON]:
    return list(value) if isinstance(value, list | tuple) else []


def _dict(value: object) -> dict[str, JSON]:
    return dict(value) if isinstance(value, Mapping) else {}
