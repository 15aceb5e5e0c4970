package wire

import "bytes"

// StringField returns the string member key of the JSON object data, as json.Unmarshal
// into a struct with that one string field would set it, when it can tell without
// decoding: ok is false when data is not an object, when the member is not a string,
// when a key or the value has escapes, or when a key matches key only as encoding/json's
// case-insensitive matching would; decode data in full then. A missing member gives ""
// and ok. data must be valid JSON (stored event data is; check first otherwise).
//
// The run's own events (the user's message, the answer's text, a run's status) are
// read back on every turn: encoding/json's reflection and allocations were a tenth of
// the host's CPU per turn.
func StringField(data []byte, key string) (s string, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return "", false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return "", true
	}
	for i < len(data) {
		k, next, plain := plainString(data, i)
		if !plain {
			return "", false
		}
		i = skipSpace(data, next)
		if i >= len(data) || data[i] != ':' {
			return "", false
		}
		i = skipSpace(data, i+1)
		switch {
		case string(k) == key:
			v, end, plain := plainString(data, i)
			if !plain {
				return "", false
			}
			s, i = string(v), end // the last of duplicate keys wins, as in encoding/json
		case bytes.EqualFold(k, []byte(key)):
			return "", false
		default:
			end, skipped := valueEnd(data, i)
			if !skipped {
				return "", false
			}
			i = end
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return "", false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return s, true
		default:
			return "", false
		}
	}
	return "", false
}
