package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/textbuf"
	"github.com/agentengine/agentengine/session"
)

// Output item kinds.
const (
	kindMessage   = "message"
	kindCall      = "function_call"
	kindReasoning = "reasoning"
	kindApproval  = "mcp_approval_request"
	kindMCPCall   = "mcp_call"
)

// Item statuses.
const (
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
	statusIncomplete = "incomplete"
	statusFailed     = "failed"
)

// extToolResult is the KsADK extension event for tool results. Official SDK stream
// helpers throw on unknown event types, so it is only sent to clients that opt in.
const extToolResult = "response.ksadk.tool_result"

// encodeOptions select the shape of the encoded run.
type encodeOptions struct {
	// ToolResults adds the response.ksadk.tool_result extension event.
	ToolResults bool
	// Ksadk selects KsADK's item semantics: every tool call is a function_call item
	// and an approval pause ends incomplete. By default a tool the agent runs itself
	// is an mcp_call item (OpenAI's hosted-tool shape, which no client executes) and
	// an approval pause ends completed with mcp_approval_request items, as OpenAI does.
	Ksadk bool
	// ServerLabel is the server_label of mcp_call and mcp_approval_request items
	// (default: the agent, i.e. the response's model).
	ServerLabel string
	// ClientTools are the function tools the client declared in the request's tools:
	// a call of one of them is a function_call item, which the client must run.
	ClientTools map[string]bool
	// Approval resolves an approval request id (from an approval_response event of a
	// resume run) to the request, so the call it approved can be shown as an mcp_call
	// with its arguments and approval_request_id. May be nil.
	Approval func(id string) (session.ApprovalRequestData, bool)
}

// sseEvent is one encoded Server-Sent Event: its event: name and data: JSON.
type sseEvent struct {
	Name string
	Seq  int
	Data []byte
	// Spill, when set, holds long texts Data has placeholders for (httpx.Spill.Fill).
	Spill *httpx.Spill
}

// responseEncoder turns a run's journal into the Responses event stream and the
// Response object. It is a deterministic function of the host.Event sequence: the
// same journal always yields the same events with the same sequence numbers, which is
// what makes ?stream=true&starting_after=N replays line up with the original stream.
// Runs rebuilt from the store have no deltas; every item is then still opened,
// filled with one delta carrying the full text, and closed, in the same event order.
type responseEncoder struct {
	resp    Response
	opts    encodeOptions
	emit    bool // false: only maintain the Response (non-stream use)
	seq     int
	items   []*outItem
	byID    map[string]*outItem
	started bool
	ended   bool
	out     []sseEvent
	// spill takes the long texts out of emitted events: a streamed answer of megabytes
	// is in several events whole (deltas, the done events, the final response), which
	// would each be encoded into memory before being written. spilled is spill.Len()
	// as of the last event encoded.
	spill   *httpx.Spill
	spilled int

	// Server-side tool calls whose item is not open yet (default shape only): a call
	// becomes an mcp_call when its result (or any other output) follows, or an
	// mcp_approval_request only when an approval request for it follows.
	pending []*pendingCall
	// approved maps a call id to the approval a resume run answered for it.
	approved map[string]approvedCall
}

type pendingCall struct {
	itemID, callID, name string
	args                 []byte
	complete             bool // the stored tool_call (full arguments) was seen
}

type approvedCall struct {
	approvalID, name, args string
}

// outItem is the state of one output item.
type outItem struct {
	kind   string
	id     string
	index  int
	text   textbuf.Text // message text, reasoning summary or function arguments
	callID string
	name   string
	status string
	// mcp_call only
	serverLabel string
	approvalID  string
	// mcp_approval_request only
	message  string
	output   *string
	errText  *string
	argsDone bool
}

func newResponseEncoder(base Response, opts encodeOptions, emit bool) *responseEncoder {
	if opts.ServerLabel == "" {
		opts.ServerLabel = base.Model
		if opts.Ksadk {
			opts.ServerLabel = serverLabel
		}
	}
	e := &responseEncoder{resp: base, opts: opts, emit: emit, byID: map[string]*outItem{}, approved: map[string]approvedCall{}}
	if emit {
		e.spill = httpx.NewSpill()
	}
	return e
}

