package tracing

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agentengine/agentengine/internal/spanrec"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
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

// span is a recorded span. Until it ends, its methods lock mu; once ended it is never
// written again, so the kept traces and the exporters read it without locking (they
// get it only after its end, through their own locks). Its attributes are attrs, or
// src's until something else is set (see spanrec); its events and links, which a
// turn's spans seldom have, sit apart with its status (nil until one is set), which
// keeps a span in a smaller allocation.
type span struct {
	embedded.Span
	t *tracer

	mu           sync.Mutex
	sc           trace.SpanContext
	parentID     trace.SpanID // the parent's context is kept as what an ended span's readers use: IDs, flags, remote
	parentFlags  trace.TraceFlags
	parentRemote bool
	ended        bool
	kind         uint8       // a trace.SpanKind, in a byte: the span fits a smaller allocation
	recording    atomic.Bool // !ended, read without mu: IsRecording is asked often
	droppedAttrs int32
	name         string
	start, end   time.Time
	attrs        []attribute.KeyValue
	src          spanrec.Source
	leaves       []leaf // finished children recorded on the span (RecordLeaf)
	more         *spanExtras
}

// spanExtras are a span's events, links and status, which most spans never get.
type spanExtras struct {
	events                    []sdktrace.Event
	links                     []sdktrace.Link
	droppedEvts, droppedLinks int
	status                    sdktrace.Status
}

// extras returns s's events and links, made on first use (s.mu held or s unshared).
func (s *span) extras() *spanExtras {
	if s.more == nil {
		s.more = &spanExtras{}
	}
	return s.more
}

// SetAttributeSource sets src's attributes on the span (see spanrec): on a span with
// none yet, under limits that cannot cut them, it keeps src itself and reads it when
// the span is read.
func (s *span) SetAttributeSource(src spanrec.Source) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	if l := s.t.p.limits; s.src == nil && len(s.attrs) == 0 && l.valueLen < 0 && (l.attrs < 0 || l.attrs >= spanrec.MaxSource) {
		s.src = src
		return
	}
	s.setAttributes(src.AppendAttributes(nil))
}

// appendAttributes appends the span's attributes to dst (read once the span has
// ended: a source's are made here, into dst).
func (s *span) appendAttributes(dst []attribute.KeyValue) []attribute.KeyValue {
	if s.src != nil {
		return s.src.AppendAttributes(dst)
	}
	return append(dst, s.attrs...)
}

// appendAttrs appends an ended span's attributes to dst.
func appendAttrs(dst []attribute.KeyValue, s endedSpan) []attribute.KeyValue {
	switch s := s.(type) {
	case *span:
		return s.appendAttributes(dst)
	case *leaf:
		if s.l.Attributes != nil {
			return s.l.Attributes.AppendAttributes(dst)
		}
		return dst
	}
	return append(dst, s.Attributes()...)
}

func (s *span) SpanContext() trace.SpanContext { return s.sc }

func (s *span) IsRecording() bool { return s.recording.Load() }

func (s *span) SetStatus(code codes.Code, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Ok is final and an Error cannot replace it; Unset changes nothing (the SDK's rule).
	if s.ended || s.Status().Code > code {
		return
	}
	st := sdktrace.Status{Code: code}
	if code == codes.Error {
		st.Description = description
	}
	s.extras().status = st
}

func (s *span) SetName(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.name = name
	}
}

func (s *span) SetAttributes(kv ...attribute.KeyValue) {
	if len(kv) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.setAttributes(kv)
	}
}

// setAttributes adds kv: a key already set takes the new value, a new key beyond the
// count limit is dropped (and counted), an invalid one too (s.mu held or s unshared).
func (s *span) setAttributes(kv []attribute.KeyValue) {
	if src := s.src; src != nil {
		// Something more is set: the source's attributes become the span's own first.
		s.src = nil
		s.attrs = src.AppendAttributes(make([]attribute.KeyValue, 0, 2*len(kv)+8))
	}
	limits := s.t.p.limits
	if s.attrs == nil {
		n := len(kv)
		if limits.attrs >= 0 {
			n = min(n, limits.attrs)
		}
		s.attrs = make([]attribute.KeyValue, 0, n)
	}
	for _, a := range kv {
		if !a.Valid() {
			s.droppedAttrs++
			continue
		}
		if limits.valueLen >= 0 {
			a = truncate(a, limits.valueLen)
		}
		if replace(s.attrs, a) {
			continue
		}
		if limits.attrs >= 0 && len(s.attrs) >= limits.attrs {
			s.droppedAttrs++
			continue
		}
		s.attrs = append(s.attrs, a)
	}
}

// replace gives a's key a's value in attrs, reporting whether attrs had the key.
func replace(attrs []attribute.KeyValue, a attribute.KeyValue) bool {
	for i := range attrs {
		if attrs[i].Key == a.Key {
			attrs[i] = a
			return true
		}
	}
	return false
}

