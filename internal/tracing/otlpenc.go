package tracing

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// The OTLP trace messages' field numbers (opentelemetry/proto/trace/v1/trace.proto,
// collector/trace/v1/trace_service.proto, common/v1/common.proto, resource/v1).
const (
	fReqResourceSpans = 1

	fRSResource   = 1
	fRSScopeSpans = 2
	fRSSchemaURL  = 3

	fResAttributes = 1

	fSSScope     = 1
	fSSSpans     = 2
	fSSSchemaURL = 3

	fScopeName       = 1
	fScopeVersion    = 2
	fScopeAttributes = 3

	fSpanTraceID         = 1
	fSpanSpanID          = 2
	fSpanTraceState      = 3
	fSpanParentSpanID    = 4
	fSpanName            = 5
	fSpanKind            = 6
	fSpanStart           = 7
	fSpanEnd             = 8
	fSpanAttributes      = 9
	fSpanDroppedAttrs    = 10
	fSpanEvents          = 11
	fSpanDroppedEvents   = 12
	fSpanLinks           = 13
	fSpanDroppedLinks    = 14
	fSpanStatus          = 15
	fSpanFlags           = 16
	fEventTime           = 1
	fEventName           = 2
	fEventAttributes     = 3
	fEventDroppedAttrs   = 4
	fLinkTraceID         = 1
	fLinkSpanID          = 2
	fLinkAttributes      = 4
	fLinkDroppedAttrs    = 5
	fLinkFlags           = 6
	fStatusMessage       = 2
	fStatusCode          = 3
	fKVKey               = 1
	fKVValue             = 2
	fAnyString           = 1
	fAnyBool             = 2
	fAnyInt              = 3
	fAnyDouble           = 4
	fAnyArray            = 5
	fAnyKVList           = 6
	fAnyBytes            = 7
	fListValues          = 1 // ArrayValue.values and KeyValueList.values
	fPartialSuccess      = 1 // ExportTraceServiceResponse.partial_success
	fPartialRejected     = 1
	fPartialErrorMessage = 2

	// SpanFlags: the low byte is the W3C trace flags; these say whether the parent is
	// known to be remote (CONTEXT_HAS_IS_REMOTE) and whether it is (CONTEXT_IS_REMOTE).
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// encoder writes an OTLP ExportTraceServiceRequest straight from the SDK's read-only
// spans into one buffer it reuses: what otlptracehttp sends, without first copying
// every span, attribute and value into protobuf structs (three allocations an
// attribute) and marshalling those by reflection. It writes the same messages with
// the same content as the OTLP exporters' own transform. Not safe for concurrent use.
type encoder struct {
	buf    []byte
	groups []spanGroup
	attrs  []attribute.KeyValue // a span's attributes, when its source makes them (see spanrec)
}

// spanGroup is a (resource, scope) pair of the batch: its spans go in one ScopeSpans.
type spanGroup struct {
	res   attribute.Distinct
	r     *resource.Resource
	scope instrumentation.Scope
}

// encode returns the request for spans (valid until the next call) and how many spans
// it holds.
func (e *encoder) encode(spans []endedSpan) ([]byte, int) {
	e.groups = e.groups[:0]
	for _, s := range spans {
		if s == nil {
			continue
		}
		g := spanGroup{res: s.Resource().Equivalent(), r: s.Resource(), scope: s.InstrumentationScope()}
		if !e.hasGroup(g) {
			e.groups = append(e.groups, g)
		}
	}
	b := e.buf[:0]
	n := 0
	for i, g := range e.groups {
		if e.seenResource(i) {
			continue
		}
		var rs int
		b, rs = beginMessage(b, fReqResourceSpans)
		if g.r != nil {
			var m int
			b, m = beginMessage(b, fRSResource)
			iter := g.r.Iter()
			for iter.Next() {
				b = appendKeyValue(b, fResAttributes, iter.Attribute())
			}
			b = endMessage(b, m)
		}
		for _, sg := range e.groups[i:] {
			if sg.res != g.res {
				continue
			}
			var ss int
			b, ss = beginMessage(b, fRSScopeSpans)
			b = appendScope(b, sg.scope)
			one := len(e.groups) == 1 // mostly: every span is agentengine's own
			for _, s := range spans {
				if s == nil || !one && (s.Resource().Equivalent() != sg.res || s.InstrumentationScope() != sg.scope) {
					continue
				}
				b = appendSpan(b, s, spanAttributes(s, &e.attrs))
				n++
			}
			b = appendString(b, fSSSchemaURL, sg.scope.SchemaURL)
			b = endMessage(b, ss)
		}
		if g.r != nil {
			b = appendString(b, fRSSchemaURL, g.r.SchemaURL())
		}
		b = endMessage(b, rs)
	}
	clear(e.attrs) // keeps no span's strings until the next batch
	e.buf = b
	return b, n
}

func (e *encoder) hasGroup(g spanGroup) bool {
	for _, h := range e.groups {
		if h.res == g.res && h.scope == g.scope {
			return true
		}
	}
	return false
}

// seenResource reports whether a group before i has group i's resource (its
// ResourceSpans is written already).
func (e *encoder) seenResource(i int) bool {
	for _, h := range e.groups[:i] {
		if h.res == e.groups[i].res {
			return true
		}
	}
	return false
}

func appendScope(b []byte, sc instrumentation.Scope) []byte {
	if sc == (instrumentation.Scope{}) {
		return b
	}
	b, m := beginMessage(b, fSSScope)
	b = appendString(b, fScopeName, sc.Name)
	b = appendString(b, fScopeVersion, sc.Version)
	iter := sc.Attributes.Iter()
	for iter.Next() {
		b = appendKeyValue(b, fScopeAttributes, iter.Attribute())
	}
	return endMessage(b, m)
}

// appendSpan appends span s with its attributes attrs.
func appendSpan(b []byte, s endedSpan, attrs []attribute.KeyValue) []byte {
	b, m := beginMessage(b, fSSSpans)
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, fSpanTraceID, tid[:])
	b = appendBytes(b, fSpanSpanID, sid[:])
	if ts := sc.TraceState(); ts.Len() > 0 {
		b = appendString(b, fSpanTraceState, ts.String())
	}
	parent := s.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		b = appendBytes(b, fSpanParentSpanID, psid[:])
	}
	b = appendString(b, fSpanName, s.Name())
	b = appendVarint(b, fSpanKind, uint64(spanKind(s.SpanKind())))
	b = appendFixed64(b, fSpanStart, unixNano(s.StartTime().UnixNano()))
	b = appendFixed64(b, fSpanEnd, unixNano(s.EndTime().UnixNano()))
	for _, kv := range attrs {
		b = appendKeyValue(b, fSpanAttributes, kv)
	}
	b = appendVarint(b, fSpanDroppedAttrs, uint64(clampUint32(s.DroppedAttributes())))
	for _, ev := range s.Events() {
		var em int
		b, em = beginMessage(b, fSpanEvents)
		b = appendFixed64(b, fEventTime, unixNano(ev.Time.UnixNano()))
		b = appendString(b, fEventName, ev.Name)
		for _, kv := range ev.Attributes {
			b = appendKeyValue(b, fEventAttributes, kv)
		}
		b = appendVarint(b, fEventDroppedAttrs, uint64(clampUint32(ev.DroppedAttributeCount)))
		b = endMessage(b, em)
	}
	b = appendVarint(b, fSpanDroppedEvents, uint64(clampUint32(s.DroppedEvents())))
	for _, l := range s.Links() {
		var lm int
		b, lm = beginMessage(b, fSpanLinks)
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		b = appendBytes(b, fLinkTraceID, ltid[:])
		b = appendBytes(b, fLinkSpanID, lsid[:])
		for _, kv := range l.Attributes {
			b = appendKeyValue(b, fLinkAttributes, kv)
		}
		b = appendVarint(b, fLinkDroppedAttrs, uint64(clampUint32(l.DroppedAttributeCount)))
		b = appendFixed32(b, fLinkFlags, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
		b = endMessage(b, lm)
	}
	b = appendVarint(b, fSpanDroppedLinks, uint64(clampUint32(s.DroppedLinks())))
	// The status is always there, as the OTLP exporters' transform writes it.
	st := s.Status()
	var stm int
	b, stm = beginMessage(b, fSpanStatus)
	b = appendString(b, fStatusMessage, st.Description)
	b = appendVarint(b, fStatusCode, uint64(statusCode(st.Code)))
	b = endMessage(b, stm)
	b = appendFixed32(b, fSpanFlags, spanFlags(sc.TraceFlags(), parent))
	return endMessage(b, m)
}

