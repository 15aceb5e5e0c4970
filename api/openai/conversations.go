package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// OpenAI's Conversations API on the session store: a conversation is a session of the
// caller, its items are the session's transcript. A conversation belongs to one agent
// (sessions do): the model named in the create request's extension field "model", else
// the first hosted agent. responses.create(conversation=id) continues it, and every
// item a turn adds (its input and its output, as the response returned them) is listed.

// maxConversationItems is how many items one create request may add (OpenAI's limit).
const maxConversationItems = 20

// conversationObject is OpenAI's Conversation.
type conversationObject struct {
	ID        string            `json:"id"`
	Object    string            `json:"object"`
	CreatedAt int64             `json:"created_at"`
	Metadata  map[string]string `json:"metadata"`
}

// conversationDeleted is OpenAI's ConversationDeletedResource.
type conversationDeleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

// convItem is one listed conversation item: its id, its JSON and the parts of events
// it was made of (what deleting it removes from history).
type convItem struct {
	ID    string
	JSON  json.RawMessage
	Parts []session.ItemPart
}

// functionCallOutputItem is a function_call_output conversation item.
type functionCallOutputItem struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Status string `json:"status"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// approvalResponseItem is an mcp_approval_response conversation item.
type approvalResponseItem struct {
	ID                string  `json:"id"`
	Type              string  `json:"type"`
	ApprovalRequestID string  `json:"approval_request_id"`
	Approve           bool    `json:"approve"`
	Reason            *string `json:"reason"`
}

// registerConversations mounts the Conversations API on v1.
func (h *Handler) registerConversations(v1 gin.IRouter) {
	v1.POST("/conversations", handle(h.createConversation))
	v1.GET("/conversations/:id", handle(h.getConversation))
	v1.POST("/conversations/:id", handle(h.updateConversation))
	v1.DELETE("/conversations/:id", handle(h.deleteConversation))
	v1.GET("/conversations/:id/items", handle(h.listConversationItems))
	v1.POST("/conversations/:id/items", handle(h.createConversationItems))
	v1.GET("/conversations/:id/items/:item", handle(h.getConversationItem))
	v1.DELETE("/conversations/:id/items/:item", handle(h.deleteConversationItem))
}

// readObject reads an optional JSON object body (an empty body is {}).
func (h *Handler) readObject(c *gin.Context) (fields, *apiError) {
	body, aerr := h.readJSON(c)
	if aerr != nil {
		return fields{}, aerr
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	return decodeObject(body, "", "the request body")
}

// conversationNotFound is the 404 of an id that names no conversation of the caller.
func conversationNotFound(id string) *apiError {
	return notFound("conversation_id", "Conversation with id '%s' not found.", id)
}

// findConversation finds the caller's conversation: a session of theirs, of any
// hosted agent.
func (h *Handler) findConversation(ctx context.Context, user, id string) (session.Session, *apiError) {
	if host.ValidateID(id) != nil {
		return session.Session{}, conversationNotFound(id)
	}
	for _, a := range h.rt.Agents() {
		s, err := h.rt.Session(ctx, session.Key{App: a.Name, User: user, ID: id})
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, host.ErrNotFound) {
			return s, fromHostError(h.log, "find conversation", err)
		}
	}
	return session.Session{}, conversationNotFound(id)
}

// conversation resolves the :id of a request to the caller's conversation.
func (h *Handler) conversation(c *gin.Context) (session.Session, *apiError) {
	user, aerr := h.user(c)
	if aerr != nil {
		return session.Session{}, aerr
	}
	return h.findConversation(c.Request.Context(), user, c.Param("id"))
}

// conversationJSON is s as a Conversation, with its latest metadata.
func (h *Handler) conversationJSON(ctx context.Context, s session.Session) (conversationObject, *apiError) {
	conv := conversationObject{ID: s.ID, Object: "conversation", CreatedAt: s.CreatedAt.Unix(), Metadata: map[string]string{}}
	evs, err := h.rt.Events(ctx, s.Key, session.EventQuery{Types: []string{session.TypeConversationMetadata}, Tail: true, Limit: 1})
	if err != nil {
		return conv, fromHostError(h.log, "read conversation metadata", err)
	}
	if len(evs) == 1 {
		if d, err := session.DataOf[session.ConversationMetadataData](evs[0]); err == nil && d.Metadata != nil {
			conv.Metadata = d.Metadata
		}
	}
	return conv, nil
}

// createConversation serves POST /v1/conversations.
func (h *Handler) createConversation(c *gin.Context) *apiError {
	f, aerr := h.readObject(c)
	if aerr != nil {
		return aerr
	}
	meta, aerr := f.metadata("metadata")
	if aerr != nil {
		return aerr
	}
	model, _, aerr := f.str("model")
	if aerr != nil {
		return aerr
	}
	var items []inputItem
	if raw, aerr := f.array("items"); aerr != nil {
		return aerr
	} else if raw != nil {
		if items, aerr = conversationInput(raw, "items"); aerr != nil {
			return aerr
		}
	}
	evs, aerr := itemEvents(items)
	if aerr != nil {
		return aerr
	}
	if meta != nil {
		evs = append([]session.NewEvent{metadataEvent(meta)}, evs...)
	}
	var agent host.AgentInfo
	if model != "" {
		a, err := h.rt.ResolveAgent(model)
		if err != nil {
			return fromHostError(h.log, "resolve agent", err)
		}
		agent = a
	} else if all := h.rt.Agents(); len(all) > 0 {
		agent = all[0]
	}
	user, aerr := h.user(c)
	if aerr != nil {
		return aerr
	}
	ctx := c.Request.Context()
	s, err := h.rt.CreateSession(ctx, session.Key{App: agent.Name, User: user, ID: host.NewID("conv_")})
	if err != nil {
		return fromHostError(h.log, "create conversation", err)
	}
	if len(evs) > 0 {
		if _, err := h.rt.AppendItems(ctx, s.Key, evs...); err != nil {
			if derr := h.rt.DeleteSession(context.WithoutCancel(ctx), s.Key); derr != nil {
				h.log.Error("could not remove a conversation whose items failed", "conversation", s.ID, "error", derr)
			}
			return fromHostError(h.log, "add conversation items", err)
		}
	}
	conv := conversationObject{ID: s.ID, Object: "conversation", CreatedAt: s.CreatedAt.Unix(), Metadata: meta}
	if conv.Metadata == nil {
		conv.Metadata = map[string]string{}
	}
	httpx.WriteJSON(c, http.StatusOK, conv)
	return nil
}

// getConversation serves GET /v1/conversations/{id}.
func (h *Handler) getConversation(c *gin.Context) *apiError {
	s, aerr := h.conversation(c)
	if aerr != nil {
		return aerr
	}
	conv, aerr := h.conversationJSON(c.Request.Context(), s)
	if aerr != nil {
		return aerr
	}
	httpx.WriteJSON(c, http.StatusOK, conv)
	return nil
}

// updateConversation serves POST /v1/conversations/{id}: it replaces the metadata.
func (h *Handler) updateConversation(c *gin.Context) *apiError {
	f, aerr := h.readObject(c)
	if aerr != nil {
		return aerr
	}
	if !f.has("metadata") {
		return badRequest("metadata", "missing_required_parameter", "metadata is required")
	}
	meta, aerr := f.metadata("metadata")
	if aerr != nil {
		return aerr
	}
	if meta == nil {
		meta = map[string]string{}
	}
	s, aerr := h.conversation(c)
	if aerr != nil {
		return aerr
	}
	if _, err := h.rt.AppendItems(c.Request.Context(), s.Key, metadataEvent(meta)); err != nil {
		return fromHostError(h.log, "update conversation", err)
	}
	httpx.WriteJSON(c, http.StatusOK, conversationObject{ID: s.ID, Object: "conversation", CreatedAt: s.CreatedAt.Unix(), Metadata: meta})
	return nil
}

// deleteConversation serves DELETE /v1/conversations/{id}: the session goes, with its
// events (a run in progress is cancelled first).
func (h *Handler) deleteConversation(c *gin.Context) *apiError {
	s, aerr := h.conversation(c)
	if aerr != nil {
		return aerr
	}
	if err := h.rt.DeleteSession(c.Request.Context(), s.Key); err != nil {
		return fromHostError(h.log, "delete conversation", err)
	}
	httpx.WriteJSON(c, http.StatusOK, conversationDeleted{ID: s.ID, Object: "conversation.deleted", Deleted: true})
	return nil
}

// listConversationItems serves GET /v1/conversations/{id}/items.
func (h *Handler) listConversationItems(c *gin.Context) *apiError {
	limit, order, aerr := listParams(c)
	if aerr != nil {
		return aerr
	}
	if aerr := checkInclude(c); aerr != nil {
		return aerr
	}
	s, aerr := h.conversation(c)
	if aerr != nil {
		return aerr
	}
	items, aerr := h.conversationItems(c.Request.Context(), s.Key)
	if aerr != nil {
		return aerr
	}
	if order == "desc" {
		for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
			items[i], items[j] = items[j], items[i]
		}
	}
	if after := c.Query("after"); after != "" {
		at := -1
		for i, it := range items {
			if it.ID == after {
				at = i
				break
			}
		}
		if at < 0 {
			return badRequest("after", "", "conversation has no item %q", after)
		}
		items = items[at+1:]
	}
	more := len(items) > limit
	if more {
		items = items[:limit]
	}
	writeItemList(c, items, more)
	return nil
}

func writeItemList(c *gin.Context, items []convItem, more bool) {
	list := itemList{Object: "list", Data: make([]json.RawMessage, 0, len(items)), HasMore: more}
	for _, it := range items {
		list.Data = append(list.Data, it.JSON)
	}
	if n := len(items); n > 0 {
		list.FirstID, list.LastID = items[0].ID, items[n-1].ID
	}
	httpx.WriteJSON(c, http.StatusOK, list)
}

// includable are the Responses include values; none adds anything to the items this
// server lists, but a client may ask for them.
var includable = map[string]bool{
	"file_search_call.results": true, "web_search_call.results": true, "web_search_call.action.sources": true,
	"message.input_image.image_url": true, "computer_call_output.output.image_url": true,
	"code_interpreter_call.outputs": true, "reasoning.encrypted_content": true, "message.output_text.logprobs": true,
}

func checkInclude(c *gin.Context) *apiError {
	for _, v := range append(c.QueryArray("include"), c.QueryArray("include[]")...) {
		if !includable[v] {
			return badRequest("include", "unsupported_value", "include value %q is not supported", v)
		}
	}
	return nil
}

// createConversationItems serves POST /v1/conversations/{id}/items: it adds items
// (messages, function calls and their outputs) and lists the added ones.
func (h *Handler) createConversationItems(c *gin.Context) *apiError {
	if aerr := checkInclude(c); aerr != nil {
		return aerr
	}
	f, aerr := h.readObject(c)
	if aerr != nil {
		return aerr
	}
	raw, aerr := f.array("items")
	if aerr != nil {
		return aerr
	}
	if raw == nil {
		return badRequest("items", "missing_required_parameter", "items is required")
	}
	items, aerr := conversationInput(raw, "items")
	if aerr != nil {
		return aerr
	}
	evs, aerr := itemEvents(items)
	if aerr != nil {
		return aerr
	}
	s, aerr := h.conversation(c)
	if aerr != nil {
		return aerr
	}
	stored, err := h.rt.AppendItems(c.Request.Context(), s.Key, evs...)
	if err != nil {
		return fromHostError(h.log, "add conversation items", err)
	}
	out := make([]convItem, 0, len(stored))
	for _, ev := range stored {
		if it, ok := singleItem(ev); ok {
			out = append(out, it)
		}
	}
	writeItemList(c, out, false)
	return nil
}

// getConversationItem serves GET /v1/conversations/{id}/items/{item_id}.
func (h *Handler) getConversationItem(c *gin.Context) *apiError {
	if aerr := checkInclude(c); aerr != nil {
		return aerr
	}
	_, it, aerr := h.conversationItem(c)
	if aerr != nil {
		return aerr
	}
	c.Data(http.StatusOK, "application/json", it.JSON)
	return nil
}

// deleteConversationItem serves DELETE /v1/conversations/{id}/items/{item_id}: the
// item leaves the list and the history later turns see; it answers with the
// conversation, as OpenAI does.
func (h *Handler) deleteConversationItem(c *gin.Context) *apiError {
	s, it, aerr := h.conversationItem(c)
	if aerr != nil {
		return aerr
	}
	ctx := c.Request.Context()
	ev := session.NewEvent{Type: session.TypeItemDeleted, Author: "user",
		Data: session.MustJSON(session.ItemDeletedData{ItemID: it.ID, Parts: it.Parts})}
	if _, err := h.rt.AppendItems(ctx, s.Key, ev); err != nil {
		return fromHostError(h.log, "delete conversation item", err)
	}
	conv, aerr := h.conversationJSON(ctx, s)
	if aerr != nil {
		return aerr
	}
	httpx.WriteJSON(c, http.StatusOK, conv)
	return nil
}

func (h *Handler) conversationItem(c *gin.Context) (session.Session, convItem, *apiError) {
	s, aerr := h.conversation(c)
	if aerr != nil {
		return s, convItem{}, aerr
	}
	items, aerr := h.conversationItems(c.Request.Context(), s.Key)
	if aerr != nil {
		return s, convItem{}, aerr
	}
	id := c.Param("item")
	for _, it := range items {
		if it.ID == id {
			return s, it, nil
		}
	}
	return s, convItem{}, notFound("item_id", "Item with id '%s' not found.", id)
}

func metadataEvent(meta map[string]string) session.NewEvent {
	return session.NewEvent{Type: session.TypeConversationMetadata, Author: "user",
		Data: session.MustJSON(session.ConversationMetadataData{Metadata: meta})}
}

// conversationInput parses items to add to a conversation.
func conversationInput(raw json.RawMessage, name string) ([]inputItem, *apiError) {
	var raws []json.RawMessage
	if err := json.Unmarshal(raw, &raws); err != nil {
		return nil, badRequest(name, "invalid_type", "%s must be an array of items", name)
	}
	if len(raws) > maxConversationItems {
		return nil, badRequest(name, "", "%s has %d items; at most %d may be added at once", name, len(raws), maxConversationItems)
	}
	return parseInputItems(raws, name)
}

// itemEvents maps items added to a conversation to the transcript events later turns
// read as history: user and assistant messages, function calls and their outputs.
func itemEvents(items []inputItem) ([]session.NewEvent, *apiError) {
	evs := make([]session.NewEvent, 0, len(items))
	for i, it := range items {
		p := fmt.Sprintf("items[%d]", i)
		id := idOr(it.ID, itemPrefix(it.Kind))
		switch {
		case it.Kind == itemMessage && it.Role == roleUser:
			d := session.NewUserMessageData(blocksText(it.Blocks), it.Blocks)
			evs = append(evs, session.NewEvent{ItemID: id, Type: session.TypeUserMessage, Author: "user", Data: session.MustJSON(d)})
		case it.Kind == itemMessage && it.Role == roleAssistant:
			text := ""
			if ms := session.ItemMessages([]json.RawMessage{it.Item()}, 0); len(ms) == 1 {
				text = ms[0].Content
			}
			evs = append(evs, session.NewEvent{ItemID: id, Type: session.TypeAssistantMessage, Author: "assistant",
				Data: session.MustJSON(session.AssistantMessageData{Text: text})})
		case it.Kind == itemMessage:
			return nil, badRequest(p+".role", "unsupported_value", "%s: %s messages cannot be conversation items here; send instructions with the response", p, it.Role)
		case it.Kind == itemFunctionCall:
			var d struct {
				CallID    string `json:"call_id"`
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			}
			if json.Unmarshal(it.Raw, &d) != nil || d.CallID == "" || d.Name == "" {
				return nil, badRequest(p, "", "%s: a function_call needs call_id, name and arguments", p)
			}
			evs = append(evs, session.NewEvent{ItemID: id, Type: session.TypeToolCall, Author: "assistant",
				Data: session.MustJSON(session.ToolCallData{CallID: d.CallID, Name: d.Name, Arguments: d.Arguments})})
		case it.Kind == itemFunctionCallOutput:
			evs = append(evs, session.NewEvent{ItemID: id, Type: session.TypeToolResult, Author: "user",
				Data: session.MustJSON(session.ToolResultData{CallID: it.CallID, Output: it.Output})})
		case it.Kind == itemReference:
			return nil, badRequest(p+".type", "unsupported_value", "%s: an item_reference cannot be added to a conversation; add the item itself", p)
		default:
			// Reasoning and MCP items (an agent SDK's session stores every item of a
			// run): kept as they came, listed, and history where they carry any.
			evs = append(evs, session.NewEvent{ItemID: id, Type: session.TypeConversationItem, Author: "user", Data: withItemID(it.Raw, id)})
		}
	}
	return evs, nil
}

func blocksText(blocks []session.ContentBlock) string {
	var b bytes.Buffer
	for _, bl := range blocks {
		if bl.Type == "input_text" {
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// singleItem renders an event written outside any run (a conversation item added
// through this API) as its item.
func singleItem(ev session.Event) (convItem, bool) {
	whole := []session.ItemPart{{Seq: ev.Seq, Index: -1}}
	switch ev.Type {
	case session.TypeToolResult:
		d, err := session.DataOf[session.ToolResultData](ev)
		if err != nil {
			return convItem{}, false
		}
		return convItem{ID: ev.ItemID, Parts: whole, JSON: session.MustJSON(functionCallOutputItem{
			ID: ev.ItemID, Type: itemFunctionCallOutput, Status: statusCompleted, CallID: d.CallID, Output: d.Output})}, true
	case session.TypeConversationItem:
		return convItem{ID: ev.ItemID, Parts: whole, JSON: ev.Data}, true
	case session.TypeUserMessage, session.TypeAssistantMessage, session.TypeToolCall:
		raw, ok := itemOfEvent(ev)
		if !ok {
			return convItem{}, false
		}
		return convItem{ID: ev.ItemID, Parts: whole, JSON: raw}, true
	}
	return convItem{}, false
}

// conversationItems lists a conversation's items in order. A run's items are its input
// (the items a client sent along, its message, its approval answers) then its output
// as the response gave it (the same encoder, the same ids); items added through this
// API stand alone. Deleted items are left out.
func (h *Handler) conversationItems(ctx context.Context, key session.Key) ([]convItem, *apiError) {
	evs, err := h.rt.Events(ctx, key, session.EventQuery{})
	if err != nil {
		return nil, fromHostError(h.log, "read conversation", err)
	}
	deleted := map[string]bool{}
	approvals := map[string]session.ApprovalRequestData{}
	byItem := map[string][]int64{} // item id -> seqs of its events
	results := map[string]int64{}  // call id -> seq of its tool_result
	calls := map[string]string{}   // tool_call item id -> call id
	for _, ev := range evs {
		switch ev.Type {
		case session.TypeItemDeleted:
			if d, err := session.DataOf[session.ItemDeletedData](ev); err == nil {
				deleted[d.ItemID] = true
			}
			continue
		case session.TypeApprovalRequest:
			if d, err := session.DataOf[session.ApprovalRequestData](ev); err == nil {
				approvals[ev.ItemID] = d
			}
		case session.TypeToolResult:
			if d, err := session.DataOf[session.ToolResultData](ev); err == nil && d.CallID != "" {
				results[d.CallID] = ev.Seq
			}
		case session.TypeToolCall:
			if d, err := session.DataOf[session.ToolCallData](ev); err == nil {
				calls[ev.ItemID] = d.CallID
			}
		}
		if ev.ItemID != "" {
			byItem[ev.ItemID] = append(byItem[ev.ItemID], ev.Seq)
		}
	}
	opts := encodeOptions{ServerLabel: key.App, Approval: func(id string) (session.ApprovalRequestData, bool) {
		d, ok := approvals[id]
		return d, ok
	}}
	var out []convItem
	add := func(it convItem) {
		if it.ID != "" && !deleted[it.ID] {
			out = append(out, it)
		}
	}
	for i := 0; i < len(evs); {
		ev := evs[i]
		if ev.InvocationID == "" {
			if it, ok := singleItem(ev); ok {
				add(it)
			}
			i++
			continue
		}
		// One run: its events are contiguous but for items added while it ran, which
		// are listed after it.
		inv, j := ev.InvocationID, i
		enc := newResponseEncoder(Response{Model: key.App}, opts, false)
		var loose []session.Event
		for ; j < len(evs) && (evs[j].InvocationID == inv || evs[j].InvocationID == ""); j++ {
			e := &evs[j]
			if e.InvocationID == "" {
				loose = append(loose, *e)
				continue
			}
			for _, it := range runInputItems(*e) {
				add(it)
			}
			enc.Add(host.Event{Kind: host.KindStored, Stored: e})
		}
		for _, o := range enc.Response().Output {
			raw := session.MustJSON(o)
			id := itemID(raw)
			var parts []session.ItemPart
			for _, seq := range byItem[id] {
				parts = append(parts, session.ItemPart{Seq: seq, Index: -1})
			}
			if seq, ok := results[calls[id]]; ok && calls[id] != "" {
				parts = append(parts, session.ItemPart{Seq: seq, Index: -1})
			}
			add(convItem{ID: id, JSON: raw, Parts: parts})
		}
		for _, e := range loose {
			if it, ok := singleItem(e); ok {
				add(it)
			}
		}
		i = j
	}
	return out, nil
}

// runInputItems are the input items an event of a run stands for: a user message with
// the items sent along with it, or an approval answer. Ids the client did not give are
// made from the event's seq, so they are the same on every read.
func runInputItems(ev session.Event) []convItem {
	switch ev.Type {
	case session.TypeUserMessage:
		d, err := session.DataOf[session.UserMessageData](ev)
		if err != nil {
			return nil
		}
		out := make([]convItem, 0, len(d.Items)+1)
		for k, raw := range d.Items {
			var head struct {
				ID   string `json:"id"`
				Type string `json:"type"`
			}
			_ = json.Unmarshal(raw, &head)
			id := head.ID
			if id == "" {
				id = fmt.Sprintf("%ss%di%d", itemPrefix(head.Type), ev.Seq, k)
				raw = withItemID(raw, id)
			}
			out = append(out, convItem{ID: id, JSON: raw, Parts: []session.ItemPart{{Seq: ev.Seq, Index: k}}})
		}
		if blocks := d.Blocks(); len(blocks) > 0 {
			id := ev.ItemID
			if id == "" {
				id = fmt.Sprintf("msg_s%d", ev.Seq)
			}
			out = append(out, convItem{ID: id, JSON: userMessageJSON(id, blocks), Parts: []session.ItemPart{{Seq: ev.Seq, Index: -1}}})
		}
		return out
	case session.TypeApprovalResponse:
		d, err := session.DataOf[session.ApprovalResponseData](ev)
		if err != nil {
			return nil
		}
		id := ev.ItemID
		if id == "" {
			id = fmt.Sprintf("mcpr_s%d", ev.Seq)
		}
		return []convItem{{ID: id, Parts: []session.ItemPart{{Seq: ev.Seq, Index: -1}}, JSON: session.MustJSON(approvalResponseItem{
			ID: id, Type: itemMCPApprovalResponse, ApprovalRequestID: d.ApprovalRequestID, Approve: d.Approve, Reason: nullable(d.Reason)})}}
	}
	return nil
}
