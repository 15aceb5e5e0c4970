package openai

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

var testTime = time.Unix(1700000000, 0).UTC()

// journal builds synthetic host.Event sequences like the ones a run journals.
type journal struct {
	evs []host.Event
	seq int64
}

func (j *journal) add(e host.Event) *journal {
	e.Index = len(j.evs)
	j.evs = append(j.evs, e)
	return j
}

func (j *journal) stored(typ, itemID string, data any) *journal {
	j.seq++
	return j.add(host.Event{Kind: host.KindStored, Stored: &session.Event{Seq: j.seq, SessionID: "sess_test", InvocationID: "run_test",
		ItemID: itemID, Type: typ, Author: "echo", Data: session.MustJSON(data), Time: testTime.Add(time.Duration(j.seq) * time.Second)}})
}

func (j *journal) text(item, t string) *journal {
	return j.add(host.Event{Kind: host.KindTextDelta, ItemID: item, Text: t})
}

func (j *journal) reasoning(item, t string) *journal {
	return j.add(host.Event{Kind: host.KindReasoningDelta, ItemID: item, Text: t})
}

func (j *journal) args(item, callID, name, t string) *journal {
	return j.add(host.Event{Kind: host.KindToolArgsDelta, ItemID: item, CallID: callID, Name: name, Text: t})
}

func (j *journal) opening() *journal {
	return j.stored(session.TypeUserMessage, "", session.UserMessageData{Text: "hi", Content: []session.ContentBlock{{Type: "input_text", Text: "hi"}}}).
		stored(session.TypeRunStatus, "", session.RunStatusData{Status: session.StatusInProgress})
}

func (j *journal) end(status string, e *session.RunError, u *session.Usage) []host.Event {
	j.stored(session.TypeRunStatus, "", session.RunStatusData{Status: status, Error: e, Usage: u})
	return j.evs
}

// storedOnly drops the live deltas: the journal of a run rebuilt from the store.
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

var usage = &session.Usage{InputTokens: 3, OutputTokens: 5, ReasoningTokens: 1, CachedTokens: 2}

// scenarios are the journals every encoder is tested on.
func scenarios() map[string][]host.Event {
	text := (&journal{}).opening().
		add(host.Event{Kind: host.KindNative, Name: "echo.options", Text: `{}`}).
		reasoning("rs_1", "Thinking ").reasoning("rs_1", "about it").
		stored(session.TypeReasoning, "rs_1", session.ReasoningData{Text: "Thinking about it"}).
		text("msg_1", "Echo: ").text("msg_1", "hi").
		stored(session.TypeAssistantMessage, "msg_1", session.AssistantMessageData{Text: "Echo: hi"}).
		end(session.StatusCompleted, nil, usage)
	tool := (&journal{}).opening().
		args("fc_1", "call_1", "lookup", `{"query":`).args("fc_1", "call_1", "", `"paris"}`).
		stored(session.TypeToolCall, "fc_1", session.ToolCallData{CallID: "call_1", Name: "lookup", Arguments: `{"query":"paris"}`}).
		stored(session.TypeToolResult, "", session.ToolResultData{CallID: "call_1", Name: "lookup", Output: `{"words":1}`}).
		text("msg_2", "Found ").text("msg_2", "it").
		stored(session.TypeAssistantMessage, "msg_2", session.AssistantMessageData{Text: "Found it."}).
		end(session.StatusCompleted, nil, nil)
	approval := (&journal{}).opening().
		text("msg_3", "I need approval.").
		stored(session.TypeAssistantMessage, "msg_3", session.AssistantMessageData{Text: "I need approval."}).
		stored(session.TypeToolCall, "fc_3", session.ToolCallData{CallID: "call_3", Name: "delete_file", Arguments: `{"path":"notes.txt"}`}).
		stored(session.TypeApprovalRequest, "apr_3", session.ApprovalRequestData{CallID: "call_3", Name: "delete_file", Arguments: `{"path":"notes.txt"}`, Message: "Delete notes.txt?"}).
		end(session.StatusInterrupted, nil, nil)
	failure := (&journal{}).opening().
		text("msg_4", "Partial").
		stored(session.TypeAssistantMessage, "msg_4", session.AssistantMessageData{Text: "Partial"}).
		end(session.StatusFailed, &session.RunError{Code: "agent_error", Message: "the agent failed: boom"}, nil)
	cancelled := (&journal{}).opening().
		text("msg_5", "Stopped ").
		stored(session.TypeAssistantMessage, "msg_5", session.AssistantMessageData{Text: "Stopped "}).
		end(session.StatusCancelled, nil, nil)
	// The turn that answers the approval above: the guarded call runs, with its result.
	resume := (&journal{}).
		stored(session.TypeApprovalResponse, "", session.ApprovalResponseData{ApprovalRequestID: "apr_3", Approve: true}).
		stored(session.TypeRunStatus, "", session.RunStatusData{Status: session.StatusInProgress}).
		stored(session.TypeToolResult, "", session.ToolResultData{CallID: "call_3", Name: "delete_file", Output: `{"deleted":"notes.txt"}`}).
		text("msg_6", "Approved.").
		stored(session.TypeAssistantMessage, "msg_6", session.AssistantMessageData{Text: "Approved."}).
		end(session.StatusCompleted, nil, usage)
	return map[string][]host.Event{"text": text, "tool": tool, "approval": approval, "failure": failure, "cancelled": cancelled, "resume": resume}
}

