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
	allocs := testing.AllocsPerRun(100, func() { untracedTurn(rt, rr) })
	if allocs != 0 {
		t.Errorf("an untraced turn's spans allocate %v times", allocs)
	}
	if rr.TraceContext != nil {
		t.Errorf("trace context %v sent untraced", rr.TraceContext)
	}
}

func untracedTurn(rt *Runtime, rr *runnerv1.RunRequest) {
	ctx, span := rt.startTurnSpan(context.Background(), "echo", "responses")
	rt.identifyTurn(span, session.Key{ID: "s"}, "run_1")
	rt.storeSpan(ctx, "start_run")(nil)
	_, rs := rt.runnerSpan(ctx, "echo", rr)
	rs.End()
	endTurnSpan(span, session.RunStatusData{Status: session.StatusCompleted})
}

// BenchmarkUntracedSpans is the per-turn cost of the span calls with tracing off.
func BenchmarkUntracedSpans(b *testing.B) {
	rt := &Runtime{tracer: noop.NewTracerProvider().Tracer(""), storeBackend: "memory"}
	rr := &runnerv1.RunRequest{}
	b.ReportAllocs()
	for b.Loop() {
		untracedTurn(rt, rr)
	}
}
