package adkweb

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// runRequest is ADK's RunAgentRequest, validated.
type runRequest struct {
	AppName   string
	UserID    string
	SessionID string
	Parts     []part
	// Streaming asks for token-level partial events.
	Streaming bool
	// StateDelta is applied to the session state before the run (an object or nil).
	StateDelta json.RawMessage
	// InvocationID and FunctionCallEventID are accepted for compatibility; a resume is
	// recognised by the function responses it carries, and each turn is a new run.
	InvocationID        string
	FunctionCallEventID string
}

type partKind int

const (
	partText partKind = iota + 1
	partInline
	partFile
	partFunctionResponse
)

// part is one validated part of newMessage.
type part struct {
	Kind        partKind
	Text        string
	MimeType    string
	Data        string // standard padded base64
	DisplayName string
	URI         string
	// ID, Name and Response are a function response's.
	ID       string
	Name     string
	Response json.RawMessage
	// Raw is the part as the client sent it; a resume hands it to the runner.
	Raw json.RawMessage
}

type partField int

const (
	fieldUnknown partField = iota
	fieldData
	fieldMeta
	fieldUnsupported
)

// classifyPartField says what a field of genai's Part is, and gives its camelCase name:
// data becomes turn input, metadata is accepted and ignored, and the other genai kinds
// cannot be taken as input.
func classifyPartField(k string) (string, partField) {
	switch k {
	case "text":
		return k, fieldData
	case "inlineData", "inline_data":
		return "inlineData", fieldData
	case "fileData", "file_data":
		return "fileData", fieldData
	case "functionResponse", "function_response":
		return "functionResponse", fieldData
	case "thought", "thoughtSignature", "thought_signature", "videoMetadata", "video_metadata",
		"mediaResolution", "media_resolution", "partMetadata", "part_metadata":
		return k, fieldMeta
	case "functionCall", "function_call":
		return "functionCall", fieldUnsupported
	case "executableCode", "executable_code":
		return "executableCode", fieldUnsupported
	case "codeExecutionResult", "code_execution_result":
		return "codeExecutionResult", fieldUnsupported
	case "toolCall", "tool_call":
		return "toolCall", fieldUnsupported
	case "toolResponse", "tool_response":
		return "toolResponse", fieldUnsupported
	}
	return k, fieldUnknown
}

// parseRunRequest validates a POST /run or /run_sse body. Errors are 422 with pydantic
// style locations, except well-formed parts of kinds this server cannot run (400).
func parseRunRequest(body []byte) (*runRequest, *httpError) {
	o, aerr := decodeObject(body, []any{"body"})
	if aerr != nil {
		return nil, aerr
	}
	r := &runRequest{}
	for _, f := range []struct {
		camel, snake string
		dst          *string
		required     bool
	}{
		{"appName", "app_name", &r.AppName, true},
		{"userId", "user_id", &r.UserID, true},
		{"sessionId", "session_id", &r.SessionID, true},
		{"invocationId", "invocation_id", &r.InvocationID, false},
		{"functionCallEventId", "function_call_event_id", &r.FunctionCallEventID, false},
	} {
		if *f.dst, aerr = o.str(f.camel, f.snake, f.required); aerr != nil {
			return nil, aerr
		}
	}
	if r.Streaming, aerr = o.boolean("streaming", "streaming"); aerr != nil {
		return nil, aerr
	}
	if r.StateDelta, aerr = o.dict("stateDelta", "state_delta"); aerr != nil {
		return nil, aerr
	}
	raw, name, aerr := o.get("newMessage", "new_message")
	if aerr != nil {
		return nil, aerr
	}
	if raw == nil {
		// ADK accepts a missing message to resume a resumable invocation; runs here
		// resume through the function responses of a new message instead.
		return nil, invalid("missing", o.at(name), "Field required")
	}
	if r.Parts, aerr = parseContent(raw, o.at(name)); aerr != nil {
		return nil, aerr
	}
	return r, nil
}

// parseContent validates genai Content from the user.
func parseContent(raw json.RawMessage, loc []any) ([]part, *httpError) {
	o, aerr := decodeObject(raw, loc)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := o.only("role", "parts"); aerr != nil {
		return nil, aerr
	}
	role, aerr := o.str("role", "role", false)
	if aerr != nil {
		return nil, aerr
	}
	if role != "" && role != "user" {
		return nil, invalid("value_error", o.at("role"), `the message's role must be "user"`)
	}
	rawParts, _, _ := o.get("parts", "parts")
	if rawParts == nil {
		return nil, invalid("missing", o.at("parts"), "Field required")
	}
	var items []json.RawMessage
	if json.Unmarshal(rawParts, &items) != nil {
		return nil, invalid("list_type", o.at("parts"), "Input should be a valid list")
	}
	if len(items) == 0 {
		return nil, invalid("too_short", o.at("parts"), "the message needs at least one part")
	}
	parts := make([]part, 0, len(items))
	for i, it := range items {
		p, aerr := parsePart(it, o.at("parts", i))
		if aerr != nil {
			return nil, aerr
		}
		parts = append(parts, p)
	}
	return parts, nil
}

