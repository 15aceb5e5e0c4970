package openai

import (
	"bytes"
	"encoding/json"

	"github.com/agentengine/agentengine/session"
)

// chatRequest is a decoded and validated POST /v1/chat/completions body.
type chatRequest struct {
	Model            string
	Messages         []chatMessage
	Stream           bool
	IncludeUsage     bool
	SessionID        string
	User             string
	SafetyIdentifier string
	Metadata         map[string]string
	ModelMetadata    json.RawMessage
	ModelOptions     json.RawMessage
	KsadkEvents      bool
}

// chatMessage is one parsed chat message.
type chatMessage struct {
	Role string
	// Blocks is the content as Responses-style blocks (text parts as input_text).
	Blocks     []session.ContentBlock
	ToolCallID string
	ToolCalls  []chatToolCall
}

// text joins the text blocks of a message.
func (m chatMessage) text() string {
	var b bytes.Buffer
	for _, blk := range m.Blocks {
		if blk.Type == "input_text" {
			b.WriteString(blk.Text)
		}
	}
	return b.String()
}

const maxChatMessages = 10000

// parseChatRequest decodes and validates a Chat Completions body. It never panics.
func parseChatRequest(body []byte) (*chatRequest, *apiError) {
	f, aerr := decodeObject(body, "", "the request body")
	if aerr != nil {
		aerr.Param = ""
		return nil, aerr
	}
	r := &chatRequest{}
	if r.Model, _, aerr = f.str("model"); aerr != nil {
		return nil, aerr
	}
	raw, ok := f.get("messages")
	if !ok {
		return nil, badRequest("messages", "missing_required_parameter", "messages is required")
	}
	var msgs []json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '[' || json.Unmarshal(t, &msgs) != nil {
		return nil, badRequest("messages", "invalid_type", "messages must be an array of messages")
	}
	if len(msgs) == 0 {
		return nil, badRequest("messages", "", "messages must contain at least one message")
	}
	if len(msgs) > maxChatMessages {
		return nil, badRequest("messages", "", "messages has %d entries; at most %d are allowed", len(msgs), maxChatMessages)
	}
	for i, m := range msgs {
		cm, aerr := parseChatMessage(m, itemPath("messages", i))
		if aerr != nil {
			return nil, aerr
		}
		r.Messages = append(r.Messages, cm)
	}
	if r.Stream, _, aerr = f.boolean("stream"); aerr != nil {
		return nil, aerr
	}
	if so, ok := f.get("stream_options"); ok {
		sf, aerr := decodeObject(so, "stream_options.", "stream_options")
		if aerr != nil {
			return nil, aerr
		}
		if r.IncludeUsage, _, aerr = sf.boolean("include_usage"); aerr != nil {
			return nil, aerr
		}
	}
	if n, aerr := f.integer("n"); aerr != nil {
		return nil, aerr
	} else if n != nil && *n != 1 {
		return nil, badRequest("n", "unsupported_value", "n must be 1: an agent produces one answer per turn")
	}
	if r.SessionID, _, aerr = f.id("session_id"); aerr != nil {
		return nil, aerr
	}
	if r.User, _, aerr = f.id("user"); aerr != nil {
		return nil, aerr
	}
	if r.SafetyIdentifier, _, aerr = f.id("safety_identifier"); aerr != nil {
		return nil, aerr
	}
	if r.Metadata, aerr = f.metadata("metadata"); aerr != nil {
		return nil, aerr
	}
	if r.ModelMetadata, aerr = f.object("model_metadata"); aerr != nil {
		return nil, aerr
	}
	if r.ModelOptions, aerr = f.object("model_options"); aerr != nil {
		return nil, aerr
	}
	if r.KsadkEvents, _, aerr = f.boolean("ksadk_events"); aerr != nil {
		return nil, aerr
	}
	// Accepted for compatibility, type-checked, not forwarded: the agent owns its model.
	for _, k := range []string{"temperature", "top_p", "frequency_penalty", "presence_penalty"} {
		if _, aerr := f.number(k); aerr != nil {
			return nil, aerr
		}
	}
	for _, k := range []string{"max_tokens", "max_completion_tokens"} {
		if _, aerr := f.intAtLeast(k, 1); aerr != nil {
			return nil, aerr
		}
	}
	if _, aerr := f.integer("seed"); aerr != nil {
		return nil, aerr
	}
	if _, aerr := f.array("tools"); aerr != nil {
		return nil, aerr
	}
	if _, aerr := f.stringOrObject("tool_choice"); aerr != nil {
		return nil, aerr
	}
	return r, nil
}

