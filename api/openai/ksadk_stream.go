package openai

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// ksadkEncoder renders a run as KsADK's own /v1/responses event stream, for clients
// written against KsADK (the KsADK switch): event: lines with data objects that carry
// neither type nor sequence_number, the bare response object on the lifecycle events,
// one message item for all text of the turn, reasoning as response.reasoning.delta,
// tool calls as function_call items followed by response.ksadk.tool_result, and an
// approval pause as an mcp_approval_request item then response.incomplete. JSON is
// written as Python's json.dumps writes it (", " and ": " separators), so the stream
// matches KsADK's byte for byte up to ids and times.
//
// Like responseEncoder it is a deterministic function of the journal; Seq numbers the
// events so that replays with starting_after line up.
type ksadkEncoder struct {
	base Response
	seq  int
	out  []sseEvent

	started, ended bool
	next           int // next output_index

	msgID     string
	msgIdx    int
	msgOpen   bool
	rsID      string
	rsIdx     int
	rsOpen    bool
	text      strings.Builder   // the turn's text, as KsADK's completed_text
	sent      map[string]string // text sent per message or reasoning item
	lastMsgAt map[string]int    // where each message item's text starts in text

	begin, end time.Time // of the run's stored events: KsADK's timing.agent_duration_ms
}

func newKsadkEncoder(base Response) *ksadkEncoder {
	return &ksadkEncoder{base: base, sent: map[string]string{}, lastMsgAt: map[string]int{}}
}

// Start returns response.created and response.in_progress.
func (e *ksadkEncoder) Start() []sseEvent {
	e.out = nil
	e.start()
	return e.out
}

func (e *ksadkEncoder) start() {
	if e.started {
		return
	}
	e.started = true
	p := e.payload("in_progress", nil, nil, nil)
	e.push("response.created", p)
	e.push("response.in_progress", p)
}

// Ended reports whether the terminal event has been encoded.
func (e *ksadkEncoder) Ended() bool { return e.ended }

// Add encodes one journal event.
func (e *ksadkEncoder) Add(ev host.Event) []sseEvent {
	e.out = nil
	if e.ended {
		return nil
	}
	e.start()
	switch ev.Kind {
	case host.KindTextDelta:
		e.textDelta(ev.ItemID, ev.Text)
	case host.KindReasoningDelta:
		e.reasoningDelta(ev.ItemID, ev.Text)
	case host.KindStored:
		if ev.Stored != nil {
			e.stored(ev.Stored)
		}
	case host.KindToolArgsDelta, host.KindNative:
		// KsADK's stream carries tool calls whole (from the stored tool_call) and no native events.
	}
	return e.out
}

func (e *ksadkEncoder) stored(s *session.Event) {
	if e.begin.IsZero() {
		e.begin = s.Time
	}
	e.end = s.Time
	switch s.Type {
	case session.TypeAssistantMessage:
		if d, err := session.DataOf[session.AssistantMessageData](*s); err == nil {
			e.fullText(s.ItemID, d.Text)
		}
	case session.TypeReasoning:
		if d, err := session.DataOf[session.ReasoningData](*s); err == nil {
			if sent := e.sent[s.ItemID]; strings.HasPrefix(d.Text, sent) {
				e.reasoningDelta(s.ItemID, d.Text[len(sent):])
			}
		}
	case session.TypeToolCall:
		if d, err := session.DataOf[session.ToolCallData](*s); err == nil {
			e.toolCall(s.ItemID, d)
		}
	case session.TypeToolResult:
		if d, err := session.DataOf[session.ToolResultData](*s); err == nil {
			e.push(extToolResult, ordered{{"name", d.Name}, {"output", d.Output}, {"run_id", d.CallID}})
		}
	case session.TypeApprovalRequest:
		if d, err := session.DataOf[session.ApprovalRequestData](*s); err == nil {
			e.approval(s.ItemID, d)
		}
	case session.TypeRunStatus:
		var d session.RunStatusData
		if json.Unmarshal(s.Data, &d) == nil && session.IsTerminalStatus(d.Status) {
			e.finish(d)
		}
	}
}

func (e *ksadkEncoder) openMessage(itemID string) {
	if e.msgOpen {
		return
	}
	e.msgOpen, e.msgID, e.msgIdx = true, itemID, e.next
	e.next++
	e.push("response.output_item.added", ordered{{"output_index", e.msgIdx}, {"item", e.messageItem("in_progress", "", false)}})
	e.push("response.content_part.added", ordered{{"item_id", e.msgID}, {"output_index", e.msgIdx}, {"content_index", 0},
		{"part", ordered{{"type", "output_text"}, {"text", ""}}}})
}

