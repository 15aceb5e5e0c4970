package tracing

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentengine/agentengine/internal/spanrec"
)

// RecordLeaf records l, a finished child nothing ran under, on s: it goes to the kept
// traces and the export with s, and reads as a span of its own (a leaf). It does not
// (false) once s has ended, under a configured sampler (which decides span by span)
// or under limits that could cut l's attributes.
func (s *span) RecordLeaf(l spanrec.Leaf) bool {
	p := s.t.p
	if p.sampler != nil || !p.limits.keepSources() {
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
