package tracing

import (
	"context"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// Defaults of Recent's bounds.
const (
	DefaultRecentTraces = 200
	DefaultRecentBytes  = 8 << 20
)

// AttrRunID is the attribute naming the run (invocation) of an invoke_agent span; the
// GenAI conventions have no such attribute.
const AttrRunID = "agentengine.run.id"

// Span is a finished span as Recent keeps it.
type Span struct {
	TraceID    trace.TraceID
	SpanID     trace.SpanID
	ParentID   trace.SpanID // zero for a root
	Name       string
	Kind       trace.SpanKind
	Start, End time.Time
	Error      string // the status description of a span that failed ("" when it did not)
	Failed     bool
	Attributes []attribute.KeyValue
}

// Attr returns the value of the attribute key ("" and false when absent).
func (s Span) Attr(key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// size is what a span costs Recent's byte bound, roughly its memory.
func (s Span) size() int {
	return spanSize(s.Name, s.Error, s.Attributes)
}

// spanSize estimates a span's memory without formatting its values (a non-string
// value counts 8 bytes).
func spanSize(name, errText string, attrs []attribute.KeyValue) int {
	n := 160 + len(name) + len(errText)
	for _, kv := range attrs {
		n += 32 + len(kv.Key)
		switch kv.Value.Type() {
		case attribute.STRING:
			n += len(kv.Value.AsString())
		case attribute.STRINGSLICE:
			for _, v := range kv.Value.AsStringSlice() {
				n += 16 + len(v)
			}
		default:
			n += 8
		}
	}
	return n
}

// endedSpan is a finished span as the kept traces and the exporters read it: the
// recorder's own span, or the SDK's read-only span (a test's provider, say).
type endedSpan interface {
	Name() string
	SpanContext() trace.SpanContext
	Parent() trace.SpanContext
	SpanKind() trace.SpanKind
	StartTime() time.Time
	EndTime() time.Time
	Attributes() []attribute.KeyValue
	Links() []sdktrace.Link
	Events() []sdktrace.Event
	Status() sdktrace.Status
	InstrumentationScope() instrumentation.Scope
	Resource() *resource.Resource
	DroppedAttributes() int
	DroppedLinks() int
	DroppedEvents() int
}

var (
	_ endedSpan = (*span)(nil)
	_ endedSpan = sdktrace.ReadOnlySpan(nil)
)

// fromReadOnly converts an ended span to Recent's form.
func fromReadOnly(s endedSpan) Span {
	sp := Span{
		TraceID: s.SpanContext().TraceID(), SpanID: s.SpanContext().SpanID(), ParentID: s.Parent().SpanID(),
		Name: s.Name(), Kind: s.SpanKind(), Start: s.StartTime(), End: s.EndTime(),
		Attributes: s.Attributes(),
	}
	if st := s.Status(); st.Code == codes.Error {
		sp.Failed, sp.Error = true, st.Description
	}
	return sp
}

// Recent keeps the spans of the last traces in memory, bounded in traces and bytes (the
// oldest trace goes first). It is a span processor: every span ended in the process is
// offered to it. It keeps the ended span itself (immutable once ended, and the same
// one the exporter gets) and converts it only when read: a turn's spans cost the
// store a slice slot each. Safe for concurrent use.
type Recent struct {
	maxTraces, maxBytes int

	mu     sync.Mutex
	traces map[trace.TraceID]*recentTrace
	order  []trace.TraceID // oldest first
	bytes  int
	spare  *recentTrace         // the last trace dropped, emptied, for the next new one
	attrs  []attribute.KeyValue // a span's attributes while it is sized or matched (it may keep the last one's values)
}

// recentTrace holds a trace's spans: those the SDK ended here (ended) and those added
// as data (added, e.g. a runner's).
type recentTrace struct {
	ended []endedSpan
	added []Span
	bytes int
}

// spans converts the trace's spans (r.mu held).
func (t *recentTrace) spans(out []Span) []Span {
	for _, s := range t.ended {
		out = append(out, fromReadOnly(s))
	}
	return append(out, t.added...)
}

// has reports whether a span of the trace has the attribute key with value (r.mu held;
// scratch is r's buffer for reading a span's attributes).
func (t *recentTrace) has(key, value string, scratch *[]attribute.KeyValue) bool {
	match := func(attrs []attribute.KeyValue) bool {
		for _, kv := range attrs {
			if string(kv.Key) == key {
				return kv.Value.String() == value
			}
		}
		return false
	}
	for _, s := range t.ended {
		if match(spanAttributes(s, scratch)) {
			return true
		}
	}
	for _, sp := range t.added {
		if match(sp.Attributes) {
			return true
		}
	}
	return false
}

// NewRecent keeps up to maxTraces traces and maxBytes of spans (defaults for <= 0).
func NewRecent(maxTraces, maxBytes int) *Recent {
	if maxTraces <= 0 {
		maxTraces = DefaultRecentTraces
	}
	if maxBytes <= 0 {
		maxBytes = DefaultRecentBytes
	}
	return &Recent{maxTraces: maxTraces, maxBytes: maxBytes, traces: map[trace.TraceID]*recentTrace{}}
}

var _ sdktrace.SpanProcessor = (*Recent)(nil)

// OnStart implements sdktrace.SpanProcessor.
func (*Recent) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd keeps a span the SDK ended.
func (r *Recent) OnEnd(s sdktrace.ReadOnlySpan) { r.keep(s, nil) }

// keep keeps an ended span and the leaves recorded on it (one lock for all).
func (r *Recent) keep(s endedSpan, leaves []leaf) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keepLocked(s)
	for i := range leaves {
		r.keepLocked(&leaves[i])
	}
}

// keepLocked keeps an ended span (r.mu held).
func (r *Recent) keepLocked(s endedSpan) {
	size := spanSize(s.Name(), s.Status().Description, spanAttributes(s, &r.attrs)) + 64*len(s.Events())
	t := r.trace(s.SpanContext().TraceID())
	t.ended = append(t.ended, s)
	r.grew(t, size)
}

// Add keeps a span given as data (one a runner reported, say).
func (r *Recent) Add(sp Span) {
	size := sp.size()
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.trace(sp.TraceID)
	t.added = append(t.added, sp)
	r.grew(t, size)
}

// trace returns the kept trace id, a new one if need be (r.mu held).
func (r *Recent) trace(id trace.TraceID) *recentTrace {
	t, ok := r.traces[id]
	if !ok {
		if t = r.spare; t != nil {
			r.spare = nil
		} else {
			t = &recentTrace{ended: make([]endedSpan, 0, 8)} // a turn's own spans, mostly
		}
		r.traces[id] = t
		r.order = append(r.order, id)
	}
	return t
}

// grew counts size bytes more in t and drops the oldest traces beyond the bounds (r.mu
// held).
func (r *Recent) grew(t *recentTrace, size int) {
	t.bytes += size
	r.bytes += size
	for len(r.order) > 1 && (len(r.order) > r.maxTraces || r.bytes > r.maxBytes) {
		old := r.order[0]
		r.order[0] = trace.TraceID{}
		r.order = r.order[1:]
		gone := r.traces[old]
		r.bytes -= gone.bytes
		delete(r.traces, old)
		// The next new trace reuses it: once full, the store makes no garbage a trace.
		clear(gone.ended)
		clear(gone.added)
		gone.ended, gone.added, gone.bytes = gone.ended[:0], gone.added[:0], 0
		r.spare = gone
	}
}

// Shutdown implements sdktrace.SpanProcessor.
func (*Recent) Shutdown(context.Context) error { return nil }

// ForceFlush implements sdktrace.SpanProcessor.
func (*Recent) ForceFlush(context.Context) error { return nil }

// Trace returns the spans of a trace, by start time.
func (r *Recent) Trace(id trace.TraceID) []Span {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.traces[id]
	if !ok {
		return nil
	}
	return sorted(t.spans(nil))
}

// Where returns the spans of every trace with a span whose attribute key is value, by
// start time: a session's traces (gen_ai.conversation.id) or a run's (AttrRunID).
func (r *Recent) Where(key, value string) []Span {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Span
	for _, id := range r.order {
		if t := r.traces[id]; t.has(key, value, &r.attrs) {
			out = t.spans(out)
		}
	}
	return sorted(out)
}

// Session returns the spans of a session's traces.
func (r *Recent) Session(id string) []Span {
	return r.Where(string(semconv.GenAIConversationIDKey), id)
}

// Run returns the spans of a run's trace.
func (r *Recent) Run(id string) []Span { return r.Where(AttrRunID, id) }

// Stats reports how many traces and bytes are kept.
func (r *Recent) Stats() (traces, bytes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.order), r.bytes
}

// sorted sorts spans (the caller's own copy) by start time.
func sorted(spans []Span) []Span {
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].Start.Before(spans[j].Start) })
	return spans
}