func (e *ksadkEncoder) textDelta(itemID, delta string) {
	if delta == "" {
		return
	}
	e.openMessage(itemID)
	if _, ok := e.lastMsgAt[itemID]; !ok {
		e.lastMsgAt[itemID] = e.text.Len()
	}
	e.sent[itemID] += delta
	e.text.WriteString(delta)
	e.push("response.output_text.delta", ordered{{"item_id", e.msgID}, {"output_index", e.msgIdx}, {"content_index", 0}, {"delta", delta}})
}

// fullText brings a message item to its stored text: the unsent rest as a delta, or,
// when the runner replaced the text, KsADK's replace delta carrying the whole text.
func (e *ksadkEncoder) fullText(itemID, full string) {
	sent := e.sent[itemID]
	if strings.HasPrefix(full, sent) {
		e.textDelta(itemID, full[len(sent):])
		return
	}
	at := e.lastMsgAt[itemID]
	whole := e.text.String()[:at] + full
	e.text.Reset()
	e.text.WriteString(whole)
	e.sent[itemID] = full
	e.push("response.output_text.delta", ordered{{"item_id", e.msgID}, {"output_index", e.msgIdx}, {"content_index", 0}, {"delta", whole}, {"replace", true}})
}

func (e *ksadkEncoder) reasoningDelta(itemID, delta string) {
	if delta == "" {
		return
	}
	if !e.rsOpen {
		e.rsOpen, e.rsID, e.rsIdx = true, itemID, e.next
		e.next++
		e.push("response.output_item.added", ordered{{"output_index", e.rsIdx}, {"item", e.reasoningItem("in_progress")}})
	}
	e.sent[itemID] += delta
	e.push("response.reasoning.delta", ordered{{"item_id", e.rsID}, {"output_index", e.rsIdx}, {"delta", delta}})
}

func (e *ksadkEncoder) toolCall(itemID string, d session.ToolCallData) {
	args := pyJSONText(d.Arguments)
	idx := e.next
	e.next++
	name := d.Name
	if name == "" {
		name = "unknown"
	}
	item := func(status, a string) ordered {
		return ordered{{"id", itemID}, {"type", "function_call"}, {"status", status}, {"call_id", d.CallID}, {"name", name}, {"arguments", a}}
	}
	e.push("response.output_item.added", ordered{{"output_index", idx}, {"item", item("in_progress", "")}})
	e.push("response.function_call_arguments.delta", ordered{{"item_id", itemID}, {"output_index", idx}, {"delta", args}})
	e.push("response.function_call_arguments.done", ordered{{"item_id", itemID}, {"output_index", idx}, {"arguments", args}})
	e.push("response.output_item.done", ordered{{"output_index", idx}, {"item", item("completed", args)}})
}

// approval ends the stream as KsADK does: the request item, then response.incomplete.
func (e *ksadkEncoder) approval(id string, d session.ApprovalRequestData) {
	args := pyJSONText(d.Arguments)
	item := ordered{{"id", id}, {"type", kindApproval}, {"name", d.Name}, {"arguments", args}, {"server_label", "ksadk"}}
	idx := e.next
	e.next++
	e.push("response.output_item.added", ordered{{"output_index", idx}, {"item", item}})
	e.push("response.output_item.done", ordered{{"output_index", idx}, {"item", item}})
	var argv any = args
	if json.Valid([]byte(d.Arguments)) {
		argv = json.RawMessage(d.Arguments)
	}
	interrupt := ordered{{"tool_name", d.Name}, {"arguments", argv}, {"approval_request_id", id}}
	if d.CallID != "" {
		interrupt = append(interrupt, kv{"call_id", d.CallID})
	}
	details := ordered{{"reason", reasonApprovalRequired}, {"ksadk_interrupt", interrupt}}
	e.ended = true
	e.push("response.incomplete", e.payload(statusIncomplete, nil, details, nil))
}

func (e *ksadkEncoder) finish(d session.RunStatusData) {
	e.ended = true
	switch d.Status {
	case session.StatusCompleted:
		text := e.text.String()
		if text != "" {
			e.openMessage(e.msgID)
		}
		if e.msgOpen {
			e.push("response.output_text.done", ordered{{"item_id", e.msgID}, {"output_index", e.msgIdx}, {"content_index", 0}, {"text", text}})
			e.push("response.content_part.done", ordered{{"item_id", e.msgID}, {"output_index", e.msgIdx}, {"content_index", 0},
				{"part", ordered{{"type", "output_text"}, {"text", text}}}})
			e.push("response.output_item.done", ordered{{"output_index", e.msgIdx}, {"item", e.messageItem(statusCompleted, text, true)}})
		}
		if e.rsOpen {
			e.push("response.output_item.done", ordered{{"output_index", e.rsIdx}, {"item", e.reasoningItem(statusCompleted)}})
		}
		e.push("response.completed", e.payload(statusCompleted, nil, nil, d.Usage))
	case session.StatusCancelled:
		e.push("response.cancelled", e.payload("cancelled", nil, nil, d.Usage))
	default:
		msg := "the agent run failed"
		if d.Error != nil && d.Error.Message != "" {
			msg = d.Error.Message
		} else if d.Status == session.StatusInterrupted {
			msg = "the run was interrupted"
		}
		e.push("response.failed", e.payload(statusFailed, ordered{{"message", msg}}, nil, d.Usage))
	}
}