// testApprovals resolves the approval request of the approval scenario, as the
// handler does from the session.
func testApprovals(id string) (session.ApprovalRequestData, bool) {
	if id == "apr_3" {
		return session.ApprovalRequestData{CallID: "call_3", Name: "delete_file", Arguments: `{"path":"notes.txt"}`}, true
	}
	return session.ApprovalRequestData{}, false
}

// defaultOpts are the default (OpenAI) shape's options of the scenarios.
func defaultOpts() encodeOptions { return encodeOptions{Approval: testApprovals} }

func testBase() Response {
	return baseResponse(runIdentity{ResponseID: "resp_test", CreatedAt: testTime, SessionID: "sess_test"},
		requestEcho{Model: "echo", Store: true, Metadata: map[string]string{"k": "v"}})
}

// transcript encodes a journal as the SSE bytes a client receives.
func transcript(evs []host.Event, opts encodeOptions) []byte {
	var b bytes.Buffer
	enc := newResponseEncoder(testBase(), opts, true)
	write := func(out []sseEvent) {
		for _, e := range out {
			b.WriteString("event: " + e.Name + "\ndata: ")
			b.Write(e.Data)
			b.WriteString("\n\n")
		}
	}
	write(enc.Start())
	for _, ev := range evs {
		write(enc.Add(ev))
	}
	return b.Bytes()
}

// ksadkTranscript encodes a journal as KsADK's stream (the KsADK switch).
func ksadkTranscript(evs []host.Event) []byte {
	var b bytes.Buffer
	enc := newKsadkEncoder(testBase())
	write := func(out []sseEvent) {
		for _, e := range out {
			b.WriteString("event: " + e.Name + "\ndata: ")
			b.Write(e.Data)
			b.WriteString("\n\n")
		}
	}
	write(enc.Start())
	for _, ev := range evs {
		write(enc.Add(ev))
	}
	return b.Bytes()
}

func finalResponse(evs []host.Event) Response {
	return finalResponseWith(evs, defaultOpts())
}

func finalResponseWith(evs []host.Event, opts encodeOptions) Response {
	enc := newResponseEncoder(testBase(), opts, false)
	for _, ev := range evs {
		enc.Add(ev)
	}
	return enc.Response()
}

