package adkweb

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// parseCreateSession validates ADK's CreateSessionRequest (an empty body is none).
func parseCreateSession(body []byte) (id string, state []byte, aerr *httpError) {
	if isEmptyBody(body) {
		return "", nil, nil
	}
	o, aerr := decodeObject(body, []any{"body"})
	if aerr != nil {
		return "", nil, aerr
	}
	if id, aerr = o.str("sessionId", "session_id", false); aerr != nil {
		return "", nil, aerr
	}
	if state, aerr = o.dict("state", "state"); aerr != nil {
		return "", nil, aerr
	}
	evs, name, aerr := o.get("events", "events")
	if aerr != nil {
		return "", nil, aerr
	}
	if evs != nil {
		var list []json.RawMessage
		if json.Unmarshal(evs, &list) != nil {
			return "", nil, invalid("list_type", o.at(name), "Input should be a valid list")
		}
		if len(list) > 0 {
			return "", nil, detail(http.StatusBadRequest, "creating a session with events is not supported: events are written by runs; send the messages with /run_sse")
		}
	}
	return id, state, nil
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
