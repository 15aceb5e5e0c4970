// Package spanattr gives a span its attributes as a source: a value that appends them
// when the span is read (exported or viewed) instead of their being copied into the
// span when set. A few strings in a struct cost a span much less than a slice of
// key-values, each 64 bytes. agentengine's tracer keeps a source; any other span gets
// the attributes set at once. It sits apart from the tracer so that code with no
// business with HTTP (the host) can use it.
package spanattr

import (
	"go.opentelemetry.io/otel/attribute"
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

// Set gives span src's attributes: kept as the source by a span that can, set now on
// any other.
func Set(span trace.Span, src Source) {
	if k, ok := span.(keeper); ok {
		k.SetAttributeSource(src)
		return
	}
	if span.IsRecording() {
		span.SetAttributes(src.AppendAttributes(nil)...)
	}
}
