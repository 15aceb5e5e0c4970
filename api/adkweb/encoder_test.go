package adkweb

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

var testTime = time.Date(2025, 6, 1, 12, 0, 0, 250000000, time.UTC)

// journal builds synthetic host.Event sequences like the ones a run journals.
type journal struct {
	evs []host.Event
	seq int64
	inv string
}

func newJournal() *journal { return &journal{inv: "run_test"} }

func (j *journal) add(e host.Event) *journal {
	e.Index = len(j.evs)
	j.evs = append(j.evs, e)
	return j
}

func (j *journal) storedAs(typ, author, itemID string, data any, delta json.RawMessage) *journal {
	j.seq++
	return j.add(host.Event{Kind: host.KindStored, Stored: &session.Event{Seq: j.seq, SessionID: "sess_test", InvocationID: j.inv,
		ItemID: itemID, Type: typ, Author: author, Data: session.MustJSON(data), StateDelta: delta,
		Time: testTime.Add(time.Duration(j.seq) * time.Second)}})
}

func (j *journal) stored(typ, itemID string, data any) *journal {
	return j.storedAs(typ, "echo", itemID, data, nil)
}

func (j *journal) delta(kind host.EventKind, item, t string) *journal {
	return j.add(host.Event{Kind: kind, ItemID: item, Text: t})
}

func (j *journal) text(item string, deltas ...string) *journal {
	full := ""
	for _, d := range deltas {
		j.delta(host.KindTextDelta, item, d)
		full += d
	}
	return j.stored(session.TypeAssistantMessage, item, session.AssistantMessageData{Text: full})
}

func (j *journal) opening(text string) *journal {
	return j.storedAs(session.TypeUserMessage, "user", "", session.UserMessageData{Text: text, Content: []session.ContentBlock{{Type: "input_text", Text: text}}}, nil).
		stored(session.TypeRunStatus, "", session.RunStatusData{Status: session.StatusInProgress})
}

func (j *journal) end(status string, e *session.RunError) []host.Event {
	j.stored(session.TypeRunStatus, "", session.RunStatusData{Status: status, Error: e, Usage: &session.Usage{InputTokens: 2, OutputTokens: 3}})
	return j.evs
}

func storedOnly(evs []host.Event) []host.Event {
	var out []host.Event
	for _, e := range evs {
		if e.Kind == host.KindStored {
			e.Index = len(out)
			out = append(out, e)
		}
	}
	return out
}

