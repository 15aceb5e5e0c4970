package memory

import (
	"encoding/binary"
	"slices"
	"time"

	"github.com/agentengine/agentengine/session"
)

// eventLog is a session's events packed into bytes, in seq order (event i has seq i+1).
// The memory store keeps every session it is given, and a []session.Event holds eight
// pointers per event, each of which every collection follows; packed, a session's
// events are one array without pointers, which the collector does not scan. A log of
// more than smallLog events indexes where each event ends; a shorter one (most are) is
// walked, and needs no second array.
type eventLog struct {
	buf  []byte
	n    int
	ends []int // ends[i] is where event i ends in buf; nil while n <= smallLog
}

const smallLog = 16

func (l *eventLog) len() int64 { return int64(l.n) }

// reserve makes room for evs, so that packing a write's events grows the log once.
func (l *eventLog) reserve(evs []session.Event) {
	n := 0
	for i := range evs {
		e := &evs[i]
		n += 6*binary.MaxVarintLen32 + binary.MaxVarintLen64 + len(e.InvocationID) + len(e.ItemID) + len(e.Type) +
			len(e.Author) + len(e.Data) + len(e.StateDelta)
	}
	l.buf = slices.Grow(l.buf, n)
	if l.ends != nil {
		l.ends = slices.Grow(l.ends, len(evs))
	}
}

// add packs e (its seq and session id are implied).
func (l *eventLog) add(e *session.Event) {
	b := binary.AppendVarint(l.buf, e.Time.UnixNano())
	for _, f := range [...]string{e.InvocationID, e.ItemID, e.Type, e.Author} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	b = binary.AppendUvarint(b, uint64(len(e.Data)))
	b = append(b, e.Data...)
	if e.StateDelta == nil {
		b = binary.AppendUvarint(b, 0)
	} else {
		b = binary.AppendUvarint(b, uint64(len(e.StateDelta))+1)
		b = append(b, e.StateDelta...)
	}
	l.buf = b
	l.n++
	switch {
	case l.ends != nil:
		l.ends = append(l.ends, len(b))
	case l.n > smallLog:
		l.ends = make([]int, 0, 2*l.n)
		for off := 0; off < len(b); {
			off = l.next(off)
			l.ends = append(l.ends, off)
		}
	}
}

// start returns where event i begins in buf.
func (l *eventLog) start(i int64) int {
	if i == 0 {
		return 0
	}
	if l.ends != nil {
		return l.ends[i-1]
	}
	off := 0
	for range i {
		off = l.next(off)
	}
	return off
}

// next returns where the event beginning at off ends.
func (l *eventLog) next(off int) int {
	_, n := binary.Varint(l.buf[off:])
	off += n
	for range 5 { // four strings and the data
		size, n := binary.Uvarint(l.buf[off:])
		off += n + int(size) //nolint:gosec // G115: a length this log wrote
	}
	size, n := binary.Uvarint(l.buf[off:])
	off += n
	if size > 0 {
		off += int(size) - 1 //nolint:gosec // G115: a length this log wrote
	}
	return off
}

// get unpacks event i of session sessionID.
func (l *eventLog) get(i int64, sessionID string) session.Event {
	e, _ := l.decode(l.start(i), i+1, sessionID)
	return e
}

// decode unpacks the event that begins at off and has seq seq, and returns where the
// next one begins. Its data and delta share the log's bytes, which are never written
// again once packed (a grown log leaves the old array as it was): callers copy them
// before handing them out. Its strings are copies, or the constants they equal, so that
// what a caller keeps does not pin the log's arrays.
func (l *eventLog) decode(off int, seq int64, sessionID string) (session.Event, int) {
	b := l.buf[off:]
	ns, n := binary.Varint(b)
	b = b[n:]
	var f [4]string
	for k := range f {
		size, n := binary.Uvarint(b)
		f[k] = intern(b[n : n+int(size)])
		b = b[n+int(size):]
	}
	size, n := binary.Uvarint(b)
	data := b[n : n+int(size) : n+int(size)]
	b = b[n+int(size):]
	var delta []byte
	size, n = binary.Uvarint(b)
	b = b[n:]
	if size > 0 {
		delta = b[: size-1 : size-1]
		b = b[size-1:]
	}
	return session.Event{Seq: seq, SessionID: sessionID, InvocationID: f[0], ItemID: f[1], Type: f[2], Author: f[3],
		Data: data, StateDelta: delta, Time: time.Unix(0, ns).UTC()}, len(l.buf) - len(b)
}

// intern returns b as a string: the constant it equals when it is one of the event
// types and authors most events have, else a copy.
func intern(b []byte) string {
	switch string(b) { // compared without a conversion
	case session.TypeUserMessage:
		return session.TypeUserMessage
	case session.TypeRunStatus:
		return session.TypeRunStatus
	case session.TypeAssistantMessage:
		return session.TypeAssistantMessage
	case session.TypeReasoning:
		return session.TypeReasoning
	case session.TypeToolCall:
		return session.TypeToolCall
	case session.TypeToolResult:
		return session.TypeToolResult
	case "user":
		return "user"
	case "system":
		return "system"
	}
	return string(b)
}