func parsePart(raw json.RawMessage, loc []any) (part, *httpError) {
	p := part{Raw: raw}
	o, aerr := decodeObject(raw, loc)
	if aerr != nil {
		return p, aerr
	}
	keys := make([]string, 0, len(o.m))
	for k := range o.m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // one message for the same part every time
	for _, k := range keys {
		if camel, f := classifyPartField(k); f == fieldUnsupported {
			return p, &httpError{Status: http.StatusBadRequest,
				Detail: "new_message: " + camel + " parts are not supported as input; send text, inlineData, fileData or functionResponse parts"}
		}
	}
	var kind string
	var value json.RawMessage
	valueLoc := loc
	for _, k := range keys {
		camel, f := classifyPartField(k)
		switch f {
		case fieldUnknown:
			return p, invalid("extra_forbidden", o.at(k), "Extra inputs are not permitted")
		case fieldMeta:
			continue
		case fieldData, fieldUnsupported:
			// A part's value: at most one per part, told apart below.
		}
		v := o.m[k]
		if string(bytes.TrimSpace(v)) == "null" {
			continue
		}
		if kind != "" {
			return p, invalid("value_error", loc, "a part carries exactly one of text, inlineData, fileData or functionResponse; this one has %s and %s", kind, camel)
		}
		kind, value, valueLoc = camel, v, o.at(k)
	}
	switch kind {
	case "text":
		p.Kind = partText
		if json.Unmarshal(value, &p.Text) != nil {
			return p, invalid("string_type", valueLoc, "Input should be a valid string")
		}
	case "inlineData":
		p.Kind = partInline
		aerr = parseBlob(&p, value, valueLoc)
	case "fileData":
		p.Kind = partFile
		aerr = parseFileData(&p, value, valueLoc)
	case "functionResponse":
		p.Kind = partFunctionResponse
		aerr = parseFunctionResponse(&p, value, valueLoc)
	default:
		return p, invalid("value_error", loc, "a part needs one of text, inlineData, fileData or functionResponse")
	}
	return p, aerr
}

func parseBlob(p *part, raw json.RawMessage, loc []any) *httpError {
	o, aerr := decodeObject(raw, loc)
	if aerr != nil {
		return aerr
	}
	if aerr := o.only("mimeType", "mime_type", "data", "displayName", "display_name"); aerr != nil {
		return aerr
	}
	if p.MimeType, aerr = o.str("mimeType", "mime_type", false); aerr != nil {
		return aerr
	}
	if p.MimeType == "" {
		p.MimeType = "application/octet-stream"
	} else if !validMime(p.MimeType) {
		return invalid("value_error", o.at("mimeType"), "not a media type: %q", p.MimeType)
	}
	if p.DisplayName, aerr = o.str("displayName", "display_name", false); aerr != nil {
		return aerr
	}
	data, aerr := o.str("data", "data", true)
	if aerr != nil {
		return aerr
	}
	b, ok := decodeBase64(data)
	if !ok {
		return invalid("bytes_type", o.at("data"), "data must be base64")
	}
	p.Data = base64.StdEncoding.EncodeToString(b)
	return nil
}

func parseFileData(p *part, raw json.RawMessage, loc []any) *httpError {
	o, aerr := decodeObject(raw, loc)
	if aerr != nil {
		return aerr
	}
	if aerr := o.only("fileUri", "file_uri", "mimeType", "mime_type", "displayName", "display_name"); aerr != nil {
		return aerr
	}
	if p.URI, aerr = o.str("fileUri", "file_uri", true); aerr != nil {
		return aerr
	}
	if p.MimeType, aerr = o.str("mimeType", "mime_type", false); aerr != nil {
		return aerr
	}
	if p.MimeType != "" && !validMime(p.MimeType) {
		return invalid("value_error", o.at("mimeType"), "not a media type: %q", p.MimeType)
	}
	p.DisplayName, aerr = o.str("displayName", "display_name", false)
	return aerr
}

func parseFunctionResponse(p *part, raw json.RawMessage, loc []any) *httpError {
	o, aerr := decodeObject(raw, loc)
	if aerr != nil {
		return aerr
	}
	// willContinue, scheduling and parts are genai fields with no meaning here.
	if aerr := o.only("id", "name", "response", "willContinue", "will_continue", "scheduling", "parts"); aerr != nil {
		return aerr
	}
	if p.ID, aerr = o.str("id", "id", false); aerr != nil {
		return aerr
	}
	if p.Name, aerr = o.str("name", "name", false); aerr != nil {
		return aerr
	}
	if p.Response, aerr = o.dict("response", "response"); aerr != nil {
		return aerr
	}
	if p.Response == nil {
		return invalid("missing", o.at("response"), "Field required")
	}
	return nil
}

// decodeBase64 accepts standard and URL-safe base64, padded or not (genai clients
// send either).
func decodeBase64(s string) ([]byte, bool) {
	s = strings.TrimRight(s, "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// validMime checks the type/subtype shape; the value ends up in data URLs.
func validMime(m string) bool {
	typ, sub, ok := strings.Cut(m, "/")
	if !ok || typ == "" || sub == "" {
		return false
	}
	for _, r := range m {
		if r <= ' ' || r == ',' || r == ';' || r == 0x7f {
			return false
		}
	}
	return true
}