// Start returns response.created and response.in_progress (once).
func (e *responseEncoder) Start() []sseEvent {
	e.out = nil
	e.start()
	return e.out
}

func (e *responseEncoder) start() {
	if e.started {
		return
	}
	e.started = true
	e.pushResponse("response.created")
	e.pushResponse("response.in_progress")
}

// pushResponse pushes a lifecycle event, which carries the whole response: built only
// when the event is encoded (it copies every item's text).
func (e *responseEncoder) pushResponse(name string) {
	if !e.emit {
		return // nobody reads it; the Response is built once, from the items, at the end
	}
	e.push(&evResponse{evHead: head(name), Response: e.SpilledResponse(e.spill)})
}

// Ended reports whether the terminal event has been encoded.
func (e *responseEncoder) Ended() bool { return e.ended }

// Add encodes one journal event and returns the stream events it produces.
func (e *responseEncoder) Add(ev host.Event) []sseEvent {
	e.out = nil
	if e.ended {
		return nil
	}
	e.start()
	switch ev.Kind {
	case host.KindTextDelta:
		e.flushPending()
		e.delta(e.open(kindMessage, ev.ItemID, nil), ev.Text)
	case host.KindReasoningDelta:
		e.flushPending()
		e.delta(e.open(kindReasoning, ev.ItemID, nil), ev.Text)
	case host.KindToolArgsDelta:
		if e.serverCall(ev.ItemID, ev.Name) {
			e.pendArgs(ev.ItemID, ev.CallID, ev.Name, ev.Text, false)
			break
		}
		it := e.open(kindCall, ev.ItemID, func(it *outItem) { it.callID, it.name = ev.CallID, ev.Name })
		if it.name == "" {
			it.name = ev.Name
		}
		e.delta(it, ev.Text)
	case host.KindStored:
		if ev.Stored != nil {
			e.stored(ev.Stored)
		}
	case host.KindNative:
		// Framework-native events are not on the Responses wire.
	}
	return e.out
}

func (e *responseEncoder) stored(s *session.Event) {
	if s.Type == session.TypeAssistantStreamSnapshot {
		return // its message's assistant_message carries the text
	}
	switch s.Type {
	case session.TypeToolCall, session.TypeApprovalRequest, session.TypeApprovalResponse, session.TypeToolResult:
	default:
		if s.Type != session.TypeRunStatus || e.terminal(s) {
			e.flushPending()
		}
	}
	switch s.Type {
	case session.TypeAssistantMessage:
		if d, err := session.DataOf[session.AssistantMessageData](*s); err == nil {
			e.complete(e.open(kindMessage, s.ItemID, nil), d.Text)
		}
	case session.TypeReasoning:
		if d, err := session.DataOf[session.ReasoningData](*s); err == nil {
			e.complete(e.open(kindReasoning, s.ItemID, nil), d.Text)
		}
	case session.TypeToolCall:
		if d, err := session.DataOf[session.ToolCallData](*s); err == nil {
			if e.serverCall(s.ItemID, d.Name) {
				e.pendArgs(s.ItemID, d.CallID, d.Name, d.Arguments, true)
				break
			}
			it := e.open(kindCall, s.ItemID, func(it *outItem) { it.callID, it.name = d.CallID, d.Name })
			if d.Name != "" {
				it.name = d.Name
			}
			e.complete(it, d.Arguments)
		}
	case session.TypeApprovalRequest:
		if d, err := session.DataOf[session.ApprovalRequestData](*s); err == nil {
			e.dropPending(d.CallID) // the call waits for approval: it has not run
			it := e.open(kindApproval, s.ItemID, func(it *outItem) {
				it.callID, it.name, it.serverLabel = d.CallID, d.Name, e.opts.ServerLabel
				if !e.opts.Ksadk { // KsADK's item has exactly its own fields
					it.message = d.Message
				}
				it.text.Set(d.Arguments)
			})
			e.close(it, statusCompleted)
		}
	case session.TypeApprovalResponse:
		var d session.ApprovalResponseData
		if !e.opts.Ksadk && e.opts.Approval != nil && json.Unmarshal(s.Data, &d) == nil {
			if req, ok := e.opts.Approval(d.ApprovalRequestID); ok && req.CallID != "" {
				e.approved[req.CallID] = approvedCall{approvalID: d.ApprovalRequestID, name: req.Name, args: req.Arguments}
			}
		}
	case session.TypeToolResult:
		d, err := session.DataOf[session.ToolResultData](*s)
		if err != nil {
			break
		}
		if !e.opts.Ksadk {
			e.mcpResult(d)
		}
		if e.opts.ToolResults {
			e.toolResult(d)
		}
	case session.TypeRunStatus:
		var d session.RunStatusData
		if json.Unmarshal(s.Data, &d) == nil && session.IsTerminalStatus(d.Status) {
			e.finish(d, s.Time.Unix())
		}
	}
}

