package adkweb

import (
	"bytes"
	"encoding/json"
	"slices"
)

// object is a JSON object being validated. ADK's request models accept every field by
// its camelCase alias or its snake_case name (pydantic populate_by_name), so lookups
// take both; giving both spellings of one field is rejected as ambiguous.
type object struct {
	m   map[string]json.RawMessage
	loc []any
}

func decodeObject(raw json.RawMessage, loc []any) (object, *httpError) {
	o := object{loc: loc}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		if !json.Valid(raw) {
			return o, invalid("json_invalid", loc, "JSON decode error")
		}
		return o, invalid("dict_type", loc, "Input should be a valid dictionary or object")
	}
	if err := json.Unmarshal(raw, &o.m); err != nil {
		return o, invalid("json_invalid", loc, "JSON decode error")
	}
	return o, nil
}

func (o object) at(name string, more ...any) []any {
	loc := append(append([]any{}, o.loc...), name)
	return append(loc, more...)
}

// get returns a field by either spelling; a JSON null counts as absent, as pydantic
// treats None for optional fields.
func (o object) get(camel, snake string) (raw json.RawMessage, name string, aerr *httpError) {
	a, okA := o.m[camel]
	b, okB := o.m[snake]
	if okA && okB && camel != snake {
		return nil, camel, invalid("value_error", o.at(camel), "give %s or %s, not both", camel, snake)
	}
	raw, name = a, camel
	if okB {
		raw, name = b, snake
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = nil
	}
	return raw, name, nil
}

// str reads a string field; required fields must be present and non-empty.
func (o object) str(camel, snake string, required bool) (string, *httpError) {
	raw, name, aerr := o.get(camel, snake)
	if aerr != nil {
		return "", aerr
	}
	if raw == nil {
		if required {
			return "", invalid("missing", o.at(name), "Field required")
		}
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", invalid("string_type", o.at(name), "Input should be a valid string")
	}
	if required && s == "" {
		return "", invalid("value_error", o.at(name), "Value must not be empty")
	}
	return s, nil
}

func (o object) boolean(camel, snake string) (bool, *httpError) {
	raw, name, aerr := o.get(camel, snake)
	if aerr != nil || raw == nil {
		return false, aerr
	}
	var b bool
	if json.Unmarshal(raw, &b) != nil {
		return false, invalid("bool_type", o.at(name), "Input should be a valid boolean")
	}
	return b, nil
}

// dict reads an optional object field, returned compact.
func (o object) dict(camel, snake string) (json.RawMessage, *httpError) {
	raw, name, aerr := o.get(camel, snake)
	if aerr != nil || raw == nil {
		return nil, aerr
	}
	if !isObject(raw) {
		return nil, invalid("dict_type", o.at(name), "Input should be a valid dictionary")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, invalid("dict_type", o.at(name), "Input should be a valid dictionary")
	}
	return b.Bytes(), nil
}

// only rejects fields outside the given names (genai models forbid extra fields).
func (o object) only(names ...string) *httpError {
	var extra []string
	for k := range o.m {
		if !slices.Contains(names, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra) // report the same field every time
	return invalid("extra_forbidden", o.at(extra[0]), "Extra inputs are not permitted")
}
