package adkweb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// Names and texts adk-python uses for tool confirmations; ADK web keys its approval
// form on the function name.
const (
	confirmationFunction = "adk_request_confirmation"
	confirmationPending  = "This tool call requires confirmation, please approve or reject."
)

// encodeOptions choose what an encoder emits.
type encodeOptions struct {
	// Streaming emits a partial event per text or reasoning delta (ADK's SSE mode).
	Streaming bool
	// UserEvents emits user-authored events. A run's stream leaves them out, as ADK's
	// Runner does not yield the user's own message; a session replay includes them.
	UserEvents bool
	// NodeInfo gives every event a nodeInfo (ADK 2.x's events all have one, the user's
	// and those without a node {"path": ""}); set when the runner's event meta has them.
	NodeInfo bool
}

// encoder turns host events (a run's journal, or a session's stored events) into ADK
// events. It is a deterministic function of its input: ids derive from invocation ids,
// seqs and journal indexes, timestamps from stored event times, so a replay of the same
// journal gives the same JSON.
type encoder struct {
	opts  encodeOptions
	agent string // author of partial events
	inv   string // invocation of partial events
	last  time.Time
	// names remembers tool names by call id, for results that do not repeat them.
	names map[string]string
	// approvals and awaiting remember confirmation requests, by approval id and by
	// invocation, to project answers and to tell a confirmation wait from a failure.
	approvals map[string]session.ApprovalRequestData
	awaiting  map[string]bool
	// held is the last model event, kept until the next host event tells whether it
	// ends its turn: the turn's usage then goes on it, as ADK puts a model call's usage on
	// that call's event.
	held *Event
	// partialMeta is the runner's latest event meta in a live journal (the fields of
	// the partial events that follow); authors remembers the agent that wrote each
	// invocation's last item, for its events that carry no meta (state deltas, errors).
	partialMeta *eventMeta
	authors     map[string]string
	// shown remembers, per invocation, the state delta last shown on an event through
	// its meta (ADK writes a tool's state delta on its function response event), so that
	// the state_delta item the host stored for it is not shown twice.
	shown map[string]string
	// usageShown remembers the invocations whose events carried a model call's usage
	// (an ADK runner's): their turn's summed usage is not shown again.
	usageShown map[string]bool
}

func newEncoder(agent, invocationID string, opts encodeOptions) *encoder {
	return &encoder{opts: opts, agent: agent, inv: invocationID, names: map[string]string{},
		approvals: map[string]session.ApprovalRequestData{}, awaiting: map[string]bool{}, authors: map[string]string{},
		shown: map[string]string{}, usageShown: map[string]bool{}}
}

// Add encodes one host event into zero or more ADK events. The last model event may be
// held back until the next host event or Flush.
func (e *encoder) Add(ev host.Event) []Event {
	return e.hold(e.add(ev))
}

// Flush returns the event held back, if any: call it after the last host event.
func (e *encoder) Flush() []Event {
	if e.held == nil {
		return nil
	}
	out := []Event{*e.held}
	e.held = nil
	return out
}

// hold emits the held event before out, merging out's usage into it when out is only
// the turn's usage, and holds out's last event instead when it is a model event.
func (e *encoder) hold(out []Event) []Event {
	if len(out) == 0 {
		return nil
	}
	if len(out) == 1 && usageOnly(out[0]) {
		inv := out[0].InvocationID
		if e.held != nil && inv == e.held.InvocationID && len(e.held.UsageMetadata) == 0 {
			e.held.UsageMetadata = out[0].UsageMetadata
			return e.Flush()
		}
		if e.usageShown[inv] || (e.held != nil && inv == e.held.InvocationID) {
			// An ADK runner's events carry each model call's own usage, as ADK's do: the
			// turn's sum would be an event ADK never writes.
			return e.Flush()
		}
	}
	for _, ev := range out {
		if len(ev.UsageMetadata) > 0 && !usageOnly(ev) {
			e.usageShown[ev.InvocationID] = true
		}
	}
	res := e.Flush()
	last := out[len(out)-1]
	if last.Partial || last.Content == nil || last.Content.Role != "model" {
		return append(res, out...)
	}
	res = append(res, out[:len(out)-1]...)
	e.held = &last
	return res
}

// usageOnly reports an event carrying nothing but a turn's usage.
func usageOnly(ev Event) bool {
	return len(ev.UsageMetadata) > 0 && ev.Content == nil && ev.ErrorCode == "" && len(ev.Actions.StateDelta) <= 2 // {}
}

