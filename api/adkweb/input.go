package adkweb

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// functionResponse is a function response of a message as a tool output for the host
// to sort (host.Runtime.SortToolOutputs); confirmation marks an adk_request_confirmation
// answer, which must answer a pending approval.
type functionResponse struct {
	host.ToolOutput
	confirmation bool
}

// turnParts maps a message's parts onto a turn's content and its function responses.
// An adk_request_confirmation answer (id = the approval id) decides the approval with
// its "confirmed" flag; a response to the guarded call itself approves it and is the
// tool's result; any other function response is a tool result the runner receives as a
// function_call_output item.
func turnParts(parts []part) (host.Input, []functionResponse, *httpError) {
	var in host.Input
	var outs []functionResponse
	for i, p := range parts {
		switch p.Kind {
		case partText:
			in.Content = append(in.Content, session.ContentBlock{Type: "input_text", Text: p.Text})
		case partInline:
			in.Content = append(in.Content, mediaBlock(p.MimeType, "data:"+p.MimeType+";base64,"+p.Data, true, p.DisplayName))
		case partFile:
			in.Content = append(in.Content, mediaBlock(p.MimeType, p.URI, false, p.DisplayName))
		case partFunctionResponse:
			o, aerr := functionResponseOf(p, i)
			if aerr != nil {
				return in, nil, aerr
			}
			outs = append(outs, o)
		}
	}
	return in, outs, nil
}

// withResponses completes a turn's input with its function responses as the host
// sorted them. A confirmation must resume, and nothing may be answered twice.
func withResponses(in host.Input, outs []functionResponse, sorted host.SortedToolOutputs) (host.Input, *httpError) {
	for i, o := range outs {
		if o.confirmation && !sorted.Resumed[i] {
			return in, detail(http.StatusBadRequest, "the session has no pending confirmation request %q", o.ID)
		}
	}
	answered := map[string]bool{}
	for _, res := range sorted.Resumes {
		id := res.ApprovalRequestID + "\x00" + res.CallID
		if answered[id] {
			return in, detail(http.StatusBadRequest, "new_message answers the function call %q twice", res.ApprovalRequestID+res.CallID)
		}
		answered[id] = true
	}
	in.Resumes, in.Items = sorted.Resumes, sorted.Items
	return in, nil
}

// mediaBlock is an image or file block; inline data travels as a data URL.
func mediaBlock(mime, url string, inline bool, name string) session.ContentBlock {
	if strings.HasPrefix(mime, "image/") {
		return session.ContentBlock{Type: "input_image", ImageURL: url, Filename: name}
	}
	if inline {
		return session.ContentBlock{Type: "input_file", FileData: url, Filename: name}
	}
	return session.ContentBlock{Type: "input_file", FileURL: url, Filename: name}
}

// functionResponseOf reads a function response.
func functionResponseOf(p part, i int) (functionResponse, *httpError) {
	loc := []any{"body", "newMessage", "parts", i, "functionResponse"}
	if p.Name == confirmationFunction {
		confirmed, aerr := parseConfirmation(p.Response, append(loc, "response"))
		if aerr != nil {
			return functionResponse{}, aerr
		}
		return functionResponse{ToolOutput: host.ToolOutput{ID: p.ID, Approve: confirmed, Raw: p.Raw}, confirmation: true}, nil
	}
	if p.ID == "" {
		return functionResponse{}, invalid("missing", append(loc, "id"), "a function response needs the id of the function call it answers")
	}
	item := mustJSON(struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}{"function_call_output", p.ID, string(p.Response)})
	return functionResponse{ToolOutput: host.ToolOutput{ID: p.ID, Approve: true, Output: string(p.Response), Raw: p.Raw, Item: item}}, nil
}

// parseConfirmation reads ToolConfirmation.confirmed from an answer, also in the
// {"response": "<JSON text>"} wrapper some ADK clients send (adk-python accepts both).
func parseConfirmation(resp json.RawMessage, loc []any) (bool, *httpError) {
	var m map[string]json.RawMessage
	if json.Unmarshal(resp, &m) != nil {
		return false, invalid("dict_type", loc, "Input should be a valid dictionary")
	}
	if inner, ok := m["response"]; ok && len(m) == 1 {
		var text string
		if json.Unmarshal(inner, &text) == nil {
			m = nil
			if json.Unmarshal([]byte(text), &m) != nil {
				return false, invalid("json_invalid", append(loc, "response"), "the wrapped confirmation is not a JSON object")
			}
		}
	}
	raw, ok := m["confirmed"]
	if !ok || string(raw) == "null" {
		return false, nil // ToolConfirmation.confirmed defaults to false
	}
	var confirmed bool
	if json.Unmarshal(raw, &confirmed) != nil {
		return false, invalid("bool_type", append(loc, "confirmed"), "Input should be a valid boolean")
	}
	return confirmed, nil
}