func parseChatMessage(raw json.RawMessage, p string) (chatMessage, *apiError) {
	f, aerr := decodeObject(raw, p, paramOf(p))
	if aerr != nil {
		return chatMessage{}, aerr
	}
	role, aerr := f.reqStr("role")
	if aerr != nil {
		return chatMessage{}, aerr
	}
	m := chatMessage{Role: role}
	switch role {
	case roleSystem, roleDeveloper, roleUser, roleAssistant, "tool":
	case "function":
		return m, badRequest(p+"role", "unsupported_value", "%srole function is deprecated and not supported; use tool messages", p)
	default:
		return m, badRequest(p+"role", "unsupported_value", "%srole must be one of system, developer, user, assistant, tool; got %q", p, role)
	}
	content, hasContent := f.get("content")
	if !hasContent && role != roleAssistant {
		return m, badRequest(p+"content", "missing_required_parameter", "%scontent is required", p)
	}
	if hasContent {
		if m.Blocks, aerr = parseChatContent(content, p+"content", role); aerr != nil {
			return m, aerr
		}
	}
	switch role {
	case "tool":
		if m.ToolCallID, aerr = f.reqStr("tool_call_id"); aerr != nil {
			return m, aerr
		}
	case roleAssistant:
		if m.ToolCalls, aerr = parseChatToolCalls(f, p); aerr != nil {
			return m, aerr
		}
	}
	return m, nil
}

// parseChatContent reads chat content (a string or parts) as Responses-style blocks.
func parseChatContent(raw json.RawMessage, param, role string) ([]session.ContentBlock, *apiError) {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) != nil {
			return nil, badRequest(param, "invalid_type", "%s must be a string or an array of content parts", param)
		}
		return []session.ContentBlock{{Type: "input_text", Text: s}}, nil
	}
	var parts []json.RawMessage
	if len(t) == 0 || t[0] != '[' || json.Unmarshal(t, &parts) != nil {
		return nil, badRequest(param, "invalid_type", "%s must be a string or an array of content parts", param)
	}
	if len(parts) > maxContentPartsPerItem {
		return nil, badRequest(param, "", "%s has too many parts (at most %d)", param, maxContentPartsPerItem)
	}
	out := make([]session.ContentBlock, 0, len(parts))
	for j, pr := range parts {
		b, aerr := parseChatPart(pr, itemPath(param, j), role)
		if aerr != nil {
			return nil, aerr
		}
		out = append(out, b)
	}
	return out, nil
}