func (e *encoder) add(ev host.Event) []Event {
	switch ev.Kind {
	case host.KindTextDelta, host.KindReasoningDelta:
		if !e.opts.Streaming || ev.Text == "" {
			return nil
		}
		return []Event{e.partial(ev)}
	case host.KindStored:
		if ev.Stored == nil {
			return nil
		}
		e.last = ev.Stored.Time
		if ev.Stored.Author == "user" && !e.opts.UserEvents {
			return nil
		}
		return e.stored(ev.Stored)
	case host.KindNative:
		if ev.Name == host.NativeEventMeta {
			var m eventMeta
			if json.Unmarshal([]byte(ev.Text), &m) == nil {
				e.partialMeta = &m
			}
		}
	case host.KindToolArgsDelta:
		// Argument deltas have no ADK counterpart.
	}
	return nil
}

// partial is a delta as ADK streams it: partial text (or thought) with the delta only;
// the stored event that ends the item carries the whole text.
func (e *encoder) partial(ev host.Event) Event {
	out := Event{
		Content:      &Content{Role: "model", Parts: []Part{textPart(ev.Text, ev.Kind == host.KindReasoningDelta)}},
		Partial:      true,
		InvocationID: e.inv,
		Author:       e.agent,
		Actions:      noActions(),
		ID:           e.inv + "-p" + strconv.Itoa(ev.Index),
		Timestamp:    seconds(e.last),
	}
	e.partialMeta.apply(&out)
	return out
}

func (e *encoder) stored(s *session.Event) []Event {
	meta := storedMeta(s)
	author := s.Author
	if meta != nil && meta.Author != "" {
		e.authors[s.InvocationID] = meta.Author
	} else if a := e.authors[s.InvocationID]; a != "" && s.Author != "user" {
		author = a // the agent's own name, as the invocation's items reported it
	}
	base := func(k int) Event {
		ev := Event{InvocationID: s.InvocationID, Author: author, Actions: noActions(), ID: eventID(s, k), Timestamp: seconds(s.Time)}
		meta.apply(&ev)
		if meta != nil && isObject(meta.Actions.StateDelta) {
			e.shown[s.InvocationID] = compactJSON(meta.Actions.StateDelta)
		}
		if meta != nil && ev.NodeInfo != nil {
			e.opts.NodeInfo = true
		}
		if ev.NodeInfo == nil && e.opts.NodeInfo {
			ev.NodeInfo = json.RawMessage(`{"path":""}`)
		}
		return ev
	}
	with := func(role string, parts ...Part) []Event {
		ev := base(0)
		ev.Content = &Content{Role: role, Parts: parts}
		return []Event{ev}
	}
	switch s.Type {
	case session.TypeUserMessage:
		d, err := session.DataOf[session.UserMessageData](*s)
		if err != nil {
			return nil
		}
		if parts := e.userParts(d); len(parts) > 0 {
			return with("user", parts...)
		}
	case session.TypeAssistantMessage, session.TypeReasoning:
		var d session.AssistantMessageData // the reasoning payload has the same shape
		if json.Unmarshal(s.Data, &d) != nil || d.Text == "" {
			return nil
		}
		return with("model", textPart(d.Text, s.Type == session.TypeReasoning))
	case session.TypeToolCall:
		d, err := session.DataOf[session.ToolCallData](*s)
		if err != nil {
			return nil
		}
		e.names[d.CallID] = d.Name
		return with("model", Part{FunctionCall: &FunctionCall{ID: d.CallID, Name: d.Name, Args: argsObject(d.Arguments)}})
	case session.TypeToolResult:
		d, err := session.DataOf[session.ToolResultData](*s)
		if err != nil {
			return nil
		}
		name := d.Name
		if name == "" {
			name = e.names[d.CallID]
		}
		// ADK sends function responses as user-role content authored by the agent.
		return with("user", Part{FunctionResponse: &FunctionResponse{ID: d.CallID, Name: name, Response: resultObject(d.Output, d.IsError)}})
	case session.TypeApprovalRequest:
		d, err := session.DataOf[session.ApprovalRequestData](*s)
		if err != nil {
			return nil
		}
		return e.confirmation(s, d, base)
	case session.TypeApprovalResponse:
		d, err := session.DataOf[session.ApprovalResponseData](*s)
		if err != nil {
			return nil
		}
		return with("user", Part{FunctionResponse: e.answer(d)})
	case session.TypeStateDelta:
		// A session's initial state (written at creation, outside any run) is its
		// state, not an event, as in ADK.
		if s.InvocationID == "" || !isObject(s.Data) {
			return nil
		}
		if shown, ok := e.shown[s.InvocationID]; ok && shown == compactJSON(s.Data) {
			delete(e.shown, s.InvocationID)
			return nil // already on the event that made it
		}
		ev := base(0)
		ev.Actions.StateDelta = s.Data
		return []Event{ev}
	case session.TypeRunStatus:
		d, err := session.DataOf[session.RunStatusData](*s)
		if err != nil {
			return nil
		}
		code, msg, failed := e.failure(s.InvocationID, d)
		if !failed && d.Usage == nil {
			return nil
		}
		// The turn's usage, summed over its model calls, comes with its end: hold puts it
		// on the turn's last model event (ADK puts each call's usage on that call's event).
		ev := base(0)
		ev.ErrorCode, ev.ErrorMessage = code, msg
		ev.UsageMetadata = usageMetadataOf(d.Usage)
		return []Event{ev}
	}
	return nil
}

