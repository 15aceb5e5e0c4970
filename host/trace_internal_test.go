package host

import (
	"context"
	"testing"

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
	ctx, span := rt.startTurnSpan(context.Background(), "echo", "responses")
	rt.storeSpan(ctx, "start_run")(nil)
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
