// Package jsonfield reads one string member of a stored JSON object without
// encoding/json, for the host and the session stores, which read their own events back on
// every turn.
package jsonfield

import (
	"bytes"

	"github.com/agentengine/agentengine/internal/jsonscan"
)

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
	i := jsonscan.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return "", false
	}
	i = jsonscan.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return "", true
	}
	for i < len(data) {
		k, next, plain := jsonscan.PlainString(data, i)
		if !plain {
			return "", false
		}
		i = jsonscan.SkipSpace(data, next)
		if i >= len(data) || data[i] != ':' {
			return "", false
		}
		i = jsonscan.SkipSpace(data, i+1)
		switch {
		case string(k) == key:
			v, end, plain := jsonscan.PlainString(data, i)
			if !plain {
				return "", false
			}
			s, i = string(v), end // the last of duplicate keys wins, as in encoding/json
		case bytes.EqualFold(k, []byte(key)):
			return "", false
		default:
			end, skipped := jsonscan.ValueEnd(data, i)
			if !skipped {
				return "", false
			}
			i = end
		}
		i = jsonscan.SkipSpace(data, i)
		if i >= len(data) {
			return "", false
		}
		switch data[i] {
		case ',':
			i = jsonscan.SkipSpace(data, i+1)
		case '}':
			return s, true
		default:
			return "", false
		}
	}
	return "", false
}
