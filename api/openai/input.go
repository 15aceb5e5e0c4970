package openai

import (
	"bytes"
	"encoding/json"
	"mime"
	"path"
	"strings"

	"github.com/agentengine/agentengine/session"
)

// Input item kinds this surface accepts.
const (
	itemMessage             = "message"
	itemReference           = "item_reference"
	itemFunctionCall        = "function_call"
	itemFunctionCallOutput  = "function_call_output"
	itemMCPApprovalRequest  = "mcp_approval_request"
	itemMCPApprovalResponse = "mcp_approval_response"
	itemReasoning           = "reasoning"
	itemMCPCall             = "mcp_call"
	itemMCPListTools        = "mcp_list_tools"
)

// Message roles.
const (
	roleUser      = "user"
	roleAssistant = "assistant"
	roleSystem    = "system"
	roleDeveloper = "developer"
)

// Limits on request shape, against pathological bodies within the size limit.
const (
	maxInputItems          = 10000
	maxContentPartsPerItem = 1000
)

// serverLabel is the server_label of approval requests: the runtime itself.
const serverLabel = "agentengine"

// inputItem is one parsed input item. Raw is its normalised JSON, which is what a
// runner receives for items that are not the turn's current user message; a message's
// is built by Item only when it is passed on (the current one, which may be megabytes,
// never is).
type inputItem struct {
	Kind string
	ID   string // the client's item id, if any
	Role string
	// Blocks is the content of a message as Responses-style blocks.
	Blocks []session.ContentBlock
	Raw    json.RawMessage
	// content is a message's normalised content, for Item.
	content any
	// item_reference
	RefID string
	// function_call_output; function_call
	CallID string
	Output string
	// mcp_approval_response (and a function_call_output read as an approval answer)
	ApprovalID string
	Approve    bool
	Reason     string
}

// parseInput reads the Responses "input": a string, one item object, or an array of
// items.
func parseInput(raw json.RawMessage) ([]inputItem, *apiError) {
	return parseInputAt(raw, "input")
}

// parseInputAt is parseInput for a value held in the request field name (errors name
// that field and its items, e.g. "ResponsesInput[0].content").
func parseInputAt(raw json.RawMessage, name string) ([]inputItem, *apiError) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return nil, badRequest(name, "missing_required_parameter", "%s is required", name)
	}
	switch t[0] {
	case '"':
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, badRequest(name, "invalid_json", "%s is not a valid JSON string", name)
		}
		if s == "" {
			return nil, badRequest(name, "", "%s must not be empty", name)
		}
		return []inputItem{textMessage(roleUser, s, "")}, nil
	case '{':
		it, aerr := parseInputItem(t, name+".")
		if aerr != nil {
			return nil, aerr
		}
		return []inputItem{it}, nil
	case '[':
		var raws []json.RawMessage
		if err := json.Unmarshal(t, &raws); err != nil {
			return nil, badRequest(name, "invalid_type", "%s must be an array of input items", name)
		}
		if len(raws) == 0 {
			return nil, badRequest(name, "", "%s must not be empty", name)
		}
		if len(raws) > maxInputItems {
			return nil, badRequest(name, "", "%s has %d items; at most %d are allowed", name, len(raws), maxInputItems)
		}
		return parseInputItems(raws, name)
	}
	return nil, badRequest(name, "invalid_type", "%s must be a string, an input item object or an array of input items", name)
}

func textMessage(role, text, id string) inputItem {
	it := inputItem{Kind: itemMessage, Role: role, ID: id}
	if role == roleAssistant {
		it.content = []any{newOutputText(text)}
		return it
	}
	it.Blocks = []session.ContentBlock{{Type: "input_text", Text: text}}
	it.content = it.Blocks
	return it
}

// Item is the item's normalised JSON, as a runner receives it.
func (it *inputItem) Item() json.RawMessage {
	if it.Raw == nil && it.Kind == itemMessage {
		it.Raw = session.MustJSON(messageJSON{Type: itemMessage, ID: it.ID, Role: it.Role, Content: it.content})
	}
	return it.Raw
}

