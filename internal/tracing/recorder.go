package tracing

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"

	"github.com/agentengine/agentengine/internal/spanrec"
)

// recorder is agentengine's tracer provider. It implements the OpenTelemetry trace API
// as the SDK's provider does (the same IDs, sampling by the SDK's own samplers from
// OTEL_TRACES_SAMPLER, the same span limits, status and event rules) but records a
// span in one small struct that is itself what the kept traces and the exporters read:
// the SDK's provider records each span twice (a recordingSpan, then a read-only
// snapshot at its end) with a map to deduplicate its attributes, which on an echo turn
// was most of what tracing cost (five spans a turn). Spans go to the kept traces
// (keep) and to the export batcher (export), either of which may be nil.
type recorder struct {
	embedded.TracerProvider

	res     *resource.Resource
	sampler sdktrace.Sampler // nil: parent-based always-on, decided inline
	limits  spanLimits
	keep    *Recent
	export  *batcher
	clock   *clock // nil: time.Now
}

// clock reads the time for span timestamps from the monotonic clock alone, as an
// offset from a wall-clock reading taken at most a second before: time.Now reads two
// clocks, and a turn's spans read the time ten times. (The SDK times a span's end the
// same way, from its start.)
type clock struct{ base atomic.Pointer[time.Time] }

func newClock() *clock {
	c := &clock{}
	now := time.Now()
	c.base.Store(&now)
	return c
}

func (c *clock) now() time.Time {
	base := c.base.Load()
	if d := time.Since(*base); d >= 0 && d < time.Second {
		return base.Add(d)
	}
	now := time.Now()
	c.base.Store(&now)
	return now
}

// now is the time for a span's start or end.
func (p *recorder) now() time.Time {
	if p.clock == nil {
		return time.Now()
	}
	return p.clock.now()
}

// spanLimits are the SDK's span limits, read from the same variables.
type spanLimits struct {
	attrs, events, links, eventAttrs, linkAttrs int // count limits (< 0: none)
	valueLen                                    int // attribute value length limit (< 0: none)
}

// keepSources reports whether the limits leave a source's attributes as they are (no
// value length limit, a count limit of at least spanrec.MaxSource): only then may a
// span keep a source, or a leaf, instead of setting its attributes now.
func (l spanLimits) keepSources() bool {
	return l.valueLen < 0 && (l.attrs < 0 || l.attrs >= spanrec.MaxSource)
}

func limitsFromEnv(getenv func(string) string) spanLimits {
	num := func(def int, keys ...string) int { return envInt(getenv, def, keys...) }
	return spanLimits{
		attrs:      num(128, "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "OTEL_ATTRIBUTE_COUNT_LIMIT"),
		events:     num(128, "OTEL_SPAN_EVENT_COUNT_LIMIT"),
		links:      num(128, "OTEL_SPAN_LINK_COUNT_LIMIT"),
		eventAttrs: num(128, "OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT"),
		linkAttrs:  num(128, "OTEL_LINK_ATTRIBUTE_COUNT_LIMIT"),
		valueLen:   num(-1, "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT"),
	}
}

// envInt reads the first of keys that is set as a number (def when none is, and when
// it is not a number, which is reported).
func envInt(getenv func(string) string, def int, keys ...string) int {
	for _, k := range keys {
		v := strings.TrimSpace(getenv(k))
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			otel.Handle(fmt.Errorf("tracing: %s=%q is not a number: using %d", k, v, def))
			return def
		}
		return n
	}
	return def
}

// samplerFromEnv is the sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name,
// built from the SDK's samplers; nil for the default (parentbased_always_on), which
// the recorder decides inline. An unknown sampler or a bad argument is reported and
// falls back as the SDK's does.
func samplerFromEnv(getenv func(string) string) sdktrace.Sampler {
	name := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER")))
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	ratio := func() sdktrace.Sampler {
		if arg == "" {
			return sdktrace.TraceIDRatioBased(1)
		}
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil || v < 0 || v > 1 {
			otel.Handle(fmt.Errorf("tracing: OTEL_TRACES_SAMPLER_ARG=%q is not a ratio in [0, 1]: using 1", arg))
			v = 1
		}
		return sdktrace.TraceIDRatioBased(v)
	}
	switch name {
	case "", "parentbased_always_on":
		return nil
	case "always_on":
		return sdktrace.AlwaysSample()
	case "always_off":
		return sdktrace.NeverSample()
	case "traceidratio":
		return ratio()
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample())
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(ratio())
	}
	otel.Handle(fmt.Errorf("tracing: OTEL_TRACES_SAMPLER=%q is not supported: using parentbased_always_on", name))
	return nil
}

// Tracer returns a tracer of the instrumentation scope name.
func (p *recorder) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	c := trace.NewTracerConfig(opts...)
	if name == "" {
		name = defaultTracerName // as the SDK names a nameless tracer's scope
	}
	return &tracer{p: p, scope: instrumentation.Scope{
		Name: name, Version: c.InstrumentationVersion(), SchemaURL: c.SchemaURL(), Attributes: c.InstrumentationAttributes(),
	}}
}

// shutdown flushes and stops the export (the kept traces need no stopping).
func (p *recorder) shutdown(ctx context.Context) error {
	if p.export == nil {
		return nil
	}
	return p.export.Shutdown(ctx)
}