// scenarios are the run journals the encoder is tested on, one per event shape.
func scenarios() map[string][]host.Event {
	approvalArgs := `{"path":"notes.txt"}`
	return map[string][]host.Event{
		"text": newJournal().opening("hello").
			add(host.Event{Kind: host.KindNative, Name: "echo.options", Text: `{}`}).
			delta(host.KindReasoningDelta, "rs_1", "Thinking ").delta(host.KindReasoningDelta, "rs_1", "about it").
			stored(session.TypeReasoning, "rs_1", session.ReasoningData{Text: "Thinking about it"}).
			text("msg_1", "Echo: ", "hello <b>&</b>").
			end(session.StatusCompleted, nil),
		"tool": newJournal().opening("use the tool").
			add(host.Event{Kind: host.KindToolArgsDelta, ItemID: "fc_1", CallID: "call_1", Name: "lookup", Text: `{"query":`}).
			add(host.Event{Kind: host.KindToolArgsDelta, ItemID: "fc_1", CallID: "call_1", Text: `"paris"}`}).
			stored(session.TypeToolCall, "fc_1", session.ToolCallData{CallID: "call_1", Name: "lookup", Arguments: `{"query":"paris"}`}).
			stored(session.TypeToolResult, "", session.ToolResultData{CallID: "call_1", Name: "lookup", Output: `{"words":1}`}).
			stored(session.TypeToolCall, "fc_2", session.ToolCallData{CallID: "call_2", Name: "clock", Arguments: `[1,2]`}).
			stored(session.TypeToolResult, "", session.ToolResultData{CallID: "call_2", Output: "boom", IsError: true}).
			stored(session.TypeToolCall, "fc_3", session.ToolCallData{CallID: "call_3", Name: "raw", Arguments: `not json`}).
			stored(session.TypeToolResult, "", session.ToolResultData{CallID: "call_3", Name: "raw", Output: `42`}).
			text("msg_1", "It has ", "one word.").
			end(session.StatusCompleted, nil),
		"approval": newJournal().opening("please approve deleting notes.txt").
			text("msg_1", "I need ", "your approval.").
			stored(session.TypeToolCall, "fc_1", session.ToolCallData{CallID: "call_1", Name: "delete_file", Arguments: approvalArgs}).
			stored(session.TypeApprovalRequest, "apr_1", session.ApprovalRequestData{CallID: "call_1", Name: "delete_file", Arguments: approvalArgs,
				Message: "Delete notes.txt?", Detail: json.RawMessage(`{"risk":"destructive"}`)}).
			stored(session.TypeApprovalRequest, "apr_2", session.ApprovalRequestData{Name: "send_mail", Arguments: `{}`}).
			end(session.StatusInterrupted, nil),
		"resume": newJournal().
			storedAs(session.TypeApprovalResponse, "user", "", session.ApprovalResponseData{ApprovalRequestID: "apr_1", Approve: true}, nil).
			stored(session.TypeRunStatus, "", session.RunStatusData{Status: session.StatusInProgress}).
			stored(session.TypeToolResult, "", session.ToolResultData{CallID: "call_1", Name: "delete_file", Output: `{"deleted":"notes.txt"}`}).
			text("msg_2", "Approved.").
			end(session.StatusCompleted, nil),
		"state": newJournal().opening("state:color=blue").
			storedAs(session.TypeStateDelta, "echo", "", json.RawMessage(`{"color":"blue","user:lang":"go","temp:x":null}`), json.RawMessage(`{"color":"blue"}`)).
			text("msg_1", "State updated: ", "color=blue").
			end(session.StatusCompleted, nil),
		"failure": newJournal().opening("fail").
			delta(host.KindTextDelta, "msg_1", "Part").
			stored(session.TypeAssistantMessage, "msg_1", session.AssistantMessageData{Text: "Partial"}).
			end(session.StatusFailed, &session.RunError{Code: "agent_error", Message: "echo: failing"}),
		"cancelled": newJournal().opening("slow").
			delta(host.KindTextDelta, "msg_1", "Echo: ").
			stored(session.TypeAssistantMessage, "msg_1", session.AssistantMessageData{Text: "Echo: "}).
			end(session.StatusCancelled, nil),
		// An ADK runner's items with the ADK events' own fields (event meta): the agent's
		// name as author, usage, the turn's end; the tool's state delta lands on its
		// function response event.
		"adk": newJournal().opening("weather city=Paris").
			add(host.Event{Kind: host.KindNative, Name: host.NativeEventMeta, Text: `{"author":"assistant","usageMetadata":{"promptTokenCount":2,"totalTokenCount":3},"nodeInfo":{"path":"assistant@1"},"longRunningToolIds":[]}`}).
			stored(session.TypeToolCall, "fc_1", withMeta(session.ToolCallData{CallID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
				`{"author":"assistant","usageMetadata":{"promptTokenCount":2,"totalTokenCount":3},"nodeInfo":{"path":"assistant@1"},"longRunningToolIds":[]}`)).
			add(host.Event{Kind: host.KindNative, Name: host.NativeEventMeta, Text: `{"author":"assistant","nodeInfo":{"path":"assistant@1"},"actions":{"stateDelta":{"user:last_city":"Paris"}}}`}).
			stored(session.TypeToolResult, "", withMeta(session.ToolResultData{CallID: "call_1", Name: "get_weather", Output: `{"forecast":"sunny"}`},
				`{"author":"assistant","nodeInfo":{"path":"assistant@1"},"actions":{"stateDelta":{"user:last_city":"Paris"}}}`)).
			storedAs(session.TypeStateDelta, "echo", "", json.RawMessage(`{"user:last_city":"Paris"}`), json.RawMessage(`{"user:last_city":"Paris"}`)).
			add(host.Event{Kind: host.KindNative, Name: host.NativeEventMeta, Text: `{"author":"assistant","partial":true,"nodeInfo":{"path":"assistant@1"}}`}).
			delta(host.KindTextDelta, "msg_1", "Sunny ").delta(host.KindTextDelta, "msg_1", "in Paris.").
			add(host.Event{Kind: host.KindNative, Name: host.NativeEventMeta, Text: `{"author":"assistant","turnComplete":true,"finishReason":"STOP","usageMetadata":{"totalTokenCount":9},"nodeInfo":{"path":"assistant@1"}}`}).
			stored(session.TypeAssistantMessage, "msg_1", withMeta(session.AssistantMessageData{Text: "Sunny in Paris."},
				`{"author":"assistant","turnComplete":true,"finishReason":"STOP","usageMetadata":{"totalTokenCount":9},"nodeInfo":{"path":"assistant@1"}}`)).
			end(session.StatusCompleted, nil),
		"shutdown": newJournal().opening("slow").
			end(session.StatusInterrupted, &session.RunError{Code: "host_shutdown", Message: "the host shut down during the run"}),
	}
}

func encodeAll(evs []host.Event, opts encodeOptions) []Event {
	enc := newEncoder("echo", "run_test", opts)
	out := []Event{}
	for _, ev := range evs {
		out = append(out, enc.Add(ev)...)
	}
	return append(out, enc.Flush()...)
}

// withMeta is data as the host stores it after a runner's event meta.
func withMeta(data any, meta string) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(session.MustJSON(data), &m); err != nil {
		panic(err)
	}
	m["meta"] = json.RawMessage(meta)
	return session.MustJSON(m)
}