// dedupe copies attrs with each key once, where it first appears, with its last value
// (nil for none).
func dedupe(attrs []attribute.KeyValue) []attribute.KeyValue {
	if len(attrs) == 0 {
		return nil
	}
	out := make([]attribute.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		if !replace(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// limitAttrs keeps the first limit of an event's or link's attrs (all when limit < 0)
// and says how many it dropped.
func limitAttrs(attrs []attribute.KeyValue, limit int) ([]attribute.KeyValue, int) {
	if limit >= 0 && len(attrs) > limit {
		return attrs[:limit], len(attrs) - limit
	}
	return attrs, 0
}

// appendEvicting appends v to s, the oldest going first once s holds limit items (no
// limit when it is < 0); it says whether one went.
func appendEvicting[T any](s []T, v T, limit int) ([]T, bool) {
	evicted := false
	if limit > 0 && len(s) >= limit {
		copy(s, s[1:])
		s, evicted = s[:len(s)-1], true
	}
	return append(s, v), evicted
}

// truncate cuts a string value (or each string of a slice) to at most n characters.
func truncate(a attribute.KeyValue, n int) attribute.KeyValue {
	cut := func(v string) string {
		if len(v) <= n {
			return v
		}
		i, runes := 0, 0
		for i < len(v) && runes < n {
			_, size := utf8.DecodeRuneInString(v[i:])
			i += size
			runes++
		}
		return v[:i]
	}
	switch a.Value.Type() {
	case attribute.STRING:
		if v := a.Value.AsString(); len(v) > n {
			return a.Key.String(cut(v))
		}
	case attribute.STRINGSLICE:
		vs := a.Value.AsStringSlice()
		for i, v := range vs {
			vs[i] = cut(v)
		}
		return a.Key.StringSlice(vs)
	default: // other values have no length to limit here
	}
	return a
}

func (s *span) AddEvent(name string, opts ...trace.EventOption) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.addEvent(name, trace.NewEventConfig(opts...))
	}
}

// addEvent adds an event; beyond the count limit the oldest goes (s.mu held).
func (s *span) addEvent(name string, c trace.EventConfig) {
	limits := s.t.p.limits
	x := s.extras()
	if limits.events == 0 {
		x.droppedEvts++
		return
	}
	ev := sdktrace.Event{Name: name, Time: c.Timestamp()}
	ev.Attributes, ev.DroppedAttributeCount = limitAttrs(dedupe(c.Attributes()), limits.eventAttrs)
	var evicted bool
	if x.events, evicted = appendEvicting(x.events, ev, limits.events); evicted {
		x.droppedEvts++
	}
}

// RecordError adds an exception event for err (the SDK's attributes).
func (s *span) RecordError(err error, opts ...trace.EventOption) {
	if err == nil {
		return
	}
	opts = append(opts, trace.WithAttributes(semconv.ExceptionType(typeName(err)), semconv.ExceptionMessage(err.Error())))
	s.AddEvent(semconv.ExceptionEventName, opts...)
}

// typeName names v's type as the SDK's exception events do: the package path and the
// name, or the type's own string for an unnamed one (a pointer, say).
func typeName(v any) string {
	t := reflect.TypeOf(v)
	if t.PkgPath() == "" && t.Name() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

func (s *span) AddLink(l trace.Link) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.addLink(l)
	}
}

// addLink adds a link (one that carries nothing at all is ignored); beyond the count
// limit the oldest goes.
func (s *span) addLink(l trace.Link) {
	if !l.SpanContext.IsValid() && len(l.Attributes) == 0 && l.SpanContext.TraceState().Len() == 0 {
		return
	}
	limits := s.t.p.limits
	x := s.extras()
	if limits.links == 0 {
		x.droppedLinks++
		return
	}
	link := sdktrace.Link{SpanContext: l.SpanContext}
	link.Attributes, link.DroppedAttributeCount = limitAttrs(dedupe(l.Attributes), limits.linkAttrs)
	var evicted bool
	if x.links, evicted = appendEvicting(x.links, link, limits.links); evicted {
		x.droppedLinks++
	}
}

func (s *span) TracerProvider() trace.TracerProvider { return s.t.p }

// End ends the span and hands it to the kept traces and the export. Called while a
// panic unwinds (a deferred End), it records the panic as an exception event first
// and lets the panic go on, as the SDK does.
func (s *span) End(opts ...trace.SpanEndOption) {
	now := s.t.p.now()
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	if r := recover(); r != nil {
		defer panic(r)
		s.addEvent(semconv.ExceptionEventName, trace.NewEventConfig(trace.WithAttributes(
			semconv.ExceptionType(typeName(r)), semconv.ExceptionMessage(fmt.Sprint(r)))))
	}
	s.end = now
	if len(opts) > 0 {
		if c := trace.NewSpanEndConfig(opts...); !c.Timestamp().IsZero() {
			s.end = c.Timestamp()
		}
	}
	s.ended = true
	s.recording.Store(false)
	s.mu.Unlock()
	p := s.t.p
	if p.keep != nil {
		p.keep.keepSpan(s)
	}
	if p.export != nil && s.sc.IsSampled() {
		p.export.addSpan(s)
	}
}