// confirmation renders an approval request as adk-python does for a tool that asks for
// confirmation: the guarded call's placeholder response carrying
// requestedToolConfirmations, then an adk_request_confirmation call (id = the approval
// id) that the run waits on (longRunningToolIds). ADK web answers it with a
// functionResponse of that id and name.
func (e *encoder) confirmation(s *session.Event, d session.ApprovalRequestData, base func(int) Event) []Event {
	id := s.ItemID
	if id == "" {
		id = eventID(s, 0)
	}
	e.approvals[id] = d
	e.awaiting[s.InvocationID] = true
	hint := d.Message
	if hint == "" {
		hint = fmt.Sprintf("Please approve or reject the tool call %s() by responding with a FunctionResponse with an expected ToolConfirmation payload.", d.Name)
	}
	tc := ToolConfirmation{Hint: hint, Payload: confirmationPayload(d.Detail)}
	// The runner's event meta is that of the ADK event that came last: ADK 2.x writes the
	// confirmation call first and then the placeholder response (which skips
	// summarization), earlier versions the other way round.
	meta := storedMeta(s)
	callFirst := meta != nil && meta.Actions.SkipSummarization
	callRole := "model"
	if o := adkConfirmationOrder(d.Detail, id, d.CallID); o.known {
		callFirst, callRole = o.callFirst, o.callRole
	}
	var placeholder *Event
	if d.CallID != "" {
		ev := base(0)
		ev.Content = &Content{Role: "user", Parts: []Part{{FunctionResponse: &FunctionResponse{
			ID: d.CallID, Name: d.Name, Response: mustJSON(map[string]string{"error": confirmationPending})}}}}
		ev.Actions.RequestedToolConfirmations[d.CallID] = tc
		ev.LongRunningToolIDs = nil
		placeholder = &ev
	}
	args := mustJSON(confirmationArgs{
		Original:     FunctionCall{ID: d.CallID, Args: argsObject(d.Arguments), Name: d.Name},
		Confirmation: tc,
	})
	call := base(0)
	call.Content = &Content{Role: callRole, Parts: []Part{{FunctionCall: &FunctionCall{ID: id, Name: confirmationFunction, Args: args}}}}
	call.LongRunningToolIDs = &[]string{id}
	call.Actions.SkipSummarization = false
	switch {
	case placeholder == nil:
		return []Event{call}
	case callFirst:
		placeholder.ID = eventID(s, 1)
		return []Event{call, *placeholder}
	default:
		call.ID = eventID(s, 1)
		return []Event{*placeholder, call}
	}
}

// confirmationOrder is how the ADK that asked for a confirmation wrote its two events.
type confirmationOrder struct {
	known     bool
	callFirst bool   // the adk_request_confirmation call before the placeholder response
	callRole  string // the call's content role ("model" in google-adk 2.x, "user" before)
}

