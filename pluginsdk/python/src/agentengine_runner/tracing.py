"""Joins the host's trace: the run request carries the turn's W3C trace context, and while
the run executes it is the current OpenTelemetry context, so the spans the agent's
framework makes (Google ADK's own, the bridges' model and tool spans) are children of the
host's runner call. OpenTelemetry is optional: without opentelemetry-api installed this
does nothing."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

try:
    from opentelemetry import context as _otel_context
    from opentelemetry import trace as _otel_trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
except ImportError:  # OpenTelemetry is not installed: runs are untraced
    _otel_context = None  # type: ignore[assignment]
    _otel_trace = None  # type: ignore[assignment]
    TraceContextTextMapPropagator = None  # type: ignore[assignment,misc]


def available() -> bool:
    """Whether opentelemetry-api is installed."""
    return _otel_context is not None


def records_spans() -> bool:
    """Whether spans made now are recorded in the host's trace: the run is traced (its
    trace context is current) and the process has a tracer provider (one the project set
    up; without one, spans go nowhere). A framework that traces its tool calls then makes
    their execute_tool spans, and the bridge tells the host so (Emitter.tool_result's
    traced) instead of the host adding a second span per call."""
    if _otel_trace is None or not _otel_trace.get_current_span().get_span_context().is_valid:
        return False
    provider = _otel_trace.get_tracer_provider()
    return not isinstance(provider, (_otel_trace.ProxyTracerProvider, _otel_trace.NoOpTracerProvider))


@contextmanager
def trace_scope(carrier: Mapping[str, str]) -> Iterator[None]:
    """Makes the trace context in carrier ("traceparent", "tracestate") current for the
    block; nothing when it is empty or OpenTelemetry is not installed."""
    if _otel_context is None or TraceContextTextMapPropagator is None or not carrier:
        yield
        return
    ctx: Any = TraceContextTextMapPropagator().extract(carrier=dict(carrier))
    token = _otel_context.attach(ctx)
    try:
        yield
    finally:
        _otel_context.detach(token)


def trace_ids(carrier: Mapping[str, str]) -> dict[str, str]:
    """The trace and span ids of a W3C traceparent, for the run's log lines ({} when there
    is none or it is malformed); no OpenTelemetry needed."""
    parts = carrier.get("traceparent", "").split("-")
    if len(parts) < 4 or len(parts[1]) != 32 or len(parts[2]) != 16:
        return {}
    return {"trace_id": parts[1], "span_id": parts[2]}
