package actions

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
)

// bodyError words a body that cannot be read in the envelope.
func bodyError(e *httpx.BodyError) *actionError {
	code := CodeInvalidParameter
	switch e.Code {
	case httpx.CodeMediaType:
		code = CodeMediaType
	case httpx.CodeTooLarge:
		code = CodeTooLarge
	}
	return &actionError{Status: e.Status, Code: code, Message: e.Message}
}

// decodeJSON decodes a request body into v, a pointer to a request struct whose json
// tags are the action's PascalCase fields. Unknown fields are ignored (as KsADK does);
// a value of the wrong type is a 400 naming the field. It never panics.
func decodeJSON(body []byte, v any) *actionError {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		body = []byte("{}")
	}
	if body[0] != '{' {
		return invalid("the request body must be a JSON object")
	}
	err := json.Unmarshal(body, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return invalid("the request body must be a JSON object")
		}
		return invalid("%s must be %s, not %s", jsonPath(reflect.TypeOf(v), te.Field), describe(te.Type), te.Value)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return invalid("the request body is not valid JSON (at byte %d): %s", se.Offset, se.Error())
	}
	// Other decoder errors word Go types ("Go value of type …"): not for clients.
	return invalid("the request body is not valid JSON")
}

// jsonPath turns encoding/json's path of a field (which names the embedded structs it
// passes through by their Go type names: "scoped.AgentId") into the client's path
// ("AgentId"), so that error texts show no Go names.
func jsonPath(t reflect.Type, field string) string {
	var out []string
	for _, seg := range strings.Split(field, ".") {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			out = append(out, seg)
			t = nil
			continue
		}
		if sf, ok := t.FieldByName(seg); ok && sf.Anonymous && sf.Tag.Get("json") == "" {
			t = sf.Type // an embedded struct: not part of the JSON path
			continue
		}
		out = append(out, seg)
		var next reflect.Type
		for _, sf := range reflect.VisibleFields(t) {
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if name == "" {
				name = sf.Name
			}
			if name == seg && !sf.Anonymous {
				next = sf.Type
				break
			}
		}
		t = next
	}
	return strings.Join(out, ".")
}

// describe names a Go type the way a JSON client thinks of it.
func describe(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a " + t.Kind().String()
}

// firstError is the first of the checks that failed (nil if none did).
func firstError(checks ...*actionError) *actionError {
	for _, e := range checks {
		if e != nil {
			return e
		}
	}
	return nil
}

// checkID validates an optional client-chosen id.
func checkID(field, v string) *actionError {
	if v == "" {
		return nil
	}
	if err := host.ValidateID(v); err != nil {
		return invalid("%s is not a valid id: %v", field, err)
	}
	return nil
}

// requireID validates a required client-chosen id.
func requireID(field, v string) *actionError {
	if v == "" {
		return missing(field)
	}
	return checkID(field, v)
}

// checkRange validates an optional integer (nil: absent).
func checkRange(field string, v *int, lo, hi int) *actionError {
	if v != nil && (*v < lo || *v > hi) {
		return invalid("%s must be from %d to %d, not %d", field, lo, hi, *v)
	}
	return nil
}

func orDefault(v *int, def int) int {
	if v == nil {
		return def
	}
	return *v
}

// checkSeq validates an optional seq cursor.
func checkSeq(field string, v *int64) *actionError {
	if v != nil && *v < 0 {
		return invalid("%s must not be negative", field)
	}
	return nil
}

// jsonObject validates an optional member that must be a JSON object, compacted.
func jsonObject(field string, raw json.RawMessage) (json.RawMessage, *actionError) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	if t[0] != '{' {
		return nil, invalid("%s must be an object", field)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, t); err != nil {
		return nil, invalid("%s is not valid JSON", field)
	}
	return b.Bytes(), nil
}

// queryInt64 reads an optional non-negative integer query parameter.
func queryInt64(c *gin.Context, name string) (*int64, *actionError) {
	v, ok := c.GetQuery(name)
	if !ok || v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return nil, invalid("%s must be a non-negative integer, not %q", name, v)
	}
	return &n, nil
}

func ptr[T any](v T) *T { return &v }