func appendKeyValue(b []byte, num protowire.Number, kv attribute.KeyValue) []byte {
	b, m := beginMessage(b, num)
	b = appendString(b, fKVKey, string(kv.Key))
	b = appendAnyValue(b, fKVValue, kv.Value)
	return endMessage(b, m)
}

// appendAnyValue writes v as an AnyValue. The value is a oneof: a zero value is
// written too (it is set), unlike a plain proto3 field.
// appendArray writes items as an ArrayValue (field fAnyArray of an AnyValue), each
// item an AnyValue made by value.
func appendArray[T any](b []byte, items []T, value func(T) attribute.Value) []byte {
	b, a := beginMessage(b, fAnyArray)
	for _, x := range items {
		b = appendAnyValue(b, fListValues, value(x))
	}
	return endMessage(b, a)
}

func appendAnyValue(b []byte, num protowire.Number, v attribute.Value) []byte {
	b, m := beginMessage(b, num)
	switch v.Type() {
	case attribute.STRING:
		b = appendOneofString(b, fAnyString, v.AsString())
	case attribute.INT64:
		b = protowire.AppendTag(b, fAnyInt, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(v.AsInt64())) //nolint:gosec // int64 goes as its two's complement
	case attribute.BOOL:
		b = protowire.AppendTag(b, fAnyBool, protowire.VarintType)
		b = protowire.AppendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.FLOAT64:
		b = protowire.AppendTag(b, fAnyDouble, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.BYTESLICE:
		b = protowire.AppendTag(b, fAnyBytes, protowire.BytesType)
		b = protowire.AppendBytes(b, v.AsByteSlice())
	case attribute.STRINGSLICE:
		b = appendArray(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.INT64SLICE:
		b = appendArray(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.BOOLSLICE:
		b = appendArray(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.FLOAT64SLICE:
		b = appendArray(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.SLICE:
		b = appendArray(b, v.AsSlice(), func(x attribute.Value) attribute.Value { return x })
	case attribute.MAP:
		var a int
		b, a = beginMessage(b, fAnyKVList)
		for _, kv := range v.AsMap() {
			b = appendKeyValue(b, fListValues, kv)
		}
		b = endMessage(b, a)
	case attribute.EMPTY:
		// An AnyValue with nothing set, as the transform writes it.
	default:
		b = appendOneofString(b, fAnyString, "INVALID")
	}
	return endMessage(b, m)
}

// beginMessage writes the tag of an embedded message and one byte for its length, and
// returns where its content starts (for endMessage).
func beginMessage(b []byte, num protowire.Number) ([]byte, int) {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = append(b, 0)
	return b, len(b)
}

// endMessage writes the length of the message begun at start. Most messages (a key
// value, a status) are shorter than 128 bytes and fit the byte kept for it; a longer
// one is moved up by the length's extra bytes.
func endMessage(b []byte, start int) []byte {
	n := len(b) - start
	if n < 0x80 {
		b[start-1] = byte(n)
		return b
	}
	extra := protowire.SizeVarint(uint64(n)) - 1
	for range extra {
		b = append(b, 0)
	}
	copy(b[start+extra:], b[start:start+n])
	protowire.AppendVarint(b[:start-1], uint64(n))
	return b
}

// appendString writes a proto3 string field (nothing when empty).
func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return appendOneofString(b, num, s)
}

// appendOneofString writes a string field even when empty (a oneof member's presence).
func appendOneofString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// appendVarint writes a proto3 integer field (nothing when 0).
func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

func appendFixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

// unixNano is a time as OTLP carries it (a time before 1970 as 0).
func unixNano(ns int64) uint64 {
	return uint64(max(0, ns)) //nolint:gosec // not negative
}

func clampUint32(v int) uint32 {
	if v < 0 {
		return 0
	}
	if int64(v) > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(v) //nolint:gosec // checked above
}

// spanFlags are a span's (or link's) OTLP flags: the W3C trace flags, and whether the
// parent (or linked) context is remote.
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	flags := uint32(tf) | flagHasIsRemote
	if parent.IsRemote() {
		flags |= flagIsRemote
	}
	return flags
}

// spanKind is OTLP's Span.SpanKind of k.
func spanKind(k trace.SpanKind) int {
	switch k {
	case trace.SpanKindInternal:
		return 1
	case trace.SpanKindServer:
		return 2
	case trace.SpanKindClient:
		return 3
	case trace.SpanKindProducer:
		return 4
	case trace.SpanKindConsumer:
		return 5
	case trace.SpanKindUnspecified:
	}
	return 0
}

// statusCode is OTLP's Status.StatusCode of c.
func statusCode(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	case codes.Unset:
	}
	return 0
}

// partialSuccess reads an ExportTraceServiceResponse: the spans the receiver rejected
// and its message (zero when it accepted everything).
func partialSuccess(b []byte) (rejected int64, msg string, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, "", protowire.ParseError(n)
		}
		b = b[n:]
		if num == fPartialSuccess && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return 0, "", protowire.ParseError(n)
			}
			b = b[n:]
			// A repeated message field merges into the one before it, as protobuf reads it.
			if err := partialSuccessBody(v, &rejected, &msg); err != nil {
				return 0, "", err
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return 0, "", protowire.ParseError(n)
		}
		b = b[n:]
	}
	return rejected, msg, nil
}

// partialSuccessBody reads an ExportTracePartialSuccess into rejected and msg.
func partialSuccessBody(b []byte, rejected *int64, msg *string) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == fPartialRejected && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			*rejected, b = int64(v), b[n:] //nolint:gosec // int64 comes as its two's complement
		case num == fPartialErrorMessage && typ == protowire.BytesType:
			v, n := protowire.ConsumeString(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			*msg, b = v, b[n:]
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return nil
}
