package tracing

import (
	"context"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
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
	n := 160 + len(s.Name) + len(s.Error)
	for _, kv := range s.Attributes {
		n += 32 + len(kv.Key) + len(kv.Value.String())
	}
	return n
}

// Recent keeps the spans of the last traces in memory, bounded in traces and bytes (the
// oldest trace goes first). It is a span processor: every span ended in the process is
// offered to it. Safe for concurrent use.
type Recent struct {
	maxTraces, maxBytes int

	mu     sync.Mutex
	traces map[trace.TraceID]*recentTrace
	order  []trace.TraceID // oldest first
	bytes  int
}

type recentTrace struct {
	spans []Span
	bytes int
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

// OnEnd keeps the span.
func (r *Recent) OnEnd(s sdktrace.ReadOnlySpan) {
	sp := Span{
		TraceID: s.SpanContext().TraceID(), SpanID: s.SpanContext().SpanID(), ParentID: s.Parent().SpanID(),
		Name: s.Name(), Kind: s.SpanKind(), Start: s.StartTime(), End: s.EndTime(),
		Attributes: s.Attributes(),
	}
	if st := s.Status(); st.Code.String() == "Error" {
		sp.Failed, sp.Error = true, st.Description
	}
	r.Add(sp)
}

// Add keeps a span (of this process, or one a runner reported).
func (r *Recent) Add(sp Span) {
	size := sp.size()
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.traces[sp.TraceID]
	if !ok {
		t = &recentTrace{}
		r.traces[sp.TraceID] = t
		r.order = append(r.order, sp.TraceID)
	}
	t.spans = append(t.spans, sp)
	t.bytes += size
	r.bytes += size
	for len(r.order) > 1 && (len(r.order) > r.maxTraces || r.bytes > r.maxBytes) {
		old := r.order[0]
		r.order = r.order[1:]
		r.bytes -= r.traces[old].bytes
		delete(r.traces, old)
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
	return sorted(t.spans)
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
		t := r.traces[id]
		for _, sp := range t.spans {
			if v, ok := sp.Attr(key); ok && v.String() == value {
				out = append(out, t.spans...)
				break
			}
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

func sorted(spans []Span) []Span {
	out := append([]Span(nil), spans...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}
