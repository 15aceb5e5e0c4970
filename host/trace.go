package host

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
)

// Span attributes of agentengine's own that the GenAI conventions lack.
const (
	attrRunID   = "agentengine.run.id"
	attrSurface = "agentengine.surface"
	attrStatus  = "agentengine.run.status"
)

// untracedEnd ends the store span of an untraced turn: there is none.
func untracedEnd(error) {}

// startTurnSpan starts a turn's invoke_agent span under ctx's span (the HTTP request's).
// With tracing off (no tracer configured) it is a no-op span, and the turn's other span
// helpers do nothing either: an untraced turn allocates nothing for its spans.
func (rt *Runtime) startTurnSpan(ctx context.Context, agent, surface string) (context.Context, trace.Span) {
	if !rt.traced {
		return ctx, noop.Span{}
	}
	ctx, span := rt.tracer.Start(ctx, "invoke_agent "+agent, rt.internalSpan...)
	if span.IsRecording() {
		// One call: each one costs the span a lock and may regrow its attributes.
		if surface != "" {
			span.SetAttributes(semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(agent), attribute.String(attrSurface, surface))
		} else {
			span.SetAttributes(semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(agent))
		}
	}
	return ctx, span
}

// storeSpan times a store write of the turn as a child span.
func (rt *Runtime) storeSpan(ctx context.Context, op string) func(error) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return untracedEnd
	}
	_, span := rt.tracer.Start(ctx, storeSpanName(op), rt.clientSpan...)
	return func(err error) {
		// The attributes go with the end, in one call (no start option to allocate).
		span.SetAttributes(semconv.DBSystemNameKey.String(rt.storeBackend), semconv.DBOperationName(op))
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// storeSpanName is the span name of a store write: constants for the turn's own writes
// (no string to build every turn).
func storeSpanName(op string) string {
	switch op {
	case "start_run":
		return "store start_run"
	case "append":
		return "store append"
	case "finish_run":
		return "store finish_run"
	}
	return "store " + op
}

// runnerSpan starts the runner call's span and hands its context to the runner in the
// run request (W3C Trace Context): the runner's own spans join the turn's trace.
func (rt *Runtime) runnerSpan(ctx context.Context, agent string, rr *runnerv1.RunRequest) (context.Context, trace.Span) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, noop.Span{}
	}
	ctx, span := rt.tracer.Start(ctx, "runner.run "+agent, rt.clientSpan...)
	if sc := span.SpanContext(); sc.IsValid() && sc.IsSampled() {
		carrier := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(ctx, carrier)
		rr.TraceContext = carrier
	}
	return ctx, span
}

// toolSpan records a tool call the runner reported, from its call to its result, as the
// host saw them: runners that make no spans of their own still show their tools.
// With content capture on, it carries the call's arguments and result. A call the
// runner traced itself (runnerTraced) gets a span only in the kept traces, when a kept
// tracer is configured: the exported trace has the runner's.
func (ts *turnState) toolSpan(callID, name string, start, end time.Time, isError bool, result string, runnerTraced bool) {
	if !ts.span.IsRecording() {
		return
	}
	tracer := ts.rt.tracer
	if runnerTraced {
		if tracer = ts.rt.keptTracer; tracer == nil {
			delete(ts.toolArgs, callID)
			return
		}
	}
	ctx := trace.ContextWithSpan(context.Background(), ts.span)
	_, span := tracer.Start(ctx, "execute_tool "+name, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(name), semconv.GenAIToolCallID(callID)))
	if ts.rt.traceContent {
		span.SetAttributes(semconv.GenAIToolCallArgumentsKey.String(ts.toolArgs[callID]), semconv.GenAIToolCallResultKey.String(result))
		delete(ts.toolArgs, callID)
	}
	if isError {
		span.SetStatus(codes.Error, "the tool reported an error")
	}
	span.End(trace.WithTimestamp(end))
}

// modelSpanAttr notes the model a usage report came from, for the turn's span.
func (ts *turnState) modelSpanAttr(model string) {
	if model != "" {
		ts.spanModel = model
	}
}

// approvalEvent marks on the turn's span that it stops to wait for an approval (the wait
// itself spans turns: the answer comes with a later one).
func (ts *turnState) approvalEvent(approvalID, tool, callID string) {
	if ts.span.IsRecording() {
		ts.span.AddEvent("approval_request", trace.WithAttributes(attribute.String("agentengine.approval.id", approvalID),
			semconv.GenAIToolName(tool), semconv.GenAIToolCallID(callID)))
	}
}

// endTurnSpan ends the invoke_agent span with the turn's session, run, user (when
// configured) and model, and the run's outcome and usage, set in one call.
func (ts *turnState) endTurnSpan(data session.RunStatusData) {
	span := ts.span
	if span.IsRecording() {
		pooled, _ := ts.rt.spanAttrs.Get().(*[]attribute.KeyValue)
		if pooled == nil {
			pooled = new([]attribute.KeyValue)
		}
		attrs := append((*pooled)[:0], semconv.GenAIConversationID(ts.r.Key.ID), attribute.String(attrRunID, ts.r.InvocationID),
			attribute.String(attrStatus, data.Status))
		if ts.rt.traceUsers {
			attrs = append(attrs, semconv.EnduserID(ts.r.Key.User))
		}
		if ts.spanModel != "" {
			attrs = append(attrs, semconv.GenAIResponseModel(ts.spanModel))
		}
		if u := data.Usage; u != nil {
			attrs = append(attrs, semconv.GenAIUsageInputTokens(int(u.InputTokens)), semconv.GenAIUsageOutputTokens(int(u.OutputTokens)))
		}
		if data.Error != nil {
			span.SetStatus(codes.Error, data.Error.Code)
			attrs = append(attrs, semconv.ErrorTypeKey.String(data.Error.Code))
		}
		span.SetAttributes(attrs...)
		clear(attrs) // the pool keeps no turn's strings
		*pooled = attrs[:0]
		ts.rt.spanAttrs.Put(pooled)
	}
	span.End()
}