// open returns the item with this id, adding it (output_item.added and, for text
// items, the opening content or summary part) when it is new.
func (e *responseEncoder) open(kind, id string, init func(*outItem)) *outItem {
	if it, ok := e.byID[id]; ok && id != "" {
		return it
	}
	it := &outItem{kind: kind, id: id, index: len(e.items), status: statusInProgress}
	if it.id == "" { // the host always sets ids; keep items addressable regardless
		it.id = fmt.Sprintf("%s_%d", kind, it.index)
	}
	if init != nil {
		init(it)
	}
	e.items = append(e.items, it)
	e.byID[it.id] = it
	if !e.emit {
		return it
	}
	e.push(&evItem{evHead: head("response.output_item.added"), OutputIndex: it.index, Item: it.json(true, nil)})
	switch kind {
	case kindMessage:
		e.push(&evPart{evHead: head("response.content_part.added"), ItemID: it.id, OutputIndex: it.index, Part: newOutputText("")})
	case kindReasoning:
		e.push(&evSummaryPart{evHead: head("response.reasoning_summary_part.added"), ItemID: it.id, OutputIndex: it.index, Part: summaryPart{Type: "summary_text"}})
	}
	return it
}

// delta appends text to an open item and emits the matching delta event.
func (e *responseEncoder) delta(it *outItem, text string) {
	if it.status != statusInProgress {
		return
	}
	it.text.Add(text)
	if !e.emit {
		return
	}
	switch it.kind {
	case kindMessage:
		e.push(&evTextDelta{evHead: head("response.output_text.delta"), ItemID: it.id, OutputIndex: it.index, Delta: e.spill.Ref(text), Logprobs: []any{}})
	case kindReasoning:
		e.push(&evSummaryDelta{evHead: head("response.reasoning_summary_text.delta"), ItemID: it.id, OutputIndex: it.index, Delta: e.spill.Ref(text)})
	case kindCall:
		e.push(&evArgsDelta{evHead: head("response.function_call_arguments.delta"), ItemID: it.id, OutputIndex: it.index, Delta: e.spill.Ref(text)})
	}
}

// complete brings an item to its stored, authoritative content and closes it. When the
// stored text extends what the deltas carried (or no deltas were seen), the rest goes
// out as one more delta so that concatenated deltas always equal the final text.
func (e *responseEncoder) complete(it *outItem, full string) {
	if it.status != statusInProgress {
		return
	}
	switch {
	case full == it.text.String():
	case strings.HasPrefix(full, it.text.String()):
		e.delta(it, full[it.text.Len():])
	default:
		it.text.Set(full) // the runner replaced the text; the done events carry the final one
	}
	e.close(it, statusCompleted)
}

// close emits the done events of an item.
func (e *responseEncoder) close(it *outItem, status string) {
	if it.status != statusInProgress {
		return
	}
	it.status = status
	switch it.kind {
	case kindCall:
		if it.text.Len() == 0 {
			it.text.Set("{}")
		}
	case kindMCPCall:
		e.mcpArgsDone(it)
	}
	if !e.emit {
		return // the done events would copy the text for no one: Response reads the items
	}
	text := e.spill.Ref(it.text.String())
	switch it.kind {
	case kindMessage:
		e.push(&evTextDone{evHead: head("response.output_text.done"), ItemID: it.id, OutputIndex: it.index, Text: text, Logprobs: []any{}})
		e.push(&evPart{evHead: head("response.content_part.done"), ItemID: it.id, OutputIndex: it.index, Part: newOutputText(text)})
	case kindReasoning:
		e.push(&evSummaryDone{evHead: head("response.reasoning_summary_text.done"), ItemID: it.id, OutputIndex: it.index, Text: text})
		e.push(&evSummaryPart{evHead: head("response.reasoning_summary_part.done"), ItemID: it.id, OutputIndex: it.index, Part: summaryPart{Type: "summary_text", Text: text}})
	case kindCall:
		e.push(&evArgsDone{evHead: head("response.function_call_arguments.done"), ItemID: it.id, OutputIndex: it.index, Name: it.name, Arguments: text})
	case kindMCPCall:
		switch status {
		case statusCompleted:
			e.push(&evItemRef{evHead: head("response.mcp_call.completed"), ItemID: it.id, OutputIndex: it.index})
		case statusFailed:
			e.push(&evItemRef{evHead: head("response.mcp_call.failed"), ItemID: it.id, OutputIndex: it.index})
		}
	}
	e.push(&evItem{evHead: head("response.output_item.done"), OutputIndex: it.index, Item: it.json(false, e.spill)})
}

