package session

import (
	"bytes"
	"unicode/utf8"
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
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return "", false
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		return "", true
	}
	for i < len(data) {
		k, next, plain := plainString(data, i)
		if !plain {
			return "", false
		}
		i = skipWS(data, next)
		if i >= len(data) || data[i] != ':' {
			return "", false
		}
		i = skipWS(data, i+1)
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
			end, skipped := skipValue(data, i)
			if !skipped {
				return "", false
			}
			i = end
		}
		i = skipWS(data, i)
		if i >= len(data) {
			return "", false
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case '}':
			return s, true
		default:
			return "", false
		}
	}
	return "", false
}

// plainString returns the contents of the JSON string at data[i] when it has no escapes
// and is valid UTF-8 (encoding/json would change neither), and the index after it.
func plainString(data []byte, i int) ([]byte, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, i, false
	}
	j := bytes.IndexByte(data[i+1:], '"')
	if j < 0 {
		return nil, i, false
	}
	v := data[i+1 : i+1+j]
	if bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
		return nil, i, false
	}
	for _, c := range v {
		if c < 0x20 {
			return nil, i, false
		}
	}
	return v, i + 2 + j, true
}

// skipValue returns the index after the JSON value at data[i] (valid JSON assumed).
func skipValue(data []byte, i int) (int, bool) {
	depth := 0
	for i < len(data) {
		switch c := data[i]; c {
		case '"':
			i++
			for i < len(data) && data[i] != '"' {
				if data[i] == '\\' {
					i++
				}
				i++
			}
			if i >= len(data) {
				return i, false
			}
			i++
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i, true
			}
			depth--
			i++
		case ',':
			if depth == 0 {
				return i, true
			}
			i++
		default:
			i++
		}
		if depth == 0 && i < len(data) {
			if c := data[i]; c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				return i, true
			}
		}
	}
	return i, depth == 0
}

func skipWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
