package host

import (
	"context"
	"encoding/hex"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agentengine/agentengine/internal/spanrec"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
)

// Span attributes of agentengine's own that the GenAI conventions lack.
const (
	attrRunID   = "agentengine.run.id"
	attrSurface = "agentengine.surface"
	attrStatus  = "agentengine.run.status"
)

// agentSpanNames are an agent's span names, made once (not a string built every turn).
type agentSpanNames struct{ turn, runner string }

func newAgentSpanNames(agent string) agentSpanNames {
	return agentSpanNames{turn: "invoke_agent " + agent, runner: "runner.run " + agent}
}

// spanNames returns agent's span names.
func (rt *Runtime) spanNames(agent string) agentSpanNames {
	if n, ok := rt.agentSpans[agent]; ok {
		return n
	}
	return newAgentSpanNames(agent)
}

// startTurnSpan starts a turn's invoke_agent span under ctx's span (the HTTP request's).
// With tracing off (no tracer configured) it is a no-op span, and the turn's other span
// helpers do nothing either: an untraced turn allocates nothing for its spans. Its
// attributes are set when it ends, all in one call (endTurnSpan, or failedTurnSpan
// for a turn that never started): each call costs the span a lock and may regrow its
// attributes, and nothing reads a span's attributes before its end.
func (rt *Runtime) startTurnSpan(ctx context.Context, agent string) (context.Context, trace.Span) {
	if !rt.traced {
		return ctx, noop.Span{}
	}
	return rt.tracer.Start(ctx, rt.spanNames(agent).turn, rt.internalSpan...)
}

// turnSpanAttrs appends the attributes naming a turn's agent and surface.
func turnSpanAttrs(attrs []attribute.KeyValue, agent, surface string) []attribute.KeyValue {
	attrs = append(attrs, semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(agent))
	if surface != "" {
		attrs = append(attrs, attribute.String(attrSurface, surface))
	}
	return attrs
}

// failedTurnSpan ends the span of a turn that failed to start.
func (rt *Runtime) failedTurnSpan(span trace.Span, agent, surface string, err error) {
	if span.IsRecording() {
		span.SetAttributes(turnSpanAttrs(make([]attribute.KeyValue, 0, 3), agent, surface)...)
		if err != nil {
			span.SetStatus(codes.Error, ClientMessage(err))
		}
	}
	span.End()
}

// storeOp is the span name and attributes of a store write's span, made once for each
// of the turn's own writes (no string or slice to build every turn, and none for the
// span to copy: it keeps the source).
type storeOp struct {
	name  string
	attrs spanrec.Source
}

func newStoreOp(backend, op string) storeOp {
	return storeOp{name: "store " + op, attrs: spanrec.Fixed{semconv.DBSystemNameKey.String(backend), semconv.DBOperationName(op)}}
}

// storeOps makes the spans' names and attributes of the turn's own store writes.
func storeOps(backend string) map[string]storeOp {
	m := map[string]storeOp{}
	for _, op := range []string{"start_run", "append", "finish_run"} {
		m[op] = newStoreOp(backend, op)
	}
	return m
}

// storeWrite times a store write of the turn: for the store-write metric, and as a
// child span of the turn when it is traced (a leaf recorded on the turn's span, where
// the tracer can: nothing runs under a store write).
type storeWrite struct {
	rt     *Runtime
	began  time.Time
	parent trace.Span // the turn's span; nil when untraced
	op     storeOp
}

// childStarter is a tracer that starts a span under a given parent without making a
// context for it (agentengine's own tracer provider is one): for the turn's spans that
// nothing runs under.
type childStarter interface {
	StartChild(parent trace.Span, name string, opts ...trace.SpanStartOption) trace.Span
}

// startLeaf starts a span under parent, a span nothing will run under (its context is
// not made when the tracer can skip it).
func startLeaf(tracer trace.Tracer, parent trace.Span, name string, opts ...trace.SpanStartOption) trace.Span {
	if cs, ok := tracer.(childStarter); ok {
		return cs.StartChild(parent, name, opts...)
	}
	_, span := tracer.Start(trace.ContextWithSpan(context.Background(), parent), name, opts...)
	return span
}

