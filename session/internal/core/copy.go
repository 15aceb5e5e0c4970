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