func parseChatPart(raw json.RawMessage, p, role string) (session.ContentBlock, *apiError) {
	f, aerr := decodeObject(raw, p, paramOf(p))
	if aerr != nil {
		return session.ContentBlock{}, aerr
	}
	typ, aerr := f.reqStr("type")
	if aerr != nil {
		return session.ContentBlock{}, aerr
	}
	switch typ {
	case "text":
		text, ok, aerr := f.str("text")
		if aerr != nil {
			return session.ContentBlock{}, aerr
		}
		if !ok {
			return session.ContentBlock{}, badRequest(p+"text", "missing_required_parameter", "%stext is required", p)
		}
		return session.ContentBlock{Type: "input_text", Text: text}, nil
	case "refusal":
		text, aerr := f.reqStr("refusal")
		return session.ContentBlock{Type: "input_text", Text: text}, aerr
	case "image_url":
		v, ok := f.get("image_url")
		if !ok {
			return session.ContentBlock{}, badRequest(p+"image_url", "missing_required_parameter", "%simage_url is required", p)
		}
		img, aerr := decodeObject(v, p+"image_url.", p+"image_url")
		if aerr != nil {
			return session.ContentBlock{}, aerr
		}
		b := session.ContentBlock{Type: "input_image"}
		if b.ImageURL, aerr = img.reqStr("url"); aerr != nil {
			return b, aerr
		}
		if b.Detail, _, aerr = img.str("detail"); aerr != nil {
			return b, aerr
		}
		return b, nil
	case "file":
		v, ok := f.get("file")
		if !ok {
			return session.ContentBlock{}, badRequest(p+"file", "missing_required_parameter", "%sfile is required", p)
		}
		file, aerr := decodeObject(v, p+"file.", p+"file")
		if aerr != nil {
			return session.ContentBlock{}, aerr
		}
		b := session.ContentBlock{Type: "input_file"}
		if b.FileData, _, aerr = file.str("file_data"); aerr != nil {
			return b, aerr
		}
		if b.FileID, _, aerr = file.str("file_id"); aerr != nil {
			return b, aerr
		}
		if b.Filename, _, aerr = file.str("filename"); aerr != nil {
			return b, aerr
		}
		if b.FileData == "" && b.FileID == "" {
			return b, badRequest(p+"file", "missing_required_parameter", "%sfile needs file_data or file_id", p)
		}
		b.FileData = asDataURL(b.FileData, b.Filename)
		return b, nil
	case "input_text", "input_image", "input_file":
		// Responses-style parts, which some clients send to both endpoints.
		part, aerr := parseContentPart(raw, p, roleUser)
		if aerr != nil {
			return session.ContentBlock{}, aerr
		}
		return part.(session.ContentBlock), nil
	}
	return session.ContentBlock{}, badRequest(p+"type", "unsupported_value", "%stype %q is not a supported content part type (supported: text, image_url, file)", p, typ)
}

func parseChatToolCalls(f fields, p string) ([]chatToolCall, *apiError) {
	raw, aerr := f.array("tool_calls")
	if aerr != nil || raw == nil {
		return nil, aerr
	}
	var calls []json.RawMessage
	if json.Unmarshal(raw, &calls) != nil {
		return nil, f.typeErr("tool_calls", "an array")
	}
	out := make([]chatToolCall, 0, len(calls))
	for i, c := range calls {
		cp := itemPath(p+"tool_calls", i)
		cf, aerr := decodeObject(c, cp, paramOf(cp))
		if aerr != nil {
			return nil, aerr
		}
		tc := chatToolCall{Type: "function"}
		if tc.ID, aerr = cf.reqStr("id"); aerr != nil {
			return nil, aerr
		}
		fv, ok := cf.get("function")
		if !ok {
			return nil, badRequest(cp+"function", "missing_required_parameter", "%sfunction is required", cp)
		}
		fn, aerr := decodeObject(fv, cp+"function.", cp+"function")
		if aerr != nil {
			return nil, aerr
		}
		if tc.Function.Name, aerr = fn.reqStr("name"); aerr != nil {
			return nil, aerr
		}
		if tc.Function.Arguments, _, aerr = fn.str("arguments"); aerr != nil {
			return nil, aerr
		}
		out = append(out, tc)
	}
	return out, nil
}

// item converts a chat message to a Responses-style input item for runners (the
// messages of a stateless client that precede its current one).
func (m chatMessage) items() []json.RawMessage {
	switch m.Role {
	case "tool":
		return []json.RawMessage{session.MustJSON(struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Output string `json:"output"`
		}{itemFunctionCallOutput, m.ToolCallID, m.text()})}
	case roleAssistant:
		var out []json.RawMessage
		if t := m.text(); t != "" {
			out = append(out, session.MustJSON(messageJSON{Type: itemMessage, Role: roleAssistant, Content: []outputTextPart{newOutputText(t)}}))
		}
		for _, c := range m.ToolCalls {
			out = append(out, session.MustJSON(functionCallJSON{Type: itemFunctionCall, CallID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments, Status: "completed"}))
		}
		return out
	}
	blocks := m.Blocks
	if blocks == nil {
		blocks = []session.ContentBlock{}
	}
	return []json.RawMessage{session.MustJSON(messageJSON{Type: itemMessage, Role: m.Role, Content: blocks})}
}
