package adkweb

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// turnInput maps a message's parts onto a turn's input. A function response that
// answers one of the session's pending approvals resumes the run that asked: an
// adk_request_confirmation answer (id = the approval id) decides it with its
// "confirmed" flag; a response to the guarded call itself approves it and is the
// tool's result. Any other function response is a tool result the runner receives as
// a function_call_output item.
func turnInput(parts []part, pending []host.PendingApproval) (host.Input, *httpError) {
	var in host.Input
	answered := map[string]bool{}
	for i, p := range parts {
		switch p.Kind {
		case partText:
			in.Content = append(in.Content, session.ContentBlock{Type: "input_text", Text: p.Text})
		case partInline:
			in.Content = append(in.Content, mediaBlock(p.MimeType, "data:"+p.MimeType+";base64,"+p.Data, true, p.DisplayName))
		case partFile:
			in.Content = append(in.Content, mediaBlock(p.MimeType, p.URI, false, p.DisplayName))
		case partFunctionResponse:
			res, item, aerr := functionResponseInput(p, i, pending)
			if aerr != nil {
				return in, aerr
			}
			if res == nil {
				in.Items = append(in.Items, item)
				continue
			}
			id := res.ApprovalRequestID + "\x00" + res.CallID
			if answered[id] {
				return in, detail(http.StatusBadRequest, "new_message answers the function call %q twice", p.ID)
			}
			answered[id] = true
			in.Resumes = append(in.Resumes, *res)
		}
	}
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

// functionResponseInput resolves a function response to a resume or to an item.
func functionResponseInput(p part, i int, pending []host.PendingApproval) (*host.Resume, json.RawMessage, *httpError) {
	loc := []any{"body", "newMessage", "parts", i, "functionResponse"}
	if p.Name == confirmationFunction {
		for _, pa := range pending {
			if pa.ID == p.ID && p.ID != "" {
				confirmed, aerr := parseConfirmation(p.Response, append(loc, "response"))
				if aerr != nil {
					return nil, nil, aerr
				}
				return &host.Resume{ApprovalRequestID: pa.ID, Approve: confirmed, Raw: p.Raw}, nil, nil
			}
		}
		return nil, nil, detail(http.StatusBadRequest, "the session has no pending confirmation request %q", p.ID)
	}
	if p.ID == "" {
		return nil, nil, invalid("missing", append(loc, "id"), "a function response needs the id of the function call it answers")
	}
	for _, pa := range pending {
		if pa.CallID == p.ID || pa.ID == p.ID {
			res := &host.Resume{Approve: true, Output: string(p.Response), Raw: p.Raw}
			if pa.CallID == p.ID {
				res.CallID = p.ID
			} else {
				res.ApprovalRequestID = pa.ID
			}
			return res, nil, nil
		}
	}
	item := mustJSON(struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}{"function_call_output", p.ID, string(p.Response)})
	return nil, item, nil
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
