package openai

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// itemOfEvent renders a stored event as a Responses item (for item_reference inputs).
func itemOfEvent(ev session.Event) (json.RawMessage, bool) {
	switch ev.Type {
	case session.TypeAssistantMessage:
		d, err := session.DataOf[session.AssistantMessageData](ev)
		if err != nil {
			return nil, false
		}
		return session.MustJSON(messageItem{ID: ev.ItemID, Type: "message", Status: statusCompleted, Role: roleAssistant, Content: []outputTextPart{newOutputText(d.Text)}}), true
	case session.TypeUserMessage:
		d, err := session.DataOf[session.UserMessageData](ev)
		if err != nil {
			return nil, false
		}
		return userMessageJSON(ev.ItemID, d.Blocks()), true
	case session.TypeToolCall:
		d, err := session.DataOf[session.ToolCallData](ev)
		if err != nil {
			return nil, false
		}
		return session.MustJSON(functionCallItem{ID: ev.ItemID, Type: "function_call", Status: statusCompleted, Arguments: d.Arguments, CallID: d.CallID, Name: d.Name}), true
	case session.TypeReasoning:
		d, err := session.DataOf[session.ReasoningData](ev)
		if err != nil {
			return nil, false
		}
		return session.MustJSON(reasoningItem{ID: ev.ItemID, Type: "reasoning", Status: statusCompleted, Summary: []summaryPart{{Type: "summary_text", Text: d.Text}}}), true
	case session.TypeApprovalRequest:
		d, err := session.DataOf[session.ApprovalRequestData](ev)
		if err != nil {
			return nil, false
		}
		return session.MustJSON(approvalRequestItem{ID: ev.ItemID, Type: kindApproval, Arguments: d.Arguments, Name: d.Name, ServerLabel: serverLabel, Message: d.Message}), true
	}
	return nil, false
}

// inputMessageJSON is a user message as input_items lists it.
type inputMessageJSON struct {
	ID      string                 `json:"id"`
	Type    string                 `json:"type"`
	Status  string                 `json:"status"`
	Role    string                 `json:"role"`
	Content []session.ContentBlock `json:"content"`
}

func userMessageJSON(id string, blocks []session.ContentBlock) json.RawMessage {
	if blocks == nil {
		blocks = []session.ContentBlock{}
	}
	return session.MustJSON(inputMessageJSON{ID: id, Type: "message", Status: statusCompleted, Role: roleUser, Content: blocks})
}

// withItemID sets "id" on an item object.
func withItemID(raw json.RawMessage, id string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return raw
	}
	m["id"] = session.MustJSON(id)
	return session.MustJSON(m)
}

// inputItemsOf rebuilds a response's input items in request order from the run's
// stored user_message and the layout kept in the request echo.
func inputItemsOf(evs []host.Event, echo requestEcho) []json.RawMessage {
	var um session.UserMessageData
	for _, ev := range evs {
		if ev.Kind == host.KindStored && ev.Stored.Type == session.TypeUserMessage {
			_ = json.Unmarshal(ev.Stored.Data, &um) // a damaged event lists as empty
			break
		}
	}
	out := make([]json.RawMessage, 0, len(echo.Input)+len(um.Items)+1)
	if len(echo.Input) == 0 { // a run of another surface: its items, then its message
		out = append(out, um.Items...)
		if blocks := um.Blocks(); len(blocks) > 0 {
			out = append(out, userMessageJSON("msg_input", blocks))
		}
		return out
	}
	next := 0
	for _, s := range echo.Input {
		switch s.Src {
		case "message":
			out = append(out, userMessageJSON(s.ID, um.Blocks()))
		case "resume":
			out = append(out, withItemID(s.Item, s.ID))
		default:
			if next < len(um.Items) {
				out = append(out, withItemID(um.Items[next], s.ID))
				next++
			}
		}
	}
	return out
}

type itemList struct {
	Object  string            `json:"object"`
	Data    []json.RawMessage `json:"data"`
	FirstID string            `json:"first_id"`
	LastID  string            `json:"last_id"`
	HasMore bool              `json:"has_more"`
}

// listParams reads a list endpoint's limit (1 to 100, default 20) and order (asc or
// desc, default desc) query parameters.
func listParams(c *gin.Context) (int, string, *apiError) {
	limit := 20
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return 0, "", badRequest("limit", "", "limit must be an integer from 1 to 100")
		}
		limit = n
	}
	order := c.DefaultQuery("order", "desc")
	if order != "asc" && order != "desc" {
		return 0, "", badRequest("order", "", "order must be asc or desc")
	}
	return limit, order, nil
}

// listInputItems serves GET /v1/responses/{id}/input_items.
func (h *Handler) listInputItems(c *gin.Context) *apiError {
	limit, order, aerr := listParams(c)
	if aerr != nil {
		return aerr
	}
	run, _, aerr := h.openResponse(c)
	if aerr != nil {
		return aerr
	}
	items := inputItemsOf(run.Subscribe(0).Ready(), parseEcho(run.Meta, run.Agent))
	if order == "desc" {
		for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
			items[i], items[j] = items[j], items[i]
		}
	}
	if after := c.Query("after"); after != "" {
		at := -1
		for i, it := range items {
			if itemID(it) == after {
				at = i
				break
			}
		}
		if at < 0 {
			return badRequest("after", "", "response has no input item %q", after)
		}
		items = items[at+1:]
	}
	list := itemList{Object: "list", Data: items}
	if len(items) > limit {
		list.Data, list.HasMore = items[:limit], true
	}
	if list.Data == nil {
		list.Data = []json.RawMessage{}
	}
	if n := len(list.Data); n > 0 {
		list.FirstID, list.LastID = itemID(list.Data[0]), itemID(list.Data[n-1])
	}
	httpx.WriteJSON(c, http.StatusOK, list)
	return nil
}

func itemID(raw json.RawMessage) string {
	var v struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &v)
	return v.ID
}