// serverCall reports whether the tool call item id (of tool name) is one the agent
// runs itself and is shown in the default shape, i.e. held back as a pending call.
func (e *responseEncoder) serverCall(itemID, name string) bool {
	if e.opts.Ksadk {
		return false
	}
	for _, p := range e.pending {
		if p.itemID == itemID {
			return true
		}
	}
	if it, ok := e.byID[itemID]; ok {
		return it.kind == kindMCPCall
	}
	return !e.opts.ClientTools[name]
}

// pendArgs records arguments of a server-side call: a delta, or (complete) the full
// arguments of the stored tool_call. A call whose item is already open gets them as
// mcp_call_arguments events.
func (e *responseEncoder) pendArgs(itemID, callID, name, args string, complete bool) {
	if it, ok := e.byID[itemID]; ok && it.kind == kindMCPCall {
		if complete {
			if strings.HasPrefix(args, it.text.String()) {
				e.mcpArgsDelta(it, args[it.text.Len():])
			} else {
				it.text.Set(args)
			}
			e.mcpArgsDone(it)
		} else {
			e.mcpArgsDelta(it, args)
		}
		return
	}
	var p *pendingCall
	for _, q := range e.pending {
		if q.itemID == itemID {
			p = q
		}
	}
	if p == nil {
		p = &pendingCall{itemID: itemID}
		e.pending = append(e.pending, p)
	}
	if p.callID == "" {
		p.callID = callID
	}
	if p.name == "" {
		p.name = name
	}
	if complete {
		p.args, p.complete = append(p.args[:0], args...), true
	} else {
		p.args = append(p.args, args...)
	}
}

// dropPending forgets the pending call callID: it waits for an approval.
func (e *responseEncoder) dropPending(callID string) {
	for i, p := range e.pending {
		if p.callID == callID && callID != "" {
			e.pending = append(e.pending[:i], e.pending[i+1:]...)
			return
		}
	}
}

// flushPending opens every pending call as an mcp_call in progress.
func (e *responseEncoder) flushPending() {
	for len(e.pending) > 0 {
		e.openPending(e.pending[0])
	}
}

func (e *responseEncoder) openPending(p *pendingCall) *outItem {
	for i, q := range e.pending {
		if q == p {
			e.pending = append(e.pending[:i], e.pending[i+1:]...)
			break
		}
	}
	it := e.openMCP(p.itemID, p.callID, p.name)
	e.mcpArgsDelta(it, string(p.args))
	if p.complete {
		e.mcpArgsDone(it)
	}
	return it
}

// openMCP adds an mcp_call item and marks it in progress.
func (e *responseEncoder) openMCP(itemID, callID, name string) *outItem {
	ap := e.approved[callID]
	it := e.open(kindMCPCall, itemID, func(it *outItem) {
		it.callID, it.name, it.serverLabel, it.approvalID = callID, name, e.opts.ServerLabel, ap.approvalID
		if it.name == "" {
			it.name = ap.name
		}
	})
	e.push(&evItemRef{evHead: head("response.mcp_call.in_progress"), ItemID: it.id, OutputIndex: it.index})
	return it
}

func (e *responseEncoder) mcpArgsDelta(it *outItem, text string) {
	if text == "" || it.argsDone || it.status != statusInProgress {
		return
	}
	it.text.Add(text)
	e.push(&evArgsDelta{evHead: head("response.mcp_call_arguments.delta"), ItemID: it.id, OutputIndex: it.index, Delta: text})
}

