package host_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/internal/tracing"
	"github.com/agentengine/agentengine/session/memory"
)

// discard is a span exporter that drops what it gets: the cost of making and batching
// spans without a network.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkTurnTracing is a whole turn (the echo agent, in process, memory store) with
// tracing off, with the recent traces only, and with the recent traces and an exporter.
func BenchmarkTurnTracing(b *testing.B) {
	for _, bc := range []struct {
		name   string
		tracer func() trace.Tracer
	}{
		{"off", func() trace.Tracer { return nil }},
		{"recent", func() trace.Tracer {
			return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracing.NewRecent(0, 0))).Tracer("b")
		}},
		{"recent+export", func() trace.Tracer {
			return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracing.NewRecent(0, 0)), sdktrace.WithBatcher(discard{})).Tracer("b")
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			rt := startRuntime(b, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "echo", Runner: serve(b, echoagent.New())}},
				Tracer: bc.tracer()})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				r, err := rt.Start(ctx, host.TurnRequest{App: "echo", Input: text("use the tool on paris")})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.Wait(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