// RecordLeaf records l, a finished child nothing ran under, on s: it goes to the kept
// traces and the export with s, and reads as a span of its own (a leaf). It does not
// (false) once s has ended, under a configured sampler (which decides span by span)
// or under limits that could cut l's attributes.
func (s *span) RecordLeaf(l spanrec.Leaf) bool {
	p := s.t.p
	if lim := p.limits; p.sampler != nil || lim.valueLen >= 0 || (lim.attrs >= 0 && lim.attrs < spanrec.MaxSource) {
		return false
	}
	if l.Kind == trace.SpanKindUnspecified {
		l.Kind = trace.SpanKindInternal
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return false
	}
	if s.leaves == nil {
		s.leaves = make([]leaf, 0, 2) // a turn's store writes, mostly
	}
	s.leaves = append(s.leaves, leaf{p: s, id: newSpanID(), l: l})
	return true
}

// leaf is a finished child recorded on its parent span p. Its parent's context is its
// own but for its span ID (the default sampler records a child of a recorded parent,
// with the parent's flags and trace state).
type leaf struct {
	p  *span
	id trace.SpanID
	l  spanrec.Leaf
}

func (l *leaf) Name() string { return l.l.Name }

func (l *leaf) SpanContext() trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: l.p.sc.TraceID(), SpanID: l.id,
		TraceFlags: l.p.sc.TraceFlags(), TraceState: l.p.sc.TraceState()})
}

func (l *leaf) Parent() trace.SpanContext { return l.p.sc }
func (l *leaf) SpanKind() trace.SpanKind  { return l.l.Kind }
func (l *leaf) StartTime() time.Time      { return l.l.Start }
func (l *leaf) EndTime() time.Time        { return l.l.End }

func (l *leaf) Attributes() []attribute.KeyValue {
	if l.l.Attributes == nil {
		return nil
	}
	return l.l.Attributes.AppendAttributes(nil)
}

func (l *leaf) Status() sdktrace.Status {
	if l.l.Error == "" {
		return sdktrace.Status{}
	}
	return sdktrace.Status{Code: codes.Error, Description: l.l.Error}
}

func (*leaf) Links() []sdktrace.Link                        { return nil }
func (*leaf) Events() []sdktrace.Event                      { return nil }
func (*leaf) DroppedAttributes() int                        { return 0 }
func (*leaf) DroppedLinks() int                             { return 0 }
func (*leaf) DroppedEvents() int                            { return 0 }
func (l *leaf) InstrumentationScope() instrumentation.Scope { return l.p.t.scope }
func (l *leaf) Resource() *resource.Resource                { return l.p.t.p.res }

// The read side (endedSpan): called only once the span has ended.

func (s *span) Name() string             { return s.name }
func (s *span) SpanKind() trace.SpanKind { return trace.SpanKind(s.kind) }
func (s *span) StartTime() time.Time     { return s.start }
func (s *span) EndTime() time.Time       { return s.end }
func (s *span) Status() sdktrace.Status {
	if s.more == nil {
		return sdktrace.Status{}
	}
	return s.more.status
}
func (s *span) DroppedAttributes() int { return int(s.droppedAttrs) }

// Parent returns the parent's context without its trace state (the span keeps what the
// exporters and the kept traces read).
func (s *span) Parent() trace.SpanContext {
	if !s.parentID.IsValid() {
		return trace.SpanContext{}
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: s.sc.TraceID(), SpanID: s.parentID,
		TraceFlags: s.parentFlags, Remote: s.parentRemote})
}

// Attributes returns the span's attributes (a source's made anew at each call:
// appendAttributes reads them into a buffer of the caller's).
func (s *span) Attributes() []attribute.KeyValue {
	if s.src != nil {
		return s.src.AppendAttributes(nil)
	}
	return s.attrs
}

func (s *span) InstrumentationScope() instrumentation.Scope { return s.t.scope }
func (s *span) Resource() *resource.Resource                { return s.t.p.res }

func (s *span) Links() []sdktrace.Link {
	if s.more == nil {
		return nil
	}
	return s.more.links
}

func (s *span) Events() []sdktrace.Event {
	if s.more == nil {
		return nil
	}
	return s.more.events
}

func (s *span) DroppedLinks() int {
	if s.more == nil {
		return 0
	}
	return s.more.droppedLinks
}

func (s *span) DroppedEvents() int {
	if s.more == nil {
		return 0
	}
	return s.more.droppedEvts
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
