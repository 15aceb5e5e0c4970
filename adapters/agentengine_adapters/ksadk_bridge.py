"""KsADK runner classes: a project whose agentengine.yaml names `runner_class:
module.Class` (a subclass of KsADK's BaseRunner, usually of its LangGraphRunner,
overriding invoke / stream) answers through that class, as KsADK serves it.

The class comes from the real `ksadk` package in the project's environment (the project's
requirements name it); it is built as KsADK builds it, `cls(detection_result,
project_dir)` with KsADK's own DetectionResult, then `load_agent()`. Each turn calls its
`stream(payload)` with the request in KsADK's payload shape and maps the chunks it
yields to runner events:

| KsADK chunk | runner event |
|---|---|
| `text {delta}` | `text_delta` (`replace`: the message so far is closed, the delta starts anew) |
| `thinking` / `reasoning {delta}` | `reasoning_delta` |
| `tool_call {tool_name, tool_args, call_id / tool_call_id / run_id}` | `tool_call` |
| `tool_result {tool_name, tool_output, ...}` | `tool_result` (same call id) |
| `interrupt` / `approval {interrupt_info}` | `approval_request`; later answer chunks are dropped |
| `final {output, usage}` | the answer when no text streamed, then `usage` |
| `error {message}` | Error |
| `checkpoint {metadata}`, anything else but step/model-call lifecycle | `native` |

The stream is read to its end (the class's own work after an approval still runs). A
stream that ends with nothing to show (no text, final output, tool call or approval)
is an Error, as KsADK records it. Cancelling the run calls the class's
`request_cancel(invocation_id)` before the task is cancelled.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import logging
import sys
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

from agentengine_runner import (
    Capabilities,
    Description,
    Emitter,
    Runner,
    RunnerError,
    RunRequest,
)

from . import history as hist
from . import resume as res
from .config import Settings
from .loader import prepare_sys_path

log = logging.getLogger("agentengine_runner.adapters")

FIELD = "runner_class"
# Lifecycle chunks KsADK's own runners yield for its tracing; nothing to show.
# Chunks that are the turn's answer or its steps: none after an approval paused the run.
ANSWER_KINDS = frozenset(
    {"text", "thinking", "reasoning", "tool_call", "tool_result", "interrupt", "approval", "final"}
)
LIFECYCLE = frozenset(
    {"step_start", "step_end", "model_call_begin", "model_call_first_token", "model_call_end"}
)


class KsadkMissingError(RuntimeError):
    """The project names a runner class but its environment has no ksadk."""


def missing_detail(settings: Settings) -> str:
    return (
        f"agentengine.yaml: field {FIELD!r}: {settings.runner_class} is a KsADK runner class, "
        f"which needs the ksadk package, and ksadk is not installed in {sys.executable}"
    )


def missing_fix(settings: Settings) -> str:
    return (
        f"add ksadk to {settings.project_dir / 'requirements.txt'}, then run "
        f"`agentengine setup {settings.project_dir}`"
    )


def missing_message(settings: Settings) -> str:
    return f"{missing_detail(settings)}; fix: {missing_fix(settings)}"


def ksadk_installed() -> bool:
    """True when `ksadk` is the real package (not agentengine's runtime_context stand-in)."""
    # ksadk is the project's package, not ours: imported by name, untyped.
    try:
        ksadk = importlib.import_module("ksadk")
    except ImportError:
        return False
    return not getattr(ksadk, "AGENTENGINE_STANDIN", False)


def load_runner_class(settings: Settings) -> type:
    """The project's runner class, checked to be a KsADK BaseRunner."""
    if not ksadk_installed():
        raise KsadkMissingError(missing_message(settings))
    base_runner = importlib.import_module("ksadk.runners.base_runner").BaseRunner

    module_name, _, class_name = settings.runner_class.rpartition(".")
    if not module_name or not class_name:
        raise ValueError(
            f"agentengine.yaml: field {FIELD!r}: {settings.runner_class!r} is not a "
            "fully-qualified class path (write module.Class, e.g. agent.CustomRunner)"
        )
    prepare_sys_path(settings.project_dir)
    module = importlib.import_module(module_name)
    cls = getattr(module, class_name, None)
    if cls is None:
        raise AttributeError(
            f"agentengine.yaml: field {FIELD!r}: module {module_name} "
            f"({getattr(module, '__file__', '')}) has no {class_name}"
        )
    if not isinstance(cls, type) or not issubclass(cls, base_runner):
        raise TypeError(
            f"agentengine.yaml: field {FIELD!r}: {settings.runner_class} is not a subclass of "
            "ksadk.runners.base_runner.BaseRunner"
        )
    return cls


def detection_result(settings: Settings) -> Any:
    """KsADK's DetectionResult for the project, as its detector reads agentengine.yaml."""
    detection = importlib.import_module("ksadk.detection")
    entry = settings.entry_point.split(":", 1)[0]
    return detection.DetectionResult(
        type=detection.FrameworkType(settings.framework),
        name=settings.agent_name,
        entry_point=entry,
        package_path=str(settings.project_dir),
        agent_variable=settings.agent_variable,
        runner_class=settings.runner_class,
        confidence=1.0,
    )


class KsadkRunner(Runner):
    def __init__(self, settings: Settings, cls: type) -> None:
        self.settings = settings
        self.cls = cls
        self.runner: Any = cls(detection_result(settings), str(settings.project_dir))
        self.runner.load_agent()

    def describe(self) -> Description:
        doc = inspect.getdoc(self.cls) or ""
        return Description(
            framework=self.settings.framework,
            agent_name=self.settings.agent_name,
            description=doc.split("\n\n", 1)[0] or f"KsADK runner {self.settings.runner_class}",
            capabilities=Capabilities(resume=True),
        )

    async def run(self, request: RunRequest, emit: Emitter) -> None:
        writer = _ChunkWriter(emit, self.settings.framework)
        try:
            # Read to its end, as KsADK does: what the class does after an approval (its
            # checkpoint chunk, its cleanup) still runs.
            async for chunk in _chunks(self.runner.stream(ksadk_payload(request))):
                await writer.chunk(chunk)
        except asyncio.CancelledError:
            self._request_cancel(request.invocation_id)
            raise
        await writer.finish()

    def _request_cancel(self, invocation_id: str) -> None:
        try:
            self.runner.request_cancel(invocation_id)
        except Exception:  # cancelling must go on whatever the class does
            log.warning("request_cancel of %s failed", self.settings.runner_class, exc_info=True)

    async def aclose(self) -> None:
        close = getattr(self.runner, "close", None)
        if close is not None:
            result = close()
            if inspect.isawaitable(result):
                await result


async def _chunks(stream: Any) -> AsyncIterator[Any]:
    """stream() as KsADK's runtime accepts it: an async iterator (the contract), or a
    coroutine / plain iterable a subclass may return."""
    if inspect.isawaitable(stream) and not hasattr(stream, "__aiter__"):
        stream = await stream
    if hasattr(stream, "__aiter__"):
        try:
            async for chunk in stream:
                yield chunk
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
    elif isinstance(stream, Mapping):
        yield stream
    else:
        for chunk in stream:
            yield chunk


def ksadk_payload(request: RunRequest) -> dict[str, Any]:
    """The request in the shape KsADK's runtime hands runner.stream(): the payload's
    fields, the session and invocation ids, history as [{role: user|model, content}]
    (consecutive turns of one role merged, ending with this turn's user message, as
    KsADK stores the message before it runs the turn), the platform / KB / memory context, and on
    a resume `resume: True` with the answer as input. `model` is left out: here it names
    the agent, and KsADK's runners would take it for the chat model to switch to."""
    ctx = request.session_context
    payload: dict[str, Any] = {
        k: v for k, v in request.payload.items() if k not in ("model", "history", "resume")
    }
    payload["session_id"] = request.session_id
    payload["invocation_id"] = request.invocation_id
    history = request.payload.get("history")
    payload["history"] = ksadk_history(history if history is not None else ctx.get("history"))
    said = _user_text(request.payload)
    if said and not request.is_resume:
        # KsADK's history ends with the turn's own user message (it is stored first).
        if payload["history"] and payload["history"][-1]["role"] == "user":
            payload["history"][-1]["content"] += "\n" + said
        else:
            payload["history"].append({"role": "user", "content": said})
    for key in ("platform_context", "kb_context", "memory_context"):
        if key not in payload and ctx.get(key) is not None:
            payload[key] = ctx[key]
    if request.is_resume:
        answers = res.parse_answers(request.payload)
        payload["resume"] = True
        if answers:
            first = answers[0]
            raw = dict(first.raw) if isinstance(first.raw, Mapping) else {}
            payload["input"] = {
                **raw,
                "approval_request_id": first.approval_id,
                "approve": first.approve,
                "approval": "approve" if first.approve else "reject",
                **({"reason": first.reason} if first.reason else {}),
            }
    return payload


def _user_text(payload: Mapping[str, Any]) -> str:
    blocks = payload.get("input_content")
    texts = [
        str(b.get("text") or "")
        for b in (blocks if isinstance(blocks, list) else [])
        if isinstance(b, Mapping) and b.get("type") in ("input_text", "text")
    ]
    if texts:
        return "\n".join(texts)
    value = payload.get("input")
    return value if isinstance(value, str) else ""


def ksadk_history(items: Any) -> list[dict[str, str]]:
    """Host history as KsADK projects it for runners: user turns and tool results as
    `user`, answers, tool calls and summaries as `model`; one message per role change."""
    out: list[dict[str, str]] = []
    for m in hist.messages(items):
        kind = m.get("type")
        text = str(m.get("content") or "")
        if kind == "tool_call" and not text:
            text = f"[tool_call] {m.get('name') or ''}: {json.dumps(m.get('arguments'), ensure_ascii=False)}"
        role = "user" if (m.get("role") == "user" or kind == "tool_result") else "model"
        if not text:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"] += "\n" + text
        else:
            out.append({"role": role, "content": text})
    return out


class _ChunkWriter:
    """KsADK chunks -> runner events, with the bookkeeping of one run."""

    def __init__(self, emit: Emitter, framework: str) -> None:
        self.emit = emit
        self.framework = framework
        self.text_open = False
        self.any_text = False
        self.shown = False  # text, a tool call or an approval: the run showed something
        self.final: str | None = None
        self.paused = False  # an approval request was sent
        self.calls: dict[str, str] = {}  # KsADK's run_id / name -> the call id we sent

    async def chunk(self, chunk: Any) -> None:
        """Handles one chunk. After an approval request the run is paused: later chunks
        but errors and native ones (a checkpoint) are not part of it."""
        if not isinstance(chunk, Mapping):
            if isinstance(chunk, str) and chunk and not self.paused:  # text to KsADK's runtime
                await self._text(chunk)
            return
        kind = str(chunk.get("type") or "")
        if self.paused and kind in ANSWER_KINDS:
            return
        if kind == "text":
            delta = _str(chunk.get("delta") if "delta" in chunk else chunk.get("text"))
            if chunk.get("replace"):
                await self._end()
            await self._text(delta)
        elif kind in ("thinking", "reasoning"):
            delta = _str(chunk.get("delta") if "delta" in chunk else chunk.get("text"))
            if delta:
                self.text_open = False
                await self.emit.reasoning(delta)
        elif kind == "tool_call":
            await self._tool_call(chunk)
        elif kind == "tool_result":
            await self._tool_result(chunk)
        elif kind in ("interrupt", "approval"):
            await self._approval(chunk)
            self.paused = True
        elif kind == "final":
            self.final = _str(chunk.get("output"))
            await self._usage(chunk.get("usage"))
        elif kind == "error":
            raise RunnerError(_str(chunk.get("message")) or "the KsADK runner reported an error")
        elif kind not in LIFECYCLE:
            await self.emit.native(self.framework, kind or "chunk", _plain({k: v for k, v in chunk.items() if k != "type"}))

    async def finish(self) -> None:
        if not self.any_text and self.final and not self.paused:
            await self._text(self.final)
        await self._end()
        if not self.shown:
            raise RunnerError(
                "the KsADK runner's stream ended without output (no text, final output, tool "
                "call or approval)",
                code="runner_stream_ended_without_final_output",
            )

    async def _text(self, text: str) -> None:
        if text:
            await self.emit.text(text)
            self.text_open = self.any_text = self.shown = True

    async def _end(self) -> None:
        if self.text_open:
            self.text_open = False
            await self.emit.message_done()

    def _call_id(self, chunk: Mapping[str, Any], name: str, *, new: bool) -> str:
        for key in ("call_id", "tool_call_id", "id"):
            if chunk.get(key):
                return str(chunk[key])
        run_id = str(chunk.get("run_id") or "")
        if run_id:
            return self.calls.setdefault(run_id, "call_" + run_id.replace("-", "")[:24])
        if new or name not in self.calls:
            self.calls[name] = "call_" + uuid.uuid4().hex[:24]
        return self.calls[name]

    async def _tool_call(self, chunk: Mapping[str, Any]) -> None:
        name = _str(chunk.get("tool_name") or chunk.get("name"))
        args = chunk.get("tool_args", chunk.get("arguments", {}))
        await self._end()
        self.shown = True
        await self.emit.tool_call(
            self._call_id(chunk, name, new=True),
            name,
            args if isinstance(args, str) else _plain(args if isinstance(args, Mapping) else {"input": args}),
        )

    async def _tool_result(self, chunk: Mapping[str, Any]) -> None:
        name = _str(chunk.get("tool_name") or chunk.get("name"))
        output = chunk.get("tool_output", chunk.get("output"))
        output = getattr(output, "content", output)  # a ToolMessage
        await self._end()
        await self.emit.tool_result(
            self._call_id(chunk, name, new=False),
            name,
            output if isinstance(output, str) else _plain(output),
            is_error=bool(chunk.get("is_error")),
        )

    async def _approval(self, chunk: Mapping[str, Any]) -> None:
        info = chunk.get("interrupt_info")
        if isinstance(info, list) and info:
            info = info[0]
        info = dict(info) if isinstance(info, Mapping) else {"value": _str(info)}
        name = _str(info.get("tool_name") or info.get("name") or info.get("action"))
        args = info.get("tool_args", info.get("args", info.get("arguments", {})))
        await self._end()
        self.shown = True
        await self.emit.approval_request(
            _str(info.get("approval_request_id") or info.get("id") or info.get("interrupt_id"))
            or "approval_" + uuid.uuid4().hex[:24],
            call_id=_str(info.get("tool_call_id") or info.get("call_id")),
            name=name,
            arguments=args if isinstance(args, str) else _plain(args if isinstance(args, Mapping) else {}),
            message=_str(info.get("description") or info.get("message") or info.get("question")),
            detail=_plain(info),
        )

    async def _usage(self, usage: Any) -> None:
        if not isinstance(usage, Mapping):
            return
        out_details = usage.get("output_token_details") or {}
        in_details = usage.get("input_token_details") or {}
        await self.emit.usage(
            input_tokens=_int(usage.get("input_tokens", usage.get("prompt_tokens"))),
            output_tokens=_int(usage.get("output_tokens", usage.get("completion_tokens"))),
            reasoning_tokens=_int(out_details.get("reasoning") if isinstance(out_details, Mapping) else 0),
            cached_tokens=_int(
                (in_details.get("cache_read") or in_details.get("cached")) if isinstance(in_details, Mapping) else 0
            ),
        )


def _plain(value: Any) -> Any:
    """value as plain JSON data: what a chunk carries may hold objects (a Command, a
    message) that only have a string form."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def _str(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0
