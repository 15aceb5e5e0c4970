package core

import "github.com/agentengine/agentengine/session"

// CopyBytes returns a copy of b (nil stays nil).
func CopyBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// CopyEvent deep-copies an event's byte slices.
func CopyEvent(e session.Event) session.Event {
	e.Data = CopyBytes(e.Data)
	e.StateDelta = CopyBytes(e.StateDelta)
	return e
}

// CopyEvents deep-copies events into dst (appended) with one allocation for all of
// their bytes, instead of two per event.
func CopyEvents(dst, evs []session.Event) []session.Event {
	n := 0
	for i := range evs {
		n += len(evs[i].Data) + len(evs[i].StateDelta)
	}
	buf := make([]byte, 0, n)
	for _, e := range evs {
		if e.Data != nil {
			e.Data = carve(&buf, e.Data)
		}
		if e.StateDelta != nil {
			e.StateDelta = carve(&buf, e.StateDelta)
		}
		dst = append(dst, e)
	}
	return dst
}

// CopyMap deep-copies a JSON-decoded map; nil becomes an empty map so callers always
// get an object.
func CopyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = CopyValue(v)
	}
	return out
}

// CopyValue deep-copies a JSON-decoded value (maps and slices; scalars are values).
func CopyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return CopyMap(t)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = CopyValue(x)
		}
		return out
	}
	return v
}