// adkConfirmationOrder reads the ADK bridge's approval detail, which keeps the ADK events
// of the pending call (adk_events): the order and role ADK gave the confirmation call
// (approval id) and the guarded call's placeholder response (call id).
func adkConfirmationOrder(detail json.RawMessage, approvalID, callID string) confirmationOrder {
	var d struct {
		Framework string `json:"framework"`
		Events    []struct {
			Content *struct {
				Role  string `json:"role"`
				Parts []struct {
					FunctionCall     *struct{ ID string } `json:"functionCall"`
					FunctionResponse *struct{ ID string } `json:"functionResponse"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"adk_events"`
	}
	if json.Unmarshal(detail, &d) != nil || d.Framework != "adk" {
		return confirmationOrder{}
	}
	call, resp := -1, -1
	var o confirmationOrder
	for i, ev := range d.Events {
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			fc, fr := p.FunctionCall, p.FunctionResponse
			if fc != nil && fc.ID == approvalID && call < 0 {
				call, o.callRole = i, ev.Content.Role
			}
			if fr != nil && fr.ID == callID && resp < 0 {
				resp = i
			}
		}
	}
	if call < 0 || o.callRole == "" {
		return confirmationOrder{}
	}
	o.known, o.callFirst = true, resp < 0 || call < resp
	return o
}

// confirmationPayload is the payload of a confirmation request: the approval's detail,
// except for the ADK bridge's, which is its own resume data and carries the payload
// ADK's tool asked with (if any) under "payload".
func confirmationPayload(detail json.RawMessage) json.RawMessage {
	var d struct {
		Framework string          `json:"framework"`
		Payload   json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(detail, &d) == nil && d.Framework == "adk" {
		if len(d.Payload) == 0 || string(d.Payload) == "null" {
			return nil
		}
		return d.Payload
	}
	return detail
}

// answer is the user's function response that a stored approval response records: the
// tool's result when the client answered the guarded call itself, else the answer to
// the confirmation request.
func (e *encoder) answer(d session.ApprovalResponseData) *FunctionResponse {
	if req, ok := e.approvals[d.ApprovalRequestID]; ok && d.Output != "" && req.CallID != "" {
		return &FunctionResponse{ID: req.CallID, Name: req.Name, Response: resultObject(d.Output, false)}
	}
	return &FunctionResponse{ID: d.ApprovalRequestID, Name: confirmationFunction, Response: mustJSON(map[string]bool{"confirmed": d.Approve})}
}

// failure reports whether a run status ends the run in a way ADK shows as an error
// event. A run that stopped for a confirmation is waiting, not failed.
func (e *encoder) failure(inv string, d session.RunStatusData) (code, msg string, failed bool) {
	switch d.Status {
	case session.StatusFailed:
		code, msg = "run_failed", "the agent run failed"
	case session.StatusCancelled:
		code, msg = "cancelled", "the run was cancelled"
	case session.StatusInterrupted:
		if e.awaiting[inv] {
			return "", "", false
		}
		code, msg = "interrupted", "the run was interrupted"
	default:
		return "", "", false
	}
	if d.Error != nil {
		if d.Error.Code != "" {
			code = d.Error.Code
		}
		if d.Error.Message != "" {
			msg = d.Error.Message
		}
	}
	return code, msg, true
}

// userParts rebuilds the parts of a user message: its content blocks, and the tool
// results it carried as function_call_output items.
func (e *encoder) userParts(d session.UserMessageData) []Part {
	var parts []Part
	for _, b := range d.Blocks() {
		switch b.Type {
		case "input_text":
			parts = append(parts, textPart(b.Text, false))
		case "input_image", "input_file":
			src := b.ImageURL
			if b.Type == "input_file" {
				src = b.FileData
				if src == "" {
					src = b.FileURL
				}
			}
			if src == "" {
				src = b.FileID
			}
			if mime, data, ok := splitDataURL(src); ok {
				parts = append(parts, Part{InlineData: &Blob{MimeType: mime, Data: data, DisplayName: b.Filename}})
			} else if src != "" {
				parts = append(parts, Part{FileData: &FileData{FileURI: src, DisplayName: b.Filename}})
			}
		}
	}
	for _, raw := range d.Items {
		var it struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		}
		if json.Unmarshal(raw, &it) != nil || it.Type != "function_call_output" {
			continue
		}
		out := string(it.Output)
		var s string
		if json.Unmarshal(it.Output, &s) == nil {
			out = s
		}
		parts = append(parts, Part{FunctionResponse: &FunctionResponse{ID: it.CallID, Name: e.names[it.CallID], Response: resultObject(out, false)}})
	}
	return parts
}

// compactJSON is raw without insignificant space (raw itself if it is not JSON).
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// storedMeta is the runner's event meta stored with an item (host.NativeEventMeta); only
// the item types that carry one are read (a state delta's data is the delta itself).
func storedMeta(s *session.Event) *eventMeta {
	switch s.Type {
	case session.TypeAssistantMessage, session.TypeReasoning, session.TypeToolCall, session.TypeToolResult, session.TypeApprovalRequest:
		return metaOf(s.Data)
	}
	return nil
}

// eventID names the k-th ADK event of a stored event: unique because invocation ids
// are, and stable because seqs are.
func eventID(s *session.Event, k int) string {
	scope := s.InvocationID
	if scope == "" {
		scope = s.SessionID
	}
	id := scope + "-" + strconv.FormatInt(s.Seq, 10)
	if k > 0 {
		id += "-" + strconv.Itoa(k)
	}
	return id
}

// seconds is ADK's float timestamp (microsecond precision, as Python's time.time()).
func seconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMicro()) / 1e6
}

// usageMetadataOf is genai's GenerateContentResponseUsageMetadata of a usage (nil for
// none). As in OpenAI's usage, our output tokens include the reasoning tokens; genai
// counts thoughts apart from the candidates.
func usageMetadataOf(u *session.Usage) json.RawMessage {
	if u == nil {
		return nil
	}
	return session.MustJSON(UsageMetadata{
		PromptTokenCount:        u.InputTokens,
		CandidatesTokenCount:    u.OutputTokens - u.ReasoningTokens,
		ThoughtsTokenCount:      u.ReasoningTokens,
		CachedContentTokenCount: u.CachedTokens,
		TotalTokenCount:         u.InputTokens + u.OutputTokens,
	})
}
