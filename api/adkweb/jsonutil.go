package adkweb

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/agentengine/agentengine/api/internal/httpx"
)

// marshal encodes v without HTML escaping (Python's json does not escape <, > and &)
// and without the trailing newline of json.Encoder.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := httpx.NewEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// mustJSON encodes values that are always encodable (plain structs, maps of strings).
func mustJSON(v any) json.RawMessage {
	b, err := marshal(v)
	if err != nil {
		panic("adkweb: encode: " + err.Error())
	}
	return b
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// argsObject turns stored tool arguments (a JSON string) into genai's args object.
// Arguments that are not an object are kept under "value".
func argsObject(s string) json.RawMessage {
	raw := json.RawMessage(strings.TrimSpace(s))
	switch {
	case len(raw) == 0:
		return emptyObject()
	case isObject(raw):
		return raw
	case json.Valid(raw):
		return mustJSON(map[string]json.RawMessage{"value": raw})
	}
	return mustJSON(map[string]string{"value": s})
}

// resultObject turns a tool's output into a function response object, as ADK does with
// a tool's return value: objects as they are, anything else under "result" ("error"
// for failed tools).
func resultObject(out string, isError bool) json.RawMessage {
	raw := json.RawMessage(strings.TrimSpace(out))
	if isObject(raw) {
		return raw
	}
	key := "result"
	if isError {
		key = "error"
	}
	if len(raw) > 0 && json.Valid(raw) {
		return mustJSON(map[string]json.RawMessage{key: raw})
	}
	return mustJSON(map[string]string{key: out})
}

// splitDataURL splits "data:<mime>;base64,<data>".
func splitDataURL(u string) (mime, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found || !strings.HasSuffix(meta, ";base64") {
		return "", "", false
	}
	return strings.TrimSuffix(meta, ";base64"), data, true
}
