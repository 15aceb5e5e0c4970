package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unsafe"

	"github.com/agentengine/agentengine/internal/jsonscan"
)

// UnmarshalPayload decodes a run payload exactly as json.Unmarshal would, decoding its
// history, which the host sends first in the object, without encoding/json: a runner
// decodes its session's whole history on every turn, and encoding/json's scanning of a
// long one was most of a long session's turn. Anything its fast path does not handle
// (escaped or unknown keys, keys in another case, blocks, numbers that are not plain
// integers, invalid UTF-8, another layout) is decoded by encoding/json.
//
// The history's strings share b's bytes where they have no escapes (a known role or type
// is a constant), so that a long history is not a few hundred small allocations, each
// for the collector to follow: b must not change afterwards.
func UnmarshalPayload(b []byte, p *Payload) error {
	const head = `{"history":`
	if !bytes.HasPrefix(b, []byte(head)) {
		return json.Unmarshal(b, p)
	}
	hist, end, ok := decodeHistory(b, len(head))
	rest := jsonscan.SkipSpace(b, end)
	if !ok || rest >= len(b) || (b[rest] != ',' && b[rest] != '}') || len(b)-rest > maxPayloadTail {
		return json.Unmarshal(b, p)
	}
	// The members after the history are decoded as an object of their own.
	p.History = hist
	if b[rest] == '}' {
		if jsonscan.SkipSpace(b, rest+1) != len(b) {
			return json.Unmarshal(b, p)
		}
		return nil
	}
	if k := jsonscan.SkipSpace(b, rest+1); k >= len(b) || b[k] != '"' {
		return json.Unmarshal(b, p) // no member after the comma: invalid, as its error says
	}
	tail := append(append(make([]byte, 0, len(b)-rest), '{'), b[rest+1:]...)
	if err := json.Unmarshal(tail, p); err != nil {
		return json.Unmarshal(b, p) // its error, as the whole payload's
	}
	return nil
}

// maxPayloadTail bounds the copy of the members after the history that the fast path
// makes: a larger payload (a long input) is decoded by encoding/json alone, the history's
// share of its cost being small then.
const maxPayloadTail = 64 << 10

// decodeHistory decodes the array of messages at b[i:]; it returns the index after it.
func decodeHistory(b []byte, i int) ([]Message, int, bool) {
	i = jsonscan.SkipSpace(b, i)
	if i >= len(b) || b[i] != '[' {
		return nil, i, false
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return []Message{}, i + 1, true
	}
	// The messages' bounds first, so that the messages are allocated once, at their size.
	var stack [128]span
	spans := stack[:0]
	for {
		end, ok := jsonscan.ValueEnd(b, i)
		if !ok || b[i] != '{' {
			return nil, i, false
		}
		spans = append(spans, span{i, end})
		i = jsonscan.SkipSpace(b, end)
		if i >= len(b) {
			return nil, i, false
		}
		if b[i] == ']' {
			i++
			break
		}
		if b[i] != ',' {
			return nil, i, false
		}
		i = jsonscan.SkipSpace(b, i+1)
	}
	out := make([]Message, len(spans))
	for k, sp := range spans {
		m := &out[k]
		if !decodeMessage(b[sp.start:sp.end], m) {
			*m = Message{}
			if err := json.Unmarshal(b[sp.start:sp.end], m); err != nil {
				return nil, sp.start, false
			}
		}
	}
	return out, i, true
}

type span struct{ start, end int }

// decodeMessage decodes the object b into m, reporting false (m partly set) when b is
// anything its fast path does not handle.
func decodeMessage(b []byte, m *Message) bool {
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return jsonscan.SkipSpace(b, i+1) == len(b)
	}
	for {
		key, next, ok := jsonscan.PlainString(b, i)
		if !ok {
			return false
		}
		i = jsonscan.SkipSpace(b, next)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = jsonscan.SkipSpace(b, i+1)
		if i, ok = decodeField(b, i, key, m); !ok {
			return false
		}
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		case '}':
			return jsonscan.SkipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// decodeField decodes the value at b[i:] into m's field named key; it returns the index
// after the value.
func decodeField(b []byte, i int, key []byte, m *Message) (int, bool) {
	var dst *string
	switch string(key) {
	case "role":
		dst = &m.Role
	case "content":
		dst = &m.Content
	case "type":
		dst = &m.Type
	case "call_id":
		dst = &m.CallID
	case "name":
		dst = &m.Name
	case "arguments":
		dst = &m.Arguments
	case "seq":
		end := i
		for end < len(b) && (b[end] == '-' || b[end] >= '0' && b[end] <= '9') {
			end++
		}
		n, err := strconv.ParseInt(string(b[i:end]), 10, 64)
		if err != nil || end < len(b) && (b[end] == '.' || b[end] == 'e' || b[end] == 'E') || !validInt(b[i:end]) {
			return i, false
		}
		m.Seq = n
		return end, true
	case "output":
		end, ok := jsonscan.ValueEnd(b, i)
		if !ok || bytes.HasPrefix(b[i:], []byte("null")) || !json.Valid(b[i:end]) {
			return i, false
		}
		m.Output = append(m.Output[:0:0], b[i:end]...)
		return end, true
	default:
		return i, false
	}
	if bytes.HasPrefix(b[i:], []byte("null")) {
		return i + len("null"), true // null leaves a string as it was
	}
	if s, end, ok := jsonscan.PlainString(b, i); ok {
		*dst = sharedString(s)
		return end, true
	}
	s, end, ok := jsonString(b, i)
	if !ok {
		return i, false
	}
	*dst = s
	return end, true
}

// sharedString is s as a string: a constant for the roles and types every history
// repeats, else a string sharing s's bytes (see UnmarshalPayload).
func sharedString(s []byte) string {
	switch string(s) { // compared without a copy
	case "":
		return ""
	case "user":
		return "user"
	case "assistant":
		return "assistant"
	case "user_message":
		return "user_message"
	case "assistant_message":
		return "assistant_message"
	case "tool_call":
		return "tool_call"
	case "tool_result":
		return "tool_result"
	case "approval_request":
		return "approval_request"
	case "approval_response":
		return "approval_response"
	case "attachment_ref":
		return "attachment_ref"
	case "context_checkpoint":
		return "context_checkpoint"
	}
	return unsafe.String(&s[0], len(s)) //nolint:gosec // G103: s is part of the payload, which UnmarshalPayload's callers never change (see there)
}

// validInt reports whether b is a JSON integer: no leading zeros, no plus sign.
func validInt(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	return len(b) == 1 || len(b) > 1 && b[0] != '0'
}

// jsonString decodes the string at b[i:]; one with escapes is decoded by encoding/json.
func jsonString(b []byte, i int) (string, int, bool) {
	if s, end, ok := jsonscan.PlainString(b, i); ok {
		return string(s), end, true
	}
	end, ok := jsonscan.ValueEnd(b, i)
	if !ok || i >= len(b) || b[i] != '"' {
		return "", i, false
	}
	var s string
	if err := json.Unmarshal(b[i:end], &s); err != nil {
		return "", i, false
	}
	return s, end, true
}
