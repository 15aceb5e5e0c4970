// Package spanrec records spans more cheaply on agentengine's own tracer, and the usual
// way on any other:
//   - a span's attributes given as a Source, a value that appends them when the span is
//     read (exported or viewed), instead of copied into the span when set: a few strings
//     in a struct cost a span much less than a slice of key-values, each 64 bytes;
//   - a finished child that nothing ran under (a store write) recorded on its parent as a
//     Leaf, handed on with the parent, instead of a span of its own.
//
// It sits apart from the tracer so that code with no business with HTTP (the host) can
// use it.
package spanrec

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Source appends a span's attributes: at most MaxSource valid ones, each key once, the
// same ones every time.
type Source interface {
	AppendAttributes(dst []attribute.KeyValue) []attribute.KeyValue
}

// MaxSource bounds what a Source appends: a tracer whose span limits could cut a
// source's attributes sets them at once, as SetAttributes would.
const MaxSource = 16

// Fixed is a Source of attributes made once (a store operation's, say).
type Fixed []attribute.KeyValue

// AppendAttributes appends f's attributes to dst.
func (f Fixed) AppendAttributes(dst []attribute.KeyValue) []attribute.KeyValue {
	return append(dst, f...)
}

// keeper is a span that keeps a source (agentengine's tracer's).
type keeper interface {
	SetAttributeSource(src Source)
}

// SetAttributes gives span src's attributes: kept as the source by a span that can, set
// now on any other.
func SetAttributes(span trace.Span, src Source) {
	if k, ok := span.(keeper); ok {
		k.SetAttributeSource(src)
		return
	}
	if span.IsRecording() {
		span.SetAttributes(src.AppendAttributes(nil)...)
	}
}

// Leaf is a finished child span: what it did, from start to end, failed with Error
// when that is not "".
type Leaf struct {
	Name       string
	Kind       trace.SpanKind
	Attributes Source
	Start, End time.Time
	Error      string
}

// leafKeeper is a span that records finished children on itself (agentengine's
// tracer's, when its sampling and limits allow); false when it did not.
type leafKeeper interface {
	RecordLeaf(l Leaf) bool
}

// RecordLeaf records l as a child of parent: on parent itself when it can, else as a
// span of tracer's with l's times (the caller asks whether parent records at all when
// the leaf starts: a write that outlives its parent's end still gets its span).
func RecordLeaf(tracer trace.Tracer, parent trace.Span, l Leaf) {
	if k, ok := parent.(leafKeeper); ok && k.RecordLeaf(l) {
		return
	}
	ctx := trace.ContextWithSpan(context.Background(), parent)
	_, span := tracer.Start(ctx, l.Name, trace.WithTimestamp(l.Start), trace.WithSpanKind(l.Kind))
	if l.Attributes != nil {
		SetAttributes(span, l.Attributes)
	}
	if l.Error != "" {
		span.SetStatus(codes.Error, l.Error)
	}
	span.End(trace.WithTimestamp(l.End))
}