func (e *responseEncoder) mcpArgsDone(it *outItem) {
	if it.argsDone {
		return
	}
	it.argsDone = true
	if it.text.Len() == 0 {
		it.text.Set("{}")
	}
	e.push(&evMCPArgsDone{evHead: head("response.mcp_call_arguments.done"), ItemID: it.id, OutputIndex: it.index, Arguments: it.text.String()})
}

// mcpResult completes the mcp_call of a tool result. A result whose call is not in
// this run (a resume run after an approval) opens the call here, with the approved
// request's arguments and id.
func (e *responseEncoder) mcpResult(d session.ToolResultData) {
	var it *outItem
	for _, p := range e.pending {
		if p.callID == d.CallID && d.CallID != "" {
			it = e.openPending(p)
			break
		}
	}
	if it == nil {
		for _, x := range e.items {
			if x.kind == kindMCPCall && x.callID == d.CallID && d.CallID != "" {
				it = x
			}
		}
	}
	if it == nil {
		if e.opts.ClientTools[d.Name] {
			return // the result of a client tool the agent ran anyway: its function_call shows it
		}
		ap := e.approved[d.CallID]
		name := d.Name
		if name == "" {
			name = ap.name
		}
		id := "mcp_" + d.CallID
		if d.CallID == "" {
			id = ""
		}
		it = e.openMCP(id, d.CallID, name)
		e.mcpArgsDelta(it, ap.args)
	}
	if it.status != statusInProgress {
		return
	}
	out := d.Output
	if d.IsError {
		it.errText = &out
		e.close(it, statusFailed)
		return
	}
	it.output = &out
	e.close(it, statusCompleted)
}

// terminal reports whether a stored event is the run's terminal run_status.
func (e *responseEncoder) terminal(s *session.Event) bool {
	return session.IsTerminalStatus(host.RunStatusOf(s))
}

func (e *responseEncoder) toolResult(d session.ToolResultData) {
	ev := &evToolResult{evHead: head(extToolResult), CallID: d.CallID, Name: d.Name, Output: d.Output, IsError: d.IsError}
	for _, it := range e.items {
		if (it.kind == kindCall || it.kind == kindMCPCall) && it.callID == d.CallID {
			ev.ItemID, ev.OutputIndex = it.id, &it.index
		}
	}
	e.push(ev)
}

// finish closes whatever is still open and emits the terminal event.
//
// Mapping (no OpenAI event exists for every run status):
//   - completed → response.completed.
//   - interrupted by an approval request → response.completed, status completed, with
//     the mcp_approval_request items last in output, as OpenAI ends a turn that waits
//     on approvals (agent SDKs and openai-python's stream helper treat incomplete as
//     a failure). With the KsADK switch: response.incomplete, status incomplete,
//     incomplete_details.reason "approval_required", as KsADK sends it.
//   - interrupted otherwise (host shutdown or restart) and failed → `error` then
//     response.failed, status failed.
//   - cancelled → response.incomplete with status cancelled: the union has no
//     response.cancelled, and a cancel is a stop, not a failure (the AI SDK ends the
//     step normally on incomplete, openai-node keeps the partial snapshot); the
//     status still tells a cancel from an approval wait.
func (e *responseEncoder) finish(d session.RunStatusData, at int64) {
	for _, it := range e.items {
		if it.status == statusInProgress {
			e.close(it, statusIncomplete)
		}
	}
	e.resp.Usage = usageOf(d.Usage)
	name := "response.completed"
	switch {
	case d.Status == session.StatusCompleted:
		e.resp.Status, e.resp.CompletedAt = statusCompleted, &at
	case d.Status == session.StatusInterrupted && e.awaitsApproval() && !e.opts.Ksadk:
		// OpenAI ends a turn that waits on approvals completed, with the
		// mcp_approval_request items in output; agent SDKs treat incomplete as fatal.
		e.resp.Status, e.resp.CompletedAt = statusCompleted, &at
	case d.Status == session.StatusInterrupted && e.awaitsApproval():
		e.resp.Status, name = statusIncomplete, "response.incomplete"
		e.resp.IncompleteDetails = &incompleteDetails{Reason: reasonApprovalRequired}
	case d.Status == session.StatusCancelled:
		e.resp.Status, name = "cancelled", "response.incomplete"
	default:
		msg, code := "the agent run failed", "server_error"
		if d.Error != nil {
			if d.Error.Message != "" {
				msg = d.Error.Message
			}
			code = responseErrorCode(d.Error.Code)
		}
		if d.Status == session.StatusInterrupted && (d.Error == nil || d.Error.Message == "") {
			msg = "the run was interrupted"
		}
		e.resp.Status, name = "failed", "response.failed"
		e.resp.Error = &responseError{Code: code, Message: msg, Type: typeServer}
		obj := errorObject{Message: msg, Type: typeServer, Code: &code}
		e.push(&evError{evHead: head("error"), Code: &code, Message: msg, Error: obj})
	}
	e.ended = true
	e.pushResponse(name)
}

