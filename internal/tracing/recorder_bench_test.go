package tracing

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentengine/agentengine/internal/spanrec"
)

// Options and attributes made once, as the host and the HTTP middleware make them.
var (
	serverKind = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
	internal   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	client     = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
	storeAttrs = []attribute.KeyValue{semconv.DBSystemNameKey.String("memory"), semconv.DBOperationName("start_run")}
	turnAttrs  = []attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName("echo"),
		attribute.String("agentengine.surface", "responses"), semconv.GenAIConversationID("0123456789abcdef"),
		attribute.String("agentengine.run.id", "run-0123456789"), attribute.String("agentengine.run.status", "completed"),
		semconv.GenAIUsageInputTokens(12), semconv.GenAIUsageOutputTokens(34)}
	storeSource = spanrec.Fixed(storeAttrs)
	storeNames  = []string{"store start_run", "runner.run echo", "store finish_run"}
)

// turnSpans makes the five spans of an echo turn as the host and the HTTP middleware
// make them (a server span, invoke_agent, two store writes as leaves and the runner
// call), with their attributes, set as sources as they set them.
func turnSpans(tr trace.Tracer) {
	ctx, srv := tr.Start(context.Background(), "POST /v1/responses", serverKind...)
	ctx, turn := tr.Start(ctx, "invoke_agent echo", internal...)
	for _, n := range storeNames {
		if n == "runner.run echo" {
			_, s := tr.Start(ctx, n, client...)
			s.End()
			continue
		}
		began := time.Now()
		spanrec.RecordLeaf(tr, turn, spanrec.Leaf{Name: n, Kind: trace.SpanKindClient, Attributes: storeSource, Start: began, End: time.Now()})
	}
	spanrec.SetAttributes(turn, spanrec.Fixed(append(make([]attribute.KeyValue, 0, len(turnAttrs)), turnAttrs...)))
	turn.End()
	spanrec.SetAttributes(srv, &serverAttrs{method: "POST", scheme: "http", path: "/v1/responses", route: "/v1/responses",
		status: 200, proto: "1.1", client: "127.0.0.1", userAgent: "Go-http-client/1.1"})
	srv.End()
}

// BenchmarkTurnSpans is the span work of one echo turn, the traces kept in memory: the
// SDK's provider against the recorder.
func BenchmarkTurnSpans(b *testing.B) {
	for _, bc := range []struct {
		name   string
		tracer func() trace.Tracer
	}{
		{"sdk", func() trace.Tracer {
			return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(NewRecent(0, 0))).Tracer(ScopeName)
		}},
		{"recorder", func() trace.Tracer {
			return keptRecorder().Tracer(ScopeName)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tr := bc.tracer()
			b.ReportAllocs()
			for b.Loop() {
				turnSpans(tr)
			}
		})
	}
}

// keptRecorder is a recorder as agentengine runs it with no exporter and no OTEL_*
// variables set: the recent traces kept.
func keptRecorder() *recorder {
	return &recorder{limits: limitsFromEnv(func(string) string { return "" }), keep: NewRecent(0, 0), clock: newClock()}
}
