package adkweb

import (
	"bytes"
	"encoding/json"
)

// parseCreateSession validates ADK's CreateSessionRequest (an empty body is none):
// events, when given, are those of a session being imported.
func parseCreateSession(body []byte) (id string, state []byte, events []json.RawMessage, aerr *httpError) {
	if isEmptyBody(body) {
		return "", nil, nil, nil
	}
	o, aerr := decodeObject(body, []any{"body"})
	if aerr != nil {
		return "", nil, nil, aerr
	}
	if id, aerr = o.str("sessionId", "session_id", false); aerr != nil {
		return "", nil, nil, aerr
	}
	if state, aerr = o.dict("state", "state"); aerr != nil {
		return "", nil, nil, aerr
	}
	evs, name, aerr := o.get("events", "events")
	if aerr != nil {
		return "", nil, nil, aerr
	}
	events, aerr = importedEventsOf(evs, name, o)
	return id, state, events, aerr
}

// parseState validates a body that is a state object (or empty).
func parseState(body []byte) ([]byte, *httpError) {
	if isEmptyBody(body) {
		return nil, nil
	}
	if !isObject(body) {
		return nil, invalid("dict_type", []any{"body"}, "Input should be a valid dictionary")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, body); err != nil {
		return nil, invalid("json_invalid", []any{"body"}, "JSON decode error")
	}
	return b.Bytes(), nil
}

// parsePatch validates ADK's UpdateSessionRequest {stateDelta}.
func parsePatch(body []byte) ([]byte, *httpError) {
	o, aerr := decodeObject(body, []any{"body"})
	if aerr != nil {
		return nil, aerr
	}
	delta, aerr := o.dict("stateDelta", "state_delta")
	if aerr != nil {
		return nil, aerr
	}
	if delta == nil {
		return nil, invalid("missing", o.at("stateDelta"), "Field required")
	}
	return delta, nil
}

func isEmptyBody(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 0 || bytes.Equal(b, []byte("null"))
}
