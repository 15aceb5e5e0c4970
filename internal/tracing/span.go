package tracing

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"

	"github.com/agentengine/agentengine/internal/spanrec"
)

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
	if s.src == nil && len(s.attrs) == 0 && s.t.p.limits.keepSources() {
		s.src = src
		return
	}
	s.setAttributes(src.AppendAttributes(nil))
}

// spanAttributes returns an ended span's attributes: the slice a span holds, or those
// its source (or a leaf's) makes, written into *scratch, a buffer of the caller's.
func spanAttributes(s endedSpan, scratch *[]attribute.KeyValue) []attribute.KeyValue {
	var src spanrec.Source
	switch s := s.(type) {
	case *span:
		if s.src == nil {
			return s.attrs
		}
		src = s.src
	case *leaf:
		if src = s.l.Attributes; src == nil {
			return nil
		}
	default:
		return s.Attributes()
	}
	*scratch = src.AppendAttributes((*scratch)[:0])
	return *scratch
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
		p.keep.keep(s, s.leaves)
	}
	if p.export != nil && s.sc.IsSampled() {
		p.export.add(s, s.leaves)
	}
}

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