func (e *responseEncoder) awaitsApproval() bool {
	for _, it := range e.items {
		if it.kind == kindApproval {
			return true
		}
	}
	return false
}

// responseErrorCode keeps the run's error code when it is one of OpenAI's
// Response.error codes that can apply to an agent run (strict clients validate the
// enum), else server_error.
func responseErrorCode(code string) string {
	switch code {
	case "server_error", "rate_limit_exceeded", "invalid_prompt":
		return code
	}
	return "server_error"
}

// Response returns the Response as of the events seen so far.
func (e *responseEncoder) Response() Response { return e.SpilledResponse(nil) }

// SpilledResponse is Response with its long texts swapped out by spill, for an answer
// written with httpx.WriteJSONSpilled.
func (e *responseEncoder) SpilledResponse(spill *httpx.Spill) Response {
	r := e.resp
	r.Output = make([]any, 0, len(e.items))
	var text textbuf.Text // one message's text is used as it is, not copied
	for _, it := range e.items {
		r.Output = append(r.Output, it.json(false, spill))
		if it.kind == kindMessage {
			text.Add(it.text.String())
		}
	}
	r.OutputText = spill.Ref(text.String())
	return r
}

// json is the item's wire shape; skeleton is the shape output_item.added carries. Its
// text goes through spill (nil: as it is).
func (it *outItem) json(skeleton bool, spill *httpx.Spill) any {
	text := spill.Ref(it.text.String())
	switch it.kind {
	case kindMessage:
		m := messageItem{ID: it.id, Type: "message", Status: it.status, Role: "assistant", Content: []outputTextPart{}}
		if !skeleton {
			m.Content = append(m.Content, newOutputText(text))
		}
		return m
	case kindReasoning:
		r := reasoningItem{ID: it.id, Type: "reasoning", Status: it.status, Summary: []summaryPart{}}
		if !skeleton {
			r.Summary = append(r.Summary, summaryPart{Type: "summary_text", Text: text})
		}
		return r
	case kindCall:
		c := functionCallItem{ID: it.id, Type: "function_call", Status: it.status, CallID: it.callID, Name: it.name}
		if !skeleton {
			c.Arguments = text
		}
		return c
	case kindMCPCall:
		c := mcpCallItem{ID: it.id, Type: kindMCPCall, ServerLabel: it.serverLabel, Name: it.name, Status: it.status, ApprovalRequestID: nullable(it.approvalID)}
		if !skeleton {
			c.Arguments, c.Output, c.Error = text, it.output, it.errText
		}
		return c
	default:
		return approvalRequestItem{ID: it.id, Type: kindApproval, Arguments: text, Name: it.name, ServerLabel: it.serverLabel, Message: it.message}
	}
}

// push numbers an event and, when emitting, encodes it.
func (e *responseEncoder) push(ev interface{ header() *evHead }) {
	h := ev.header()
	h.SequenceNumber = e.seq
	e.seq++
	if !e.emit {
		return
	}
	data, err := json.Marshal(ev)
	if err != nil { // only plain structs and valid RawMessages get here
		panic("openai: encode stream event: " + err.Error())
	}
	out := sseEvent{Name: h.Type, Seq: h.SequenceNumber, Data: data}
	if n := e.spill.Len(); n > e.spilled { // it has placeholders
		out.Spill, e.spilled = e.spill, n
	}
	e.out = append(e.out, out)
}