// frameSSE frames events as /run_sse writes them.
func frameSSE(t *testing.T, evs []Event) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, ev := range evs {
		data, err := marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("data: ")
		b.Write(data)
		b.WriteString("\n\n")
	}
	return b.Bytes()
}

func names(m map[string][]host.Event) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestEncoderGolden pins the Event JSON of every shape, streamed and not.
func TestEncoderGolden(t *testing.T) {
	sc := scenarios()
	for _, name := range names(sc) {
		t.Run(name, func(t *testing.T) {
			golden(t, "stream_"+name+".sse", frameSSE(t, encodeAll(sc[name], encodeOptions{Streaming: true})))
			raw, err := marshal(encodeAll(sc[name], encodeOptions{}))
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "run_"+name+".json", indent(t, raw))
		})
	}
}

// TestEncoderReplay: the encoder is a pure function of the journal, and a run rebuilt
// from the store (no deltas) gives exactly the non-partial events of the live stream.
func TestEncoderReplay(t *testing.T) {
	sc := scenarios()
	for _, name := range names(sc) {
		live := frameSSE(t, encodeAll(sc[name], encodeOptions{Streaming: true}))
		if again := frameSSE(t, encodeAll(sc[name], encodeOptions{Streaming: true})); !bytes.Equal(live, again) {
			t.Errorf("%s: two encodings of one journal differ", name)
		}
		var final []Event
		for _, ev := range encodeAll(sc[name], encodeOptions{Streaming: true}) {
			if !ev.Partial {
				final = append(final, ev)
			}
		}
		plain := frameSSE(t, encodeAll(sc[name], encodeOptions{}))
		if !bytes.Equal(frameSSE(t, final), plain) {
			t.Errorf("%s: non-streaming events differ from the streamed ones without partials", name)
		}
		if replay := frameSSE(t, encodeAll(storedOnly(sc[name]), encodeOptions{Streaming: true})); !bytes.Equal(replay, plain) {
			t.Errorf("%s: replay from stored events differs:\n%s\nwant\n%s", name, replay, plain)
		}
	}
}

// TestEncoderPartials: partial events carry deltas only, and the final event the whole
// text, so a client that appends partials and replaces them with the final event (ADK
// web) shows each text once.
func TestEncoderPartials(t *testing.T) {
	evs := encodeAll(scenarios()["text"], encodeOptions{Streaming: true})
	acc := map[bool]string{}
	for _, ev := range evs {
		if ev.Content == nil {
			continue // the turn's end, with its usage
		}
		p := ev.Content.Parts[0]
		if ev.Partial {
			acc[p.Thought] += *p.Text
			continue
		}
		if got := acc[p.Thought]; got != *p.Text {
			t.Errorf("partials %q, final %q", got, *p.Text)
		}
		acc[p.Thought] = ""
	}
}