// defaultTracerName is the scope name the SDK gives a tracer asked for without one.
const defaultTracerName = "go.opentelemetry.io/otel/sdk/tracer"

type tracer struct {
	embedded.Tracer
	p     *recorder
	scope instrumentation.Scope
}

// Start starts a span under ctx's span (a new trace when there is none or the options
// ask for a new root).
func (t *tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if ctx == nil {
		ctx = context.Background()
	}
	s := t.start(ctx, true, trace.SpanFromContext(ctx), name, opts)
	return trace.ContextWithSpan(ctx, s), s
}

// StartChild starts a span under parent and makes no context for it: for a span
// nothing runs under (a store write's), whose context nobody would read. ctx's own span
// is not looked at.
func (t *tracer) StartChild(parent trace.Span, name string, opts ...trace.SpanStartOption) trace.Span {
	return t.start(context.Background(), false, parent, name, opts)
}

// start starts a span under parentSpan (a new trace when it has no valid context or the
// options ask for a new root). ctx, the context the span starts in, is read only by a
// configured sampler; inCtx says whether parentSpan is ctx's own span.
func (t *tracer) start(ctx context.Context, inCtx bool, parentSpan trace.Span, name string, opts []trace.SpanStartOption) trace.Span {
	cfg := trace.NewSpanStartConfig(opts...)
	var parent trace.SpanContext
	if !cfg.NewRoot() {
		parent = parentSpan.SpanContext()
	}
	kind := cfg.SpanKind()
	if kind == trace.SpanKindUnspecified {
		kind = trace.SpanKindInternal
	}
	scc := trace.SpanContextConfig{TraceID: parent.TraceID(), SpanID: newSpanID(), TraceFlags: parent.TraceFlags()}
	if !parent.TraceID().IsValid() {
		scc.TraceID = newTraceID()
	}
	var (
		recording    bool
		samplerAttrs []attribute.KeyValue
	)
	if t.p.sampler == nil {
		// parentbased_always_on: a new trace is sampled, a child follows its parent, and
		// an unsampled parent's child is dropped (not recorded).
		sampled := !parent.IsValid() || parent.IsSampled()
		scc.TraceFlags = scc.TraceFlags.WithSampled(sampled)
		scc.TraceState = parent.TraceState()
		recording = sampled
	} else {
		pctx := ctx
		switch {
		case cfg.NewRoot():
			pctx = trace.ContextWithSpanContext(ctx, trace.SpanContext{})
		case !inCtx:
			pctx = trace.ContextWithSpan(ctx, parentSpan)
		}
		res := t.p.sampler.ShouldSample(sdktrace.SamplingParameters{
			ParentContext: pctx, TraceID: scc.TraceID, Name: name, Kind: kind, Attributes: cfg.Attributes(), Links: cfg.Links(),
		})
		scc.TraceFlags = scc.TraceFlags.WithSampled(res.Decision == sdktrace.RecordAndSample)
		scc.TraceState = res.Tracestate
		recording = res.Decision != sdktrace.Drop
		samplerAttrs = res.Attributes
	}
	sc := trace.NewSpanContext(scc)
	if !recording {
		return &unrecorded{sc: sc, p: t.p}
	}
	s := &span{t: t, sc: sc, parentID: parent.SpanID(), parentFlags: parent.TraceFlags(), parentRemote: parent.IsRemote(),
		name: name, kind: uint8(kind), start: cfg.Timestamp()}
	if s.start.IsZero() {
		s.start = t.p.now()
	}
	if attrs := cfg.Attributes(); len(attrs)+len(samplerAttrs) > 0 {
		s.setAttributes(attrs)
		s.setAttributes(samplerAttrs)
	}
	for _, l := range cfg.Links() {
		s.addLink(l)
	}
	s.recording.Store(true)
	return s
}

// newTraceID and newSpanID draw random non-zero IDs, as the SDK's default generator does.
func newTraceID() trace.TraceID {
	for {
		var id trace.TraceID
		hi, lo := rand.Uint64(), rand.Uint64()
		for i := range 8 {
			id[i], id[8+i] = byte(hi>>(56-8*i)), byte(lo>>(56-8*i))
		}
		if id.IsValid() {
			return id
		}
	}
}

func newSpanID() trace.SpanID {
	for {
		var id trace.SpanID
		v := rand.Uint64()
		for i := range 8 {
			id[i] = byte(v >> (56 - 8*i))
		}
		if id.IsValid() {
			return id
		}
	}
}

// unrecorded is a span the sampler dropped: it carries its context (so that children
// and the runner see the decision) and records nothing.
type unrecorded struct {
	embedded.Span
	sc trace.SpanContext
	p  *recorder
}

func (u *unrecorded) SpanContext() trace.SpanContext        { return u.sc }
func (*unrecorded) IsRecording() bool                       { return false }
func (*unrecorded) SetStatus(codes.Code, string)            {}
func (*unrecorded) SetName(string)                          {}
func (*unrecorded) SetAttributes(...attribute.KeyValue)     {}
func (*unrecorded) AddEvent(string, ...trace.EventOption)   {}
func (*unrecorded) AddLink(trace.Link)                      {}
func (*unrecorded) RecordError(error, ...trace.EventOption) {}
func (*unrecorded) End(...trace.SpanEndOption)              {}
func (u *unrecorded) TracerProvider() trace.TracerProvider  { return u.p }
