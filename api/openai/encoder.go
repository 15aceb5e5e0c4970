package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// Output item kinds.
const (
	kindMessage   = "message"
	kindCall      = "function_call"
	kindReasoning = "reasoning"
	kindApproval  = "mcp_approval_request"
)

// Item statuses.
const (
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
	statusIncomplete = "incomplete"
)

// extToolResult is the KsADK extension event for tool results. Official SDK stream
// helpers throw on unknown event types, so it is only sent to clients that opt in.
const extToolResult = "response.ksadk.tool_result"

// encodeOptions select optional, non-OpenAI stream content.
type encodeOptions struct {
	ToolResults bool
}

// sseEvent is one encoded Server-Sent Event: its event: name and data: JSON.
type sseEvent struct {
	Name string
	Seq  int
	Data []byte
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
}

// outItem is the state of one output item.
type outItem struct {
	kind   string
	id     string
	index  int
	buf    []byte // message text, reasoning summary or function arguments (appended: deltas can be many)
	callID string
	name   string
	status string
}

func newResponseEncoder(base Response, opts encodeOptions, emit bool) *responseEncoder {
	return &responseEncoder{resp: base, opts: opts, emit: emit, byID: map[string]*outItem{}}
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
	e.push(&evResponse{evHead: head("response.created"), Response: e.Response()})
	e.push(&evResponse{evHead: head("response.in_progress"), Response: e.Response()})
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
		e.delta(e.open(kindMessage, ev.ItemID, nil), ev.Text)
	case host.KindReasoningDelta:
		e.delta(e.open(kindReasoning, ev.ItemID, nil), ev.Text)
	case host.KindToolArgsDelta:
		it := e.open(kindCall, ev.ItemID, func(it *outItem) { it.callID, it.name = ev.CallID, ev.Name })
		if it.name == "" {
			it.name = ev.Name
		}
		e.delta(it, ev.Text)
	case host.KindStored:
		if ev.Stored != nil {
			e.stored(ev.Stored)
		}
	}
	return e.out
}