func indent(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

func TestResponseStreamGolden(t *testing.T) {
	wantStatus := map[string]string{"text": "completed", "tool": "completed", "approval": "completed", "failure": "failed", "cancelled": "cancelled", "resume": "completed"}
	for name, evs := range scenarios() {
		t.Run(name, func(t *testing.T) {
			tr := transcript(evs, defaultOpts())
			golden(t, "responses_stream_"+name+".sse", tr)
			final := checkResponsesStream(t, parseSSE(t, tr))
			if final["status"] != wantStatus[name] {
				t.Errorf("terminal status %v, want %s", final["status"], wantStatus[name])
			}
			// The non-stream object is the stream's terminal response.
			obj := finalResponse(evs)
			golden(t, "responses_object_"+name+".json", indent(obj))
			var fromStream, direct any
			b, _ := json.Marshal(final)
			_ = json.Unmarshal(b, &fromStream)
			b, _ = json.Marshal(obj)
			_ = json.Unmarshal(b, &direct)
			if !jsonEqual(fromStream, direct) {
				t.Errorf("non-stream object differs from the stream's terminal response")
			}
		})
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// A run rebuilt from the store has no deltas but must produce the same items, ids and
// texts, with every text item still opened, filled by one delta and closed.
func TestResponseStreamFromStore(t *testing.T) {
	for name, evs := range scenarios() {
		t.Run(name, func(t *testing.T) {
			stored := storedOnly(evs)
			tr := transcript(stored, defaultOpts())
			if name == "text" {
				golden(t, "responses_stream_text_stored.sse", tr)
			}
			final := checkResponsesStream(t, parseSSE(t, tr))
			live := finalResponse(evs)
			rebuilt := finalResponse(stored)
			if !jsonEqual(live, rebuilt) {
				t.Errorf("rebuilt response differs:\nlive    %s\nrebuilt %s", indent(live), indent(rebuilt))
			}
			_ = final
		})
	}
}

// Replays must line up with the original stream: the encoder is deterministic.
func TestResponseStreamDeterministic(t *testing.T) {
	for name, evs := range scenarios() {
		a, b := transcript(evs, defaultOpts()), transcript(evs, defaultOpts())
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two encodings of one journal differ", name)
		}
		if !bytes.Equal(ksadkTranscript(evs), ksadkTranscript(evs)) {
			t.Errorf("%s: two KsADK encodings of one journal differ", name)
		}
	}
}

// The action API's shape: KsADK's item semantics in OpenAI's framing, with the
// opt-in tool result event.
func TestResponseStreamToolResultExtension(t *testing.T) {
	evs := scenarios()["tool"]
	tr := transcript(evs, encodeOptions{ToolResults: true, Ksadk: true})
	golden(t, "responses_stream_tool_ext.sse", tr)
	parsed := parseSSE(t, tr)
	checkResponsesStream(t, parsed)
	var n int
	for _, e := range parsed {
		if e.Name == extToolResult {
			n++
			if e.Data["item_id"] != "fc_1" || e.Data["call_id"] != "call_1" {
				t.Errorf("tool result event %v", e.Data)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d tool result events, want 1", n)
	}
	if bytes.Contains(transcript(evs, encodeOptions{Ksadk: true}), []byte(extToolResult)) {
		t.Errorf("extension event sent without opt-in")
	}
}

// A runner may replace a message's text at the end (MessageDone with different text):
// the done events carry the stored text.
func TestResponseStreamReplacedText(t *testing.T) {
	evs := (&journal{}).opening().
		text("msg_1", "draft").
		stored(session.TypeAssistantMessage, "msg_1", session.AssistantMessageData{Text: "final"}).
		end(session.StatusCompleted, nil, nil)
	final := finalResponse(evs)
	if final.OutputText != "final" {
		t.Errorf("output_text %q", final.OutputText)
	}
}

// Items left open by a run that ended abruptly are closed as incomplete so clients
// never see an unfinished item in a terminal response.
func TestResponseStreamClosesOpenItems(t *testing.T) {
	evs := (&journal{}).opening().
		text("msg_1", "half").
		end(session.StatusInterrupted, &session.RunError{Code: "host_shutdown", Message: "the host shut down during the run"}, nil)
	parsed := parseSSE(t, transcript(evs, defaultOpts()))
	final := checkResponsesStream(t, parsed)
	if final["status"] != "failed" {
		t.Errorf("status %v", final["status"])
	}
	item := final["output"].([]any)[0].(map[string]any)
	if item["status"] != "incomplete" {
		t.Errorf("open item status %v", item["status"])
	}
}

func TestResponseErrorCodes(t *testing.T) {
	for in, want := range map[string]string{"agent_error": "server_error", "rate_limit_exceeded": "rate_limit_exceeded", "": "server_error", "runner_error": "server_error"} {
		if got := responseErrorCode(in); got != want {
			t.Errorf("responseErrorCode(%q) = %q, want %q", in, got, want)
		}
	}
}

// The KsADK switch: KsADK's item semantics (function_call items, approval pauses
// incomplete with KsADK's reason) in the non-stream object, and KsADK's own stream.
func TestResponseKsadkShapeGolden(t *testing.T) {
	wantObj := map[string]string{"text": "completed", "tool": "completed", "approval": "incomplete", "failure": "failed", "cancelled": "cancelled", "resume": "completed"}
	wantTerminal := map[string]string{"text": "response.completed", "tool": "response.completed", "approval": "response.incomplete",
		"failure": "response.failed", "cancelled": "response.cancelled", "resume": "response.completed"}
	for name, evs := range scenarios() {
		t.Run(name, func(t *testing.T) {
			obj := finalResponseWith(evs, encodeOptions{Ksadk: true})
			golden(t, "responses_object_"+name+"_ksadk.json", indent(obj))
			if obj.Status != wantObj[name] {
				t.Errorf("status %s, want %s", obj.Status, wantObj[name])
			}
			if obj.Status == statusIncomplete && (obj.IncompleteDetails == nil || obj.IncompleteDetails.Reason == "") {
				t.Errorf("incomplete without a reason")
			}
			for _, it := range obj.Output {
				if _, ok := it.(mcpCallItem); ok {
					t.Errorf("KsADK shape has an mcp_call item")
				}
			}
			tr := ksadkTranscript(evs)
			golden(t, "responses_stream_"+name+"_ksadk.sse", tr)
			evs := parseSSE(t, tr)
			for i, ev := range evs {
				if _, ok := ev.Data["type"]; ok {
					t.Errorf("event %d (%s) has a type", i, ev.Name)
				}
				if _, ok := ev.Data["sequence_number"]; ok {
					t.Errorf("event %d (%s) has a sequence_number", i, ev.Name)
				}
			}
			if evs[0].Name != "response.created" || evs[0].Data["object"] != "response" || evs[0].Data["status"] != "in_progress" {
				t.Errorf("first event %s %v", evs[0].Name, evs[0].Raw)
			}
			last := evs[len(evs)-1]
			if last.Name != wantTerminal[name] || last.Data["object"] != "response" {
				t.Errorf("terminal %s %v", last.Name, last.Raw)
			}
			if last.Name == "response.completed" && last.Data["output_text"] != obj.OutputText {
				t.Errorf("output_text %v, want %q", last.Data["output_text"], obj.OutputText)
			}
		})
	}
}

// The default shape: tools the agent ran are mcp_call items with their output, an
// approval pause is a completed response with the request, and the call it guarded
// comes back in the resume turn with approval_request_id.
func TestResponseServerSideToolShape(t *testing.T) {
	sc := scenarios()
	tool := finalResponse(sc["tool"])
	call, ok := tool.Output[0].(mcpCallItem)
	if !ok || call.Name != "lookup" || call.ServerLabel != "echo" || call.Arguments != `{"query":"paris"}` || call.Output == nil || *call.Output != `{"words":1}` || call.Status != statusCompleted {
		t.Fatalf("tool output[0] %#v", tool.Output[0])
	}
	appr := finalResponse(sc["approval"])
	if appr.Status != statusCompleted || appr.IncompleteDetails != nil || len(appr.Output) != 2 {
		t.Fatalf("approval response %s %v", appr.Status, indent(appr))
	}
	if a, ok := appr.Output[1].(approvalRequestItem); !ok || a.ID != "apr_3" || a.ServerLabel != "echo" {
		t.Errorf("approval item %#v", appr.Output[1])
	}
	res := finalResponse(sc["resume"])
	rc, ok := res.Output[0].(mcpCallItem)
	if !ok || rc.ApprovalRequestID == nil || *rc.ApprovalRequestID != "apr_3" || rc.Arguments != `{"path":"notes.txt"}` || rc.Name != "delete_file" {
		t.Fatalf("resume output[0] %#v", res.Output[0])
	}
	// A tool the client declared is a function_call the client must run.
	client := finalResponseWith(sc["tool"], encodeOptions{ClientTools: map[string]bool{"lookup": true}})
	if fc, ok := client.Output[0].(functionCallItem); !ok || fc.Name != "lookup" {
		t.Errorf("client tool output[0] %#v", client.Output[0])
	}
	// A failed tool is a failed mcp_call carrying the error.
	failed := (&journal{}).opening().
		stored(session.TypeToolCall, "fc_9", session.ToolCallData{CallID: "call_9", Name: "lookup", Arguments: `{}`}).
		stored(session.TypeToolResult, "", session.ToolResultData{CallID: "call_9", Name: "lookup", Output: "boom", IsError: true}).
		end(session.StatusCompleted, nil, nil)
	parsed := parseSSE(t, transcript(failed, defaultOpts()))
	final := checkResponsesStream(t, parsed)
	fo := final["output"].([]any)[0].(map[string]any)
	if fo["status"] != "failed" || fo["error"] != "boom" || fo["output"] != nil {
		t.Errorf("failed call %v", fo)
	}
}

// The KsADK switch reproduces a stream recorded from KsADK itself (a text turn of an
// echo agent), byte for byte up to ids and times.
func TestKsadkStreamMatchesRecording(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "ksadk_stream_recorded.txt"))
	if err != nil {
		t.Fatal(err)
	}
	j := (&journal{}).opening()
	for _, d := range []string{"Echo:", " second", " turn", " (history:", " 2", " messages)"} {
		j.text("msg_0123456789ab", d)
	}
	evs := j.stored(session.TypeAssistantMessage, "msg_0123456789ab", session.AssistantMessageData{Text: "Echo: second turn (history: 2 messages)"}).
		end(session.StatusCompleted, nil, nil)
	base := baseResponse(runIdentity{ResponseID: "resp_0123456789abcdef0123456789abcdef", CreatedAt: testTime, SessionID: "conv-fixture-1"},
		requestEcho{Model: "ksadk-echo", Store: true})
	var b bytes.Buffer
	enc := newKsadkEncoder(base)
	for _, ev := range append([]host.Event{{}}, evs...) {
		var out []sseEvent
		if ev.Kind == 0 {
			out = enc.Start()
		} else {
			out = enc.Add(ev)
		}
		for _, e := range out {
			b.WriteString("event: " + e.Name + "\ndata: ")
			b.Write(e.Data)
			b.WriteString("\n\n")
		}
	}
	norm := func(x []byte) string {
		x = normalise(x)
		return regexp.MustCompile(`"agent_duration_ms": [0-9.]+`).ReplaceAllString(string(x), `"agent_duration_ms": 0`)
	}
	if got, w := norm(b.Bytes()), norm(want); got != w {
		t.Errorf("KsADK stream differs from the recording\n--- got ---\n%s\n--- want ---\n%s", got, w)
	}
}
