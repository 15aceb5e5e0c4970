package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/agentengine/agentengine/host"
)

// fields is a decoded JSON object whose members are read one at a time, so that a
// wrong type is reported with the name of the offending field (param) instead of
// encoding/json's Go-flavoured message. Unknown members are ignored, as OpenAI does.
type fields struct {
	m    map[string]json.RawMessage
	path string // prefix for params: "" at top level, "input[2]." inside an item
}

// decodeObject parses raw as a JSON object.
func decodeObject(raw []byte, path, what string) (fields, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return fields{}, badRequest(paramOf(path), "invalid_type", "%s must be a JSON object", what)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fields{}, badRequest(paramOf(path), "invalid_json", "%s is not valid JSON: %v", what, err)
	}
	return fields{m: m, path: path}, nil
}

// paramOf turns an item path prefix ("input[2].") into a param name ("input[2]").
func paramOf(path string) string {
	if n := len(path); n > 0 && path[n-1] == '.' {
		return path[:n-1]
	}
	return path
}

// get returns a member, treating JSON null like an absent member.
func (f fields) get(key string) (json.RawMessage, bool) {
	v, ok := f.m[key]
	if !ok || isNull(v) {
		return nil, false
	}
	return v, true
}

func (f fields) has(key string) bool { _, ok := f.get(key); return ok }

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

func (f fields) typeErr(key, want string) *apiError {
	return badRequest(f.path+key, "invalid_type", "%s%s must be %s", f.path, key, want)
}

func (f fields) str(key string) (string, bool, *apiError) {
	v, ok := f.get(key)
	if !ok {
		return "", false, nil
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false, f.typeErr(key, "a string")
	}
	return s, true, nil
}

// reqStr is a required, non-empty string.
func (f fields) reqStr(key string) (string, *apiError) {
	s, ok, err := f.str(key)
	if err != nil {
		return "", err
	}
	if !ok || s == "" {
		return "", badRequest(f.path+key, "missing_required_parameter", "%s%s is required", f.path, key)
	}
	return s, nil
}

func (f fields) boolean(key string) (bool, bool, *apiError) {
	v, ok := f.get(key)
	if !ok {
		return false, false, nil
	}
	var b bool
	if json.Unmarshal(v, &b) != nil {
		return false, false, f.typeErr(key, "a boolean")
	}
	return b, true, nil
}

func (f fields) number(key string) (*float64, *apiError) {
	v, ok := f.get(key)
	if !ok {
		return nil, nil
	}
	var n float64
	if json.Unmarshal(v, &n) != nil {
		return nil, f.typeErr(key, "a number")
	}
	return &n, nil
}

func (f fields) integer(key string) (*int64, *apiError) {
	v, ok := f.get(key)
	if !ok {
		return nil, nil
	}
	var n int64
	if json.Unmarshal(v, &n) != nil {
		return nil, f.typeErr(key, "an integer")
	}
	return &n, nil
}

// intAtLeast is integer for a member with a lower bound (OpenAI's
// integer_below_min_value error).
func (f fields) intAtLeast(key string, min int64) (*int64, *apiError) {
	n, aerr := f.integer(key)
	if aerr == nil && n != nil && *n < min {
		return nil, badRequest(key, "integer_below_min_value", "Invalid '%s': integer below minimum value. Expected a value >= %d, but got %d instead.", key, min, *n)
	}
	return n, aerr
}

// object returns a member that must be a JSON object, compacted.
func (f fields) object(key string) (json.RawMessage, *apiError) {
	v, ok := f.get(key)
	if !ok {
		return nil, nil
	}
	if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '{' {
		return nil, f.typeErr(key, "an object")
	}
	return compact(v), nil
}

// array returns a member that must be a JSON array, compacted.
func (f fields) array(key string) (json.RawMessage, *apiError) {
	v, ok := f.get(key)
	if !ok {
		return nil, nil
	}
	if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '[' {
		return nil, f.typeErr(key, "an array")
	}
	return compact(v), nil
}

// stringOrObject returns a member that must be a string or an object (tool_choice).
func (f fields) stringOrObject(key string) (json.RawMessage, *apiError) {
	v, ok := f.get(key)
	if !ok {
		return nil, nil
	}
	if t := bytes.TrimSpace(v); len(t) == 0 || (t[0] != '{' && t[0] != '"') {
		return nil, f.typeErr(key, "a string or an object")
	}
	return compact(v), nil
}

func compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// OpenAI's metadata limits.
const (
	maxMetadataPairs    = 16
	maxMetadataKeyLen   = 64
	maxMetadataValueLen = 512
)

// metadata reads OpenAI metadata: at most 16 string pairs, keys up to 64 and values up
// to 512 characters.
func (f fields) metadata(key string) (map[string]string, *apiError) {
	v, ok := f.get(key)
	if !ok {
		return nil, nil
	}
	obj, aerr := decodeObject(v, f.path+key, f.path+key)
	if aerr != nil {
		return nil, aerr
	}
	if len(obj.m) > maxMetadataPairs {
		return nil, badRequest(f.path+key, "", "%s%s has %d pairs; at most %d are allowed", f.path, key, len(obj.m), maxMetadataPairs)
	}
	out := make(map[string]string, len(obj.m))
	for k, raw := range obj.m {
		param := f.path + key + "." + k
		if utf8.RuneCountInString(k) > maxMetadataKeyLen {
			return nil, badRequest(f.path+key, "", "%s%s keys are at most %d characters", f.path, key, maxMetadataKeyLen)
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, badRequest(param, "invalid_type", "%s must be a string", param)
		}
		if utf8.RuneCountInString(s) > maxMetadataValueLen {
			return nil, badRequest(param, "", "%s is longer than %d characters", param, maxMetadataValueLen)
		}
		out[k] = s
	}
	return out, nil
}

// id reads an optional client-chosen identifier (conversation, session, user).
func (f fields) id(key string) (string, bool, *apiError) {
	s, ok, aerr := f.str(key)
	if aerr != nil || !ok {
		return "", false, aerr
	}
	if err := host.ValidateID(s); err != nil {
		return "", false, badRequest(f.path+key, "", "%s%s is not a valid id: %v", f.path, key, err)
	}
	return s, true, nil
}

func itemPath(base string, i int) string { return fmt.Sprintf("%s[%d].", base, i) }