func (e *ksadkEncoder) messageItem(status, text string, withContent bool) ordered {
	content := []any{}
	if withContent {
		content = append(content, ordered{{"type", "output_text"}, {"text", text}})
	}
	return ordered{{"id", e.msgID}, {"type", "message"}, {"status", status}, {"role", "assistant"}, {"content", content}}
}

func (e *ksadkEncoder) reasoningItem(status string) ordered {
	return ordered{{"id", e.rsID}, {"type", "reasoning"}, {"status", status}, {"summary", []any{}}}
}

// payload is KsADK's response object (its build_responses_payload).
func (e *ksadkEncoder) payload(status string, errObj, incomplete ordered, u *session.Usage) ordered {
	text := e.text.String()
	msgID := e.msgID
	if msgID == "" {
		msgID = "msg_" + strings.TrimPrefix(e.base.ID, "resp_")
	}
	msg := ordered{{"id", msgID}, {"type", "message"}, {"status", status}, {"role", "assistant"},
		{"content", []any{ordered{{"type", "output_text"}, {"text", text}}}}}
	var usage any
	if status != "in_progress" {
		var in, out, cached, reasoning int64
		if u != nil {
			in, out, cached, reasoning = u.InputTokens, u.OutputTokens, u.CachedTokens, u.ReasoningTokens
		}
		usage = ordered{{"input_tokens", in}, {"input_tokens_details", ordered{{"cached_tokens", cached}}},
			{"output_tokens", out}, {"output_tokens_details", ordered{{"reasoning_tokens", reasoning}}}, {"total_tokens", in + out}}
	}
	var errv, incv any
	if errObj != nil {
		errv = errObj
	}
	if incomplete != nil {
		incv = incomplete
	}
	metadata := e.base.Metadata
	if metadata == nil {
		metadata = map[string]string{}
	}
	p := ordered{
		{"id", e.base.ID}, {"object", "response"}, {"created_at", e.base.CreatedAt}, {"status", status},
		{"error", errv}, {"incomplete_details", incv}, {"instructions", nil}, {"metadata", metadata},
		{"model", e.base.Model}, {"parallel_tool_calls", true}, {"temperature", nil}, {"top_p", nil},
		{"tools", []any{}}, {"output", []any{msg}}, {"output_text", text}, {"usage", usage},
	}
	if status == statusCompleted {
		ms := float64(e.end.Sub(e.begin).Microseconds()) / 1000
		p = append(p, kv{"timing", ordered{{"agent_duration_ms", ms}, {"phase_status", ordered{{"agent", "measured"}}}}})
	}
	return append(p, kv{"session_id", e.base.SessionID})
}

func (e *ksadkEncoder) push(name string, data ordered) {
	e.out = append(e.out, sseEvent{Name: name, Seq: e.seq, Data: pyJSON(data)})
	e.seq++
}

// kv and ordered are a JSON object with its keys in order, as KsADK's dicts are.
type kv struct {
	K string
	V any
}

type ordered []kv

func (o ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshalNoEscape(p.K)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshalNoEscape(p.V)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// pyJSON encodes v as Python's json.dumps(v, ensure_ascii=False) does: ", " between
// members and ": " after keys.
func pyJSON(v any) []byte {
	b, err := marshalNoEscape(v)
	if err != nil { // plain values only
		panic("openai: encode KsADK event: " + err.Error())
	}
	return pySpacing(b)
}

// pyJSONText re-spaces a JSON text (tool arguments) the Python way; other text is kept.
func pyJSONText(s string) string {
	var compacted bytes.Buffer
	if json.Compact(&compacted, []byte(s)) != nil {
		return s
	}
	return string(pySpacing(compacted.Bytes()))
}

// pySpacing adds a space after every ',' and ':' outside strings of compact JSON.
func pySpacing(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/8)
	inStr, esc := false, false
	for _, c := range b {
		out = append(out, c)
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && (c == ',' || c == ':'):
			out = append(out, ' ')
		}
	}
	return out
}