// storeWrite starts timing the store write op.
func (rt *Runtime) storeWrite(ctx context.Context, op string) storeWrite {
	w := storeWrite{rt: rt, began: time.Now()}
	if parent := trace.SpanFromContext(ctx); parent.IsRecording() {
		so, ok := rt.storeOps[op]
		if !ok {
			so = newStoreOp(rt.storeBackend, op)
		}
		w.parent, w.op = parent, so
	}
	return w
}

// end records the write's duration and its span, failed when err is set, with the
// attributes from a source made once per operation.
func (w storeWrite) end(err error) {
	now := time.Now()
	w.rt.metrics.StoreWrite(w.rt.storeBackend, now.Sub(w.began))
	if w.parent == nil {
		return
	}
	l := spanrec.Leaf{Name: w.op.name, Kind: trace.SpanKindClient, Attributes: w.op.attrs, Start: w.began, End: now}
	if err != nil {
		l.Error = err.Error()
	}
	spanrec.RecordLeaf(w.rt.tracer, w.parent, l)
}

// runnerSpan starts the runner call's span and hands its context to the runner in the
// run request (W3C Trace Context): the runner's own spans join the turn's trace.
func (rt *Runtime) runnerSpan(ctx context.Context, agent string, rr *runnerv1.RunRequest) (context.Context, trace.Span) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, noop.Span{}
	}
	ctx, span := rt.tracer.Start(ctx, rt.spanNames(agent).runner, rt.clientSpan...)
	if sc := span.SpanContext(); sc.IsValid() && sc.IsSampled() {
		rr.TraceContext = traceContext(sc)
	}
	return ctx, span
}

// traceContext is sc as W3C Trace Context headers, as propagation.TraceContext
// injects them ("traceparent" with the sampled and random flags, "tracestate" when there is one),
// written in one string.
func traceContext(sc trace.SpanContext) map[string]string {
	var b [55]byte // 00-<32 hex>-<16 hex>-<2 hex>
	tid, sid := sc.TraceID(), sc.SpanID()
	flags := [1]byte{byte(sc.TraceFlags() & (trace.FlagsSampled | trace.FlagsRandom))}
	copy(b[:], "00-")
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	hex.Encode(b[53:55], flags[:])
	m := map[string]string{"traceparent": string(b[:])}
	if ts := sc.TraceState().String(); ts != "" {
		m["tracestate"] = ts
	}
	return m
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
	span := startLeaf(tracer, ts.span, "execute_tool "+name, trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal),
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
// configured) and model, and the run's outcome and usage, set in one call as a source:
// the span keeps these few strings rather than a key-value each.
func (ts *turnState) endTurnSpan(data session.RunStatusData) {
	span := ts.span
	if span.IsRecording() {
		a := &turnAttrs{agent: ts.ag.Name, surface: ts.r.surface, session: ts.r.Key.ID, run: ts.r.InvocationID,
			status: data.Status, model: ts.spanModel}
		if ts.rt.traceUsers {
			a.user, a.withUser = ts.r.Key.User, true
		}
		if u := data.Usage; u != nil {
			a.inputTokens, a.outputTokens, a.withUsage = u.InputTokens, u.OutputTokens, true
		}
		if data.Error != nil {
			span.SetStatus(codes.Error, data.Error.Code)
			a.errorType = data.Error.Code
		}
		spanrec.SetAttributes(span, a)
	}
	span.End()
}

// turnAttrs are an invoke_agent span's attributes at the turn's end.
type turnAttrs struct {
	agent, surface, session, run, status, user, model, errorType string
	inputTokens, outputTokens                                    int64
	withUser, withUsage                                          bool
}

// AppendAttributes implements spanrec.Source.
func (a *turnAttrs) AppendAttributes(dst []attribute.KeyValue) []attribute.KeyValue {
	dst = append(turnSpanAttrs(dst, a.agent, a.surface), semconv.GenAIConversationID(a.session),
		attribute.String(attrRunID, a.run), attribute.String(attrStatus, a.status))
	if a.withUser {
		dst = append(dst, semconv.EnduserID(a.user))
	}
	if a.model != "" {
		dst = append(dst, semconv.GenAIResponseModel(a.model))
	}
	if a.withUsage {
		dst = append(dst, semconv.GenAIUsageInputTokens(int(a.inputTokens)), semconv.GenAIUsageOutputTokens(int(a.outputTokens)))
	}
	if a.errorType != "" {
		dst = append(dst, semconv.ErrorTypeKey.String(a.errorType))
	}
	return dst
}
