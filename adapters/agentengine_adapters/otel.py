"""OpenTelemetry spans for LangChain, LangGraph and DeepAgents runs: a callback handler
that makes a `chat` span per model call and an `execute_tool` span per tool call, named and
attributed as the OpenTelemetry GenAI semantic conventions say, as children of the turn's
trace (which the runner SDK makes current for the run).

OpenTelemetry is optional: without opentelemetry-api, or in a run the host does not trace,
no handler is added and nothing is recorded. Message contents and tool arguments and
results are recorded only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true."""

from __future__ import annotations

import json
import os
from typing import Any
from uuid import UUID

from agentengine_runner.tracing import records_spans
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult

try:
    from opentelemetry import context as otel_context
    from opentelemetry import trace
except ImportError:  # pragma: no cover - OpenTelemetry is not installed
    otel_context = None  # type: ignore[assignment]
    trace = None  # type: ignore[assignment]

SCOPE = "agentengine_adapters"
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def handlers() -> list[BaseCallbackHandler]:
    """The callbacks to add to a run's config: a GenAISpans when the run is traced and the
    process has a tracer provider (nobody configured one: its spans would go nowhere)."""
    if trace is None or not records_spans():
        return []
    return [GenAISpans()]


class GenAISpans(BaseCallbackHandler):
    """Makes chat and execute_tool spans from LangChain's callbacks. A span's parent is the
    span of the LangChain run that contains it, if it has one, else the context current when
    the handler was made (the host's runner call)."""

    run_inline = True  # called in the run's own task, not a thread

    def __init__(self, tracer: Any = None, capture_content: bool | None = None) -> None:
        assert trace is not None and otel_context is not None
        self._tracer = tracer or trace.get_tracer(SCOPE)
        self._root = otel_context.get_current()
        self._spans: dict[UUID, Any] = {}
        self._parents: dict[UUID, UUID | None] = {}
        if capture_content is None:
            capture_content = os.environ.get(CAPTURE_ENV, "").lower() == "true"
        self._capture = capture_content

    def _parent_context(self, parent_run_id: UUID | None) -> Any:
        while parent_run_id is not None:
            span = self._spans.get(parent_run_id)
            if span is not None:
                return trace.set_span_in_context(span, self._root)
            parent_run_id = self._parents.get(parent_run_id)
        return self._root

    def _start(self, run_id: UUID, parent_run_id: UUID | None, name: str, kind: Any, attributes: dict[str, Any]) -> None:
        ctx = self._parent_context(parent_run_id)
        self._spans[run_id] = self._tracer.start_span(name, context=ctx, kind=kind, attributes=attributes)

    def _end(self, run_id: UUID, error: BaseException | None = None, attributes: dict[str, Any] | None = None) -> None:
        span = self._spans.pop(run_id, None)
        self._parents.pop(run_id, None)
        if span is None:
            return
        if attributes:
            span.set_attributes(attributes)
        if error is not None:
            span.set_status(trace.Status(trace.StatusCode.ERROR, type(error).__name__))
            span.set_attribute("error.type", type(error).__name__)
        span.end()

    # Runs that are neither model nor tool calls (chains, graph nodes) only nest.
    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kw: Any) -> None:
        self._parents[run_id] = parent_run_id

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kw: Any) -> None:
        self._parents.pop(run_id, None)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self._parents.pop(run_id, None)

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None, invocation_params: dict[str, Any] | None = None, **kw: Any,
    ) -> None:
        model = _model(metadata or {}, invocation_params or kw.get("invocation_params") or {})
        attrs: dict[str, Any] = {"gen_ai.operation.name": "chat"}
        if model:
            attrs["gen_ai.request.model"] = model
        provider = (metadata or {}).get("ls_provider")
        if provider:
            attrs["gen_ai.provider.name"] = provider
        if self._capture:
            attrs["gen_ai.input.messages"] = _json([[_message(m) for m in batch] for batch in messages])
        self._start(run_id, parent_run_id, f"chat {model}".strip(), trace.SpanKind.CLIENT, attrs)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kw: Any) -> None:
        attrs: dict[str, Any] = {}
        reasons: list[str] = []
        inputs = outputs = 0
        for gens in response.generations:
            for g in gens:
                info = g.generation_info or {}
                if info.get("finish_reason"):
                    reasons.append(str(info["finish_reason"]))
                msg = getattr(g, "message", None)
                usage = getattr(msg, "usage_metadata", None) or {}
                inputs += int(usage.get("input_tokens") or 0)
                outputs += int(usage.get("output_tokens") or 0)
                meta = getattr(msg, "response_metadata", None) or {}
                if meta.get("finish_reason"):
                    reasons.append(str(meta["finish_reason"]))
                name = meta.get("model_name") or meta.get("model")
                if isinstance(name, str) and name:
                    attrs["gen_ai.response.model"] = name
                if self._capture and msg is not None:
                    attrs["gen_ai.output.messages"] = _json([_message(msg)])
        if inputs or outputs:
            attrs["gen_ai.usage.input_tokens"] = inputs
            attrs["gen_ai.usage.output_tokens"] = outputs
        if reasons:
            attrs["gen_ai.response.finish_reasons"] = reasons
        self._end(run_id, attributes=attrs)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self._end(run_id, error)

    def on_tool_start(
        self, serialized: Any, input_str: str, *, run_id: UUID, parent_run_id: UUID | None = None,
        inputs: dict[str, Any] | None = None, **kw: Any,
    ) -> None:
        name = (serialized or {}).get("name") or kw.get("name") or "tool"
        attrs: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
        call_id = kw.get("tool_call_id")
        if call_id:
            attrs["gen_ai.tool.call.id"] = call_id
        if self._capture:
            attrs["gen_ai.tool.call.arguments"] = input_str if inputs is None else _json(inputs)
        self._start(run_id, parent_run_id, f"execute_tool {name}", trace.SpanKind.INTERNAL, attrs)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kw: Any) -> None:
        attrs: dict[str, Any] = {}
        call_id = getattr(output, "tool_call_id", None)
        if call_id:
            attrs["gen_ai.tool.call.id"] = call_id
        if self._capture:
            attrs["gen_ai.tool.call.result"] = str(getattr(output, "content", output))
        self._end(run_id, attributes=attrs)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kw: Any) -> None:
        self._end(run_id, error)


def _model(metadata: dict[str, Any], params: dict[str, Any]) -> str:
    for v in (metadata.get("ls_model_name"), params.get("model"), params.get("model_name")):
        if isinstance(v, str) and v:
            return v
    return ""


def _message(m: Any) -> dict[str, Any]:
    return {"role": getattr(m, "type", ""), "content": getattr(m, "content", str(m))}


def _json(v: Any) -> str:
    return json.dumps(v, default=str, ensure_ascii=False)