func (e *responseEncoder) stored(s *session.Event) {
	switch s.Type {
	case session.TypeAssistantMessage:
		var d session.AssistantMessageData
		if json.Unmarshal(s.Data, &d) == nil {
			e.complete(e.open(kindMessage, s.ItemID, nil), d.Text)
		}
	case session.TypeReasoning:
		var d session.ReasoningData
		if json.Unmarshal(s.Data, &d) == nil {
			e.complete(e.open(kindReasoning, s.ItemID, nil), d.Text)
		}
	case session.TypeToolCall:
		var d session.ToolCallData
		if json.Unmarshal(s.Data, &d) == nil {
			it := e.open(kindCall, s.ItemID, func(it *outItem) { it.callID, it.name = d.CallID, d.Name })
			if d.Name != "" {
				it.name = d.Name
			}
			e.complete(it, d.Arguments)
		}
	case session.TypeApprovalRequest:
		var d session.ApprovalRequestData
		if json.Unmarshal(s.Data, &d) == nil {
			it := e.open(kindApproval, s.ItemID, func(it *outItem) { it.callID, it.name, it.buf = d.CallID, d.Name, []byte(d.Arguments) })
			e.close(it, statusCompleted)
		}
	case session.TypeToolResult:
		if e.opts.ToolResults {
			var d session.ToolResultData
			if json.Unmarshal(s.Data, &d) == nil {
				e.toolResult(d)
			}
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
	e.push(&evItem{evHead: head("response.output_item.added"), OutputIndex: it.index, Item: it.json(true)})
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
	it.buf = append(it.buf, text...)
	switch it.kind {
	case kindMessage:
		e.push(&evTextDelta{evHead: head("response.output_text.delta"), ItemID: it.id, OutputIndex: it.index, Delta: text, Logprobs: []any{}})
	case kindReasoning:
		e.push(&evSummaryDelta{evHead: head("response.reasoning_summary_text.delta"), ItemID: it.id, OutputIndex: it.index, Delta: text})
	case kindCall:
		e.push(&evArgsDelta{evHead: head("response.function_call_arguments.delta"), ItemID: it.id, OutputIndex: it.index, Delta: text})
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
	case full == string(it.buf):
	case strings.HasPrefix(full, string(it.buf)):
		e.delta(it, full[len(it.buf):])
	default:
		it.buf = append(it.buf[:0], full...) // the runner replaced the text; the done events carry the final one
	}
	e.close(it, statusCompleted)
}

// close emits the done events of an item.
func (e *responseEncoder) close(it *outItem, status string) {
	if it.status != statusInProgress {
		return
	}
	it.status = status
	text := string(it.buf)
	switch it.kind {
	case kindMessage:
		e.push(&evTextDone{evHead: head("response.output_text.done"), ItemID: it.id, OutputIndex: it.index, Text: text, Logprobs: []any{}})
		e.push(&evPart{evHead: head("response.content_part.done"), ItemID: it.id, OutputIndex: it.index, Part: newOutputText(text)})
	case kindReasoning:
		e.push(&evSummaryDone{evHead: head("response.reasoning_summary_text.done"), ItemID: it.id, OutputIndex: it.index, Text: text})
		e.push(&evSummaryPart{evHead: head("response.reasoning_summary_part.done"), ItemID: it.id, OutputIndex: it.index, Part: summaryPart{Type: "summary_text", Text: text}})
	case kindCall:
		if len(it.buf) == 0 {
			it.buf = append(it.buf, "{}"...)
		}
		e.push(&evArgsDone{evHead: head("response.function_call_arguments.done"), ItemID: it.id, OutputIndex: it.index, Name: it.name, Arguments: string(it.buf)})
	}
	e.push(&evItem{evHead: head("response.output_item.done"), OutputIndex: it.index, Item: it.json(false)})
}

func (e *responseEncoder) toolResult(d session.ToolResultData) {
	ev := &evToolResult{evHead: head(extToolResult), CallID: d.CallID, Name: d.Name, Output: d.Output, IsError: d.IsError}
	for _, it := range e.items {
		if it.kind == kindCall && it.callID == d.CallID {
			ev.ItemID, ev.OutputIndex = it.id, &it.index
		}
	}
	e.push(ev)
}

// finish closes whatever is still open and emits the terminal event.
//
// Mapping (no OpenAI event exists for every run status):
//   - completed → response.completed.
//   - interrupted by an approval request → response.incomplete, status incomplete,
//     with the mcp_approval_request item last in output (seed 001: incomplete means
//     "interrupted or waiting for approval/resume"). incomplete_details stays null:
//     KsADK's reason "approval_required" is outside OpenAI's enum and strict clients
//     (openai-python with strict validation) reject it; the item says why.
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
	case d.Status == session.StatusInterrupted && e.awaitsApproval():
		e.resp.Status, name = statusIncomplete, "response.incomplete"
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
	e.push(&evResponse{evHead: head(name), Response: e.Response()})
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
func (e *responseEncoder) Response() Response {
	r := e.resp
	r.Output = make([]any, 0, len(e.items))
	var text strings.Builder
	for _, it := range e.items {
		r.Output = append(r.Output, it.json(false))
		if it.kind == kindMessage {
			text.Write(it.buf)
		}
	}
	r.OutputText = text.String()
	return r
}

// json is the item's wire shape; skeleton is the shape output_item.added carries.
func (it *outItem) json(skeleton bool) any {
	text := string(it.buf)
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
	default:
		return approvalRequestItem{ID: it.id, Type: kindApproval, Arguments: text, Name: it.name, ServerLabel: serverLabel}
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
	e.out = append(e.out, sseEvent{Name: h.Type, Seq: h.SequenceNumber, Data: data})
}
