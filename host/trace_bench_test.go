package host_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
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
// tracing off, with the recent traces kept by the SDK's provider, by agentengine's
// recorder (what `agentengine run` uses), and by the recorder with an OTLP/HTTP export
// to a local sink that discards it.
func BenchmarkTurnTracing(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(sink.Close)
	recorder := func(env map[string]string) func() trace.Tracer {
		return func() trace.Tracer {
			tr, err := tracing.New(context.Background(), tracing.Config{Getenv: func(k string) string { return env[k] }, Recent: tracing.NewRecent(0, 0)})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
			return tr.Tracer()
		}
	}
	for _, bc := range []struct {
		name   string
		tracer func() trace.Tracer
	}{
		{"off", func() trace.Tracer { return nil }},
		{"sdk-kept", func() trace.Tracer {
			return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracing.NewRecent(0, 0))).Tracer("b")
		}},
		{"sdk-kept+export", func() trace.Tracer {
			return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracing.NewRecent(0, 0)), sdktrace.WithBatcher(discard{})).Tracer("b")
		}},
		{"kept", recorder(nil)},
		{"kept+otlp", recorder(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": sink.URL})},
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
