// Package tracing sets up agentengine's OpenTelemetry traces: a tracer provider
// configured by the standard OTEL_* environment variables (OTLP over HTTP or gRPC), W3C
// Trace Context propagation, and the recent traces kept in memory (Recent) so that a
// developer sees them with no collector.
//
// A nil *Tracing is tracing off: its tracer is OpenTelemetry's no-op one, which records
// nothing and allocates nothing per span.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of agentengine's own spans.
const ScopeName = "github.com/agentengine/agentengine"

// Config configures tracing.
type Config struct {
	// Getenv reads the OTEL_* variables (os.Getenv).
	Getenv func(string) string
	// Version is agentengine's version (service.version).
	Version string
	// Recent, when set, receives every finished span (the traces kept in memory).
	Recent *Recent
}

// Tracing is a configured tracer provider.
type Tracing struct {
	tp       *recorder
	tracer   trace.Tracer
	exporter string // "otlp (http/protobuf)", "otlp (grpc)" or "" (none)
	recent   *Recent
	// kept makes spans that only recent keeps (tracer itself when nothing is exported).
	kept trace.Tracer
}

// New builds the tracer provider. An OTLP exporter is set up when OTEL_TRACES_EXPORTER
// is "otlp", or unset while an OTLP endpoint is configured
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); the exporters
// read the endpoint, headers and timeouts from the environment (an http or https
// endpoint without custom certificates gets our own OTLP/HTTP exporter, which encodes
// the spans directly; anything else otlptracehttp). The protocol
// is OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf"
// (the default) or "grpc". OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the
// resource; OTEL_TRACES_SAMPLER(_ARG) choose the sampler (one of the SDK's) and the
// OTEL_*_LIMIT variables the span limits, as for the SDK's provider; the OTEL_BSP_*
// variables configure the batching of exports (batcher). Spans are recorded by
// recorder, a lighter implementation of the trace API than the SDK's provider.
func New(ctx context.Context, cfg Config) (*Tracing, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("agentengine"), semconv.ServiceVersion(cfg.Version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES win
		resource.WithTelemetrySDK(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	t := &Tracing{recent: cfg.Recent}
	exp, name, err := exporter(ctx, getenv)
	if err != nil {
		return nil, err
	}
	t.tp = &recorder{res: res, sampler: samplerFromEnv(getenv), limits: limitsFromEnv(getenv), keep: cfg.Recent, clock: newClock()}
	if exp != nil {
		t.tp.export = newBatcher(exp, getenv)
		t.exporter = name
	}
	t.tracer = t.tp.Tracer(ScopeName, trace.WithInstrumentationVersion(cfg.Version))
	switch {
	case cfg.Recent == nil:
	case exp == nil:
		t.kept = t.tracer
	default:
		// The same recorder without the export: these spans are only kept.
		kept := *t.tp
		kept.export = nil
		t.kept = kept.Tracer(ScopeName, trace.WithInstrumentationVersion(cfg.Version))
	}
	return t, nil
}

func exporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, string, error) {
	kind := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	switch kind {
	case "none":
		return nil, "", nil
	case "":
		if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return nil, "", nil
		}
	case "otlp":
	default:
		return nil, "", fmt.Errorf("tracing: OTEL_TRACES_EXPORTER=%q is not supported: use otlp or none", kind)
	}
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch proto {
	case "", "http/protobuf":
		if e, ok := httpExporterConfig(getenv); ok {
			return e, "otlp (http/protobuf)", nil
		}
		e, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("tracing: OTLP HTTP exporter: %w", err)
		}
		return e, "otlp (http/protobuf)", nil
	case "grpc":
		e, err := otlptracegrpc.New(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("tracing: OTLP gRPC exporter: %w", err)
		}
		return e, "otlp (grpc)", nil
	}
	return nil, "", fmt.Errorf("tracing: OTLP protocol %q is not supported: use http/protobuf or grpc", proto)
}

// Exporter describes where spans go besides memory ("" when nowhere).
func (t *Tracing) Exporter() string {
	if t == nil {
		return ""
	}
	return t.exporter
}

// Tracer is agentengine's tracer (the no-op one when t is nil).
func (t *Tracing) Tracer() trace.Tracer {
	if t == nil {
		return noop.NewTracerProvider().Tracer(ScopeName)
	}
	return t.tracer
}

// KeptTracer makes spans that are kept in memory but not exported (nil when t is nil
// or keeps none): spans standing in, in the kept traces, for spans a runner exports
// itself.
func (t *Tracing) KeptTracer() trace.Tracer {
	if t == nil || t.kept == nil {
		return nil
	}
	return t.kept
}

// Recent is the store of recent traces (nil when t is nil or keeps none).
func (t *Tracing) Recent() *Recent {
	if t == nil {
		return nil
	}
	return t.recent
}

// Propagator is W3C Trace Context with baggage: a client's traceparent and tracestate
// are honoured, and the runner gets the turn's context the same way.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// Inject returns ctx's trace context as W3C headers ("traceparent", "tracestate"), or
// nil when ctx carries no sampled span: an untraced turn sends the runner nothing.
func Inject(ctx context.Context) map[string]string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() {
		return nil
	}
	m := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, m)
	return m
}

// Extract returns ctx with the remote span context of carrier (W3C headers), if any.
func Extract(ctx context.Context, carrier map[string]string) context.Context {
	if len(carrier) == 0 {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier(carrier))
}

// Shutdown flushes the exporter and stops the provider.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.tp.shutdown(ctx); err != nil {
		return fmt.Errorf("tracing: shutdown: %w", err)
	}
	return nil
}

// Middleware starts each HTTP request's server span (HTTP semantic conventions),
// joining a client's traceparent; nil when t is nil.
func (t *Tracing) Middleware() gin.HandlerFunc {
	if t == nil {
		return nil
	}
	return serverMiddleware(t.tracer, Propagator())
}
