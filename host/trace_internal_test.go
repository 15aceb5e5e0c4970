package host

import (
	"context"
	"maps"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
)

// With tracing off, what a turn does for its spans allocates nothing and sends the runner
// no trace context.
func TestUntracedSpansCostNothing(t *testing.T) {
	rt := &Runtime{tracer: noop.NewTracerProvider().Tracer(""), storeBackend: "memory"}
	rr := &runnerv1.RunRequest{}
	run := &Run{Key: session.Key{ID: "s"}, InvocationID: "run_1"}
	allocs := testing.AllocsPerRun(100, func() { untracedTurn(rt, rr, run) })
	if allocs != 0 {
		t.Errorf("an untraced turn's spans allocate %v times", allocs)
	}
	if rr.TraceContext != nil {
		t.Errorf("trace context %v sent untraced", rr.TraceContext)
	}
}

// untracedTurn makes a turn's spans; run is made by the caller (its allocation is not
// the spans').
func untracedTurn(rt *Runtime, rr *runnerv1.RunRequest, run *Run) {
	ctx, span := rt.startTurnSpan(context.Background(), "echo")
	rt.storeWrite(ctx, "start_run").end(nil)
	_, rs := rt.runnerSpan(ctx, "echo", rr)
	rs.End()
	ts := turnState{rt: rt, r: run, span: span}
	ts.modelSpanAttr("echo")
	ts.endTurnSpan(session.RunStatusData{Status: session.StatusCompleted})
}

// BenchmarkUntracedSpans is the per-turn cost of the span calls with tracing off.
func BenchmarkUntracedSpans(b *testing.B) {
	rt := &Runtime{tracer: noop.NewTracerProvider().Tracer(""), storeBackend: "memory"}
	rr := &runnerv1.RunRequest{}
	run := &Run{Key: session.Key{ID: "s"}, InvocationID: "run_1"}
	b.ReportAllocs()
	for b.Loop() {
		untracedTurn(rt, rr, run)
	}
}

// The trace context a runner gets is what OpenTelemetry's W3C propagator injects.
func TestTraceContextIsW3C(t *testing.T) {
	state, err := trace.ParseTraceState("vendor=opaque,other=1")
	if err != nil {
		t.Fatal(err)
	}
	tid := trace.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c}
	sid := trace.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x01}
	for _, cfg := range []trace.SpanContextConfig{
		{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled},
		{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled | 0x02, TraceState: state},
		{TraceID: tid, SpanID: sid},
		{TraceID: trace.TraceID{0xff, 1: 0x0f, 15: 0x01}, SpanID: trace.SpanID{7: 0xf0}, TraceFlags: trace.FlagsSampled, Remote: true},
	} {
		sc := trace.NewSpanContext(cfg)
		want := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), want)
		if got := traceContext(sc); !maps.Equal(got, map[string]string(want)) {
			t.Errorf("traceContext(%v) = %v, want %v", cfg, got, want)
		}
	}
}