// messageJSON is the normalised shape of a message item.
type messageJSON struct {
	Type    string `json:"type"`
	ID      string `json:"id,omitempty"`
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// parseInputItems parses an array's items, each error naming the item's path under name.
func parseInputItems(raws []json.RawMessage, name string) ([]inputItem, *apiError) {
	out := make([]inputItem, 0, len(raws))
	for i, r := range raws {
		it, aerr := parseInputItem(r, itemPath(name, i))
		if aerr != nil {
			return nil, aerr
		}
		out = append(out, it)
	}
	return out, nil
}

func parseInputItem(raw json.RawMessage, p string) (inputItem, *apiError) {
	f, aerr := decodeObject(raw, p, paramOf(p))
	if aerr != nil {
		return inputItem{}, aerr
	}
	typ, _, aerr := f.str("type")
	if aerr != nil {
		return inputItem{}, aerr
	}
	id, _, aerr := f.str("id")
	if aerr != nil {
		return inputItem{}, aerr
	}
	if typ == "" {
		// The AI SDK and other clients omit type on messages ({role, content}) and on
		// item references ({id}).
		switch {
		case f.has("role"):
			typ = itemMessage
		case id != "":
			typ = itemReference
		default:
			return inputItem{}, badRequest(p+"type", "missing_required_parameter", "%stype is required", p)
		}
	}
	it := inputItem{Kind: typ, ID: id}
	switch typ {
	case itemMessage:
		return parseMessageItem(f, it)
	case itemReference:
		if it.RefID, aerr = f.reqStr("id"); aerr != nil {
			return it, aerr
		}
		return it, nil
	case itemFunctionCallOutput:
		if it.CallID, aerr = f.reqStr("call_id"); aerr != nil {
			return it, aerr
		}
		out, ok := f.get("output")
		if !ok {
			return it, badRequest(p+"output", "missing_required_parameter", "%soutput is required", p)
		}
		if it.Output, aerr = toolOutputText(out, p+"output"); aerr != nil {
			return it, aerr
		}
		it.Approve, it.Reason = approvalVerdict(it.Output)
		it.Raw = session.MustJSON(struct {
			Type   string          `json:"type"`
			ID     string          `json:"id,omitempty"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		}{typ, id, it.CallID, compact(out)})
		return it, nil
	case itemMCPApprovalResponse:
		if it.ApprovalID, aerr = f.reqStr("approval_request_id"); aerr != nil {
			return it, aerr
		}
		approve, ok, aerr := f.boolean("approve")
		if aerr != nil {
			return it, aerr
		}
		if !ok { // KsADK accepted "approved" too
			if approve, ok, aerr = f.boolean("approved"); aerr != nil {
				return it, aerr
			}
		}
		if !ok {
			return it, badRequest(p+"approve", "missing_required_parameter", "%sapprove is required", p)
		}
		if it.Reason, _, aerr = f.str("reason"); aerr != nil {
			return it, aerr
		}
		it.Approve = approve
		it.Raw = session.MustJSON(struct {
			Type              string `json:"type"`
			ID                string `json:"id,omitempty"`
			ApprovalRequestID string `json:"approval_request_id"`
			Approve           bool   `json:"approve"`
			Reason            string `json:"reason,omitempty"`
		}{typ, id, it.ApprovalID, approve, it.Reason})
		return it, nil
	case itemFunctionCall:
		if it.CallID, aerr = f.reqStr("call_id"); aerr != nil {
			return it, aerr
		}
		name, aerr := f.reqStr("name")
		if aerr != nil {
			return it, aerr
		}
		args, _, aerr := f.str("arguments")
		if aerr != nil {
			return it, aerr
		}
		it.Raw = session.MustJSON(functionCallJSON{Type: typ, ID: id, CallID: it.CallID, Name: name, Arguments: args, Status: "completed"})
		return it, nil
	case itemReasoning, itemMCPApprovalRequest, itemMCPCall, itemMCPListTools:
		// History items a stateless client replays; runners get them as sent.
		it.Raw = compact(raw)
		return it, nil
	}
	return it, badRequest(p+"type", "unsupported_value", "%stype %q is not a supported input item type (supported: message, item_reference, function_call, function_call_output, mcp_approval_response, mcp_approval_request, mcp_call, mcp_list_tools, reasoning)", p, typ)
}

type functionCallJSON struct {
	Type      string `json:"type"`
	ID        string `json:"id,omitempty"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Status    string `json:"status,omitempty"`
}

func parseMessageItem(f fields, it inputItem) (inputItem, *apiError) {
	p := f.path
	role, aerr := f.reqStr("role")
	if aerr != nil {
		return it, aerr
	}
	switch role {
	case roleUser, roleAssistant, roleSystem, roleDeveloper:
	default:
		return it, badRequest(p+"role", "unsupported_value", "%srole must be one of user, assistant, system, developer; got %q", p, role)
	}
	it.Role = role
	content, ok := f.get("content")
	if !ok {
		return it, badRequest(p+"content", "missing_required_parameter", "%scontent is required", p)
	}
	t := bytes.TrimSpace(content)
	var parts []json.RawMessage
	switch {
	case len(t) > 0 && t[0] == '"':
		var s string
		if json.Unmarshal(t, &s) != nil {
			return it, f.typeErr("content", "a string or an array of content parts")
		}
		return textMessage(role, s, it.ID), nil
	case len(t) > 0 && t[0] == '[':
		if json.Unmarshal(t, &parts) != nil {
			return it, f.typeErr("content", "a string or an array of content parts")
		}
	default:
		return it, f.typeErr("content", "a string or an array of content parts")
	}
	if len(parts) > maxContentPartsPerItem {
		return it, badRequest(p+"content", "", "%scontent has too many parts (at most %d)", p, maxContentPartsPerItem)
	}
	var out []any
	for j, raw := range parts {
		pp := itemPath(p+"content", j)
		part, aerr := parseContentPart(raw, pp, role)
		if aerr != nil {
			return it, aerr
		}
		if b, ok := part.(session.ContentBlock); ok {
			it.Blocks = append(it.Blocks, b)
		}
		out = append(out, part)
	}
	if out == nil {
		out = []any{}
	}
	it.content = out
	return it, nil
}

// parseContentPart returns a session.ContentBlock for input parts and an
// outputTextJSON (or refusal) for assistant history parts.
func parseContentPart(raw json.RawMessage, p, role string) (any, *apiError) {
	f, aerr := decodeObject(raw, p, paramOf(p))
	if aerr != nil {
		return nil, aerr
	}
	typ, aerr := f.reqStr("type")
	if aerr != nil {
		return nil, aerr
	}
	switch typ {
	case "input_text", "output_text", "text":
		text, ok, aerr := f.str("text")
		if aerr != nil {
			return nil, aerr
		}
		if !ok {
			return nil, badRequest(p+"text", "missing_required_parameter", "%stext is required", p)
		}
		if role == roleAssistant {
			return newOutputText(text), nil
		}
		return session.ContentBlock{Type: "input_text", Text: text}, nil
	case "refusal":
		text, aerr := f.reqStr("refusal")
		if aerr != nil {
			return nil, aerr
		}
		return struct {
			Type    string `json:"type"`
			Refusal string `json:"refusal"`
		}{typ, text}, nil
	case "input_image":
		b := session.ContentBlock{Type: typ}
		var aerr *apiError
		if b.ImageURL, _, aerr = f.str("image_url"); aerr != nil {
			return nil, aerr
		}
		if b.FileID, _, aerr = f.str("file_id"); aerr != nil {
			return nil, aerr
		}
		if b.Detail, _, aerr = f.str("detail"); aerr != nil {
			return nil, aerr
		}
		if b.ImageURL == "" && b.FileID == "" {
			return nil, badRequest(p+"image_url", "missing_required_parameter", "%s needs image_url or file_id", paramOf(p))
		}
		return b, nil
	case "input_file":
		b := session.ContentBlock{Type: typ}
		var aerr *apiError
		if b.FileData, _, aerr = f.str("file_data"); aerr != nil {
			return nil, aerr
		}
		if b.FileURL, _, aerr = f.str("file_url"); aerr != nil {
			return nil, aerr
		}
		if b.FileID, _, aerr = f.str("file_id"); aerr != nil {
			return nil, aerr
		}
		if b.Filename, _, aerr = f.str("filename"); aerr != nil {
			return nil, aerr
		}
		if b.FileData == "" && b.FileURL == "" && b.FileID == "" {
			return nil, badRequest(p+"file_data", "missing_required_parameter", "%s needs file_data, file_url or file_id", paramOf(p))
		}
		b.FileData = asDataURL(b.FileData, b.Filename)
		return b, nil
	}
	return nil, badRequest(p+"type", "unsupported_value", "%stype %q is not a supported content part type (supported: input_text, input_image, input_file, output_text, refusal)", p, typ)
}

// asDataURL turns OpenAI's bare base64 file_data into a data URL (the host treats
// data URLs as inline content and anything else as a reference).
func asDataURL(data, filename string) string {
	if data == "" || strings.HasPrefix(data, "data:") {
		return data
	}
	mt := mime.TypeByExtension(path.Ext(filename))
	if mt == "" {
		mt = "application/octet-stream"
	}
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = mt[:i]
	}
	return "data:" + mt + ";base64," + data
}

// toolOutputText reads a tool output: a string, or an array of content parts whose
// text parts are joined.
func toolOutputText(raw json.RawMessage, param string) (string, *apiError) {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) != nil {
			return "", badRequest(param, "invalid_type", "%s must be a string or an array of content parts", param)
		}
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if len(t) == 0 || t[0] != '[' || json.Unmarshal(t, &parts) != nil {
		return "", badRequest(param, "invalid_type", "%s must be a string or an array of content parts", param)
	}
	var sb strings.Builder
	for _, p := range parts {
		if p.Type == "input_text" || p.Type == "output_text" || p.Type == "text" {
			sb.WriteString(p.Text)
		}
	}
	return sb.String(), nil
}

// approvalVerdict reads a tool output that answers an approval request: a JSON object
// with a boolean "approve" (or "approved") and an optional "reason" decides; any other
// output approves, with the output as the tool's result.
func approvalVerdict(output string) (approve bool, reason string) {
	var v struct {
		Approve  *bool  `json:"approve"`
		Approved *bool  `json:"approved"`
		Reason   string `json:"reason"`
	}
	if json.Unmarshal([]byte(output), &v) == nil {
		switch {
		case v.Approve != nil:
			return *v.Approve, v.Reason
		case v.Approved != nil:
			return *v.Approved, v.Reason
		}
	}
	return true, ""
}