// TestSessionProjection pins a session's events as GET .../sessions/{id} returns them:
// user events included, the creation-time state hidden, answers to confirmations and
// tool results sent by the client rebuilt as function responses.
func TestSessionProjection(t *testing.T) {
	j := newJournal()
	j.inv = ""
	j.storedAs(session.TypeStateDelta, "user", "", json.RawMessage(`{"start":1}`), json.RawMessage(`{"start":1}`))
	j.inv = "run_1"
	j.storedAs(session.TypeUserMessage, "user", "", session.UserMessageData{Text: "look", Content: []session.ContentBlock{
		{Type: "input_text", Text: "look"},
		{Type: "input_image", ImageURL: "data:image/png;base64,iVBORw0KGgo=", Filename: "dot.png"},
		{Type: "input_file", FileURL: "gs://bucket/report.pdf", Filename: "report.pdf"},
		{Type: "input_file", FileData: "data:text/plain;base64,aGk=", Filename: "hi.txt"},
	}}, nil)
	j.stored(session.TypeRunStatus, "", session.RunStatusData{Status: session.StatusInProgress})
	j.stored(session.TypeToolCall, "fc_1", session.ToolCallData{CallID: "call_1", Name: "delete_file", Arguments: `{"path":"a"}`})
	j.stored(session.TypeApprovalRequest, "apr_1", session.ApprovalRequestData{CallID: "call_1", Name: "delete_file", Arguments: `{"path":"a"}`})
	j.stored(session.TypeRunStatus, "", session.RunStatusData{Status: session.StatusInterrupted})
	j.inv = "run_2"
	j.storedAs(session.TypeStateDelta, "user", "", json.RawMessage(`{"mood":"ok"}`), json.RawMessage(`{"mood":"ok"}`))
	j.storedAs(session.TypeApprovalResponse, "user", "", session.ApprovalResponseData{ApprovalRequestID: "apr_1", Approve: true, Output: `{"done":true}`}, nil)
	j.storedAs(session.TypeUserMessage, "user", "", session.UserMessageData{Items: []json.RawMessage{
		json.RawMessage(`{"type":"function_call_output","call_id":"call_1","output":"{\"late\":true}"}`),
		json.RawMessage(`{"type":"message","role":"user","content":"skipped"}`),
	}}, nil)
	j.stored(session.TypeRunStatus, "", session.RunStatusData{Status: session.StatusCompleted})
	j.inv = "p-1"
	j.storedAs(session.TypeStateDelta, "user", "", json.RawMessage(`{"patched":true}`), json.RawMessage(`{"patched":true}`))
	j.inv = "run_3"
	j.storedAs(session.TypeApprovalResponse, "user", "", session.ApprovalResponseData{ApprovalRequestID: "apr_9", Approve: false}, nil)
	j.storedAs(session.TypeFeedback, "user", "", map[string]string{"rating": "up"}, nil)

	stored := make([]session.Event, 0, len(j.evs))
	for _, ev := range j.evs {
		stored = append(stored, *ev.Stored)
	}
	sess := session.Session{Key: session.Key{App: "echo", User: "alice", ID: "sess_test"}, UpdatedAt: testTime}
	st := session.State{App: map[string]any{"theme": "dark"}, User: map[string]any{"lang": "go"}, Session: map[string]any{"start": 1.0, "mood": "ok"}}
	raw, err := marshal(sessionJSON(sess, st, stored))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "session.json", indent(t, raw))
}

// TestStateDeltaShownOnceWhereADKWritesIt: a state delta the event meta carries is shown
// on that event; the state_delta item stored for it is not shown again, another one is.
func TestStateDeltaShownOnceWhereADKWritesIt(t *testing.T) {
	meta := `{"author":"assistant","actions":{"stateDelta":{"a":1}}}`
	evs := newJournal().opening("go").
		stored(session.TypeToolResult, "", withMeta(session.ToolResultData{CallID: "c1", Name: "t", Output: `{}`}, meta)).
		storedAs(session.TypeStateDelta, "echo", "", json.RawMessage(`{ "a": 1 }`), json.RawMessage(`{"a":1}`)).
		storedAs(session.TypeStateDelta, "echo", "", json.RawMessage(`{"b":2}`), json.RawMessage(`{"b":2}`)).
		end(session.StatusCompleted, nil)
	out := encodeAll(evs, encodeOptions{})
	var deltas []string
	for _, ev := range out {
		if string(ev.Actions.StateDelta) != "{}" {
			deltas = append(deltas, string(ev.Actions.StateDelta)+" by "+ev.Author)
		}
	}
	want := []string{`{"a":1} by assistant`, `{"b":2} by assistant`}
	if len(deltas) != len(want) || deltas[0] != want[0] || deltas[1] != want[1] {
		t.Fatalf("state deltas %q, want %q", deltas, want)
	}
}
