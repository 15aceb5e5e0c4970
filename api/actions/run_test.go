package actions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/api/actions"
	"github.com/agentengine/agentengine/session"
)

func TestRunAgentNonStream(t *testing.T) {
	e := newEnv(t)
	r := e.must("RunAgent", map[string]any{"AgentId": "echo", "Messages": userMessages("hello there")}, nil)
	var d runData
	r.data(t, &d)
	if d.Object != "response" || d.Status != "completed" || d.OutputText != "Echo: hello there" ||
		!strings.HasPrefix(d.ID, "resp_") || d.SessionID == "" {
		t.Errorf("response %+v", d)
	}
	if r.header.Get("X-AgentEngine-Session-Id") != d.SessionID || r.header.Get("X-AgentEngine-Invocation-Id") == "" {
		t.Errorf("headers %v", r.header)
	}
	// The response is a stored Responses object: the OpenAI surface serves it too.
	got := e.do(http.MethodGet, "/v1/responses/"+d.ID, nil)
	if got.status != 200 || got.env["output_text"] != "Echo: hello there" {
		t.Errorf("GET /v1/responses: %d %s", got.status, got.raw)
	}

	// Chat format: a chat.completion object.
	var cc struct {
		Object  string
		Choices []struct {
			Message struct{ Content string }
		}
	}
	e.must("RunAgent", map[string]any{"ApiFormat": "chat_completions", "Messages": userMessages("hi")}, &cc)
	if cc.Object != "chat.completion" || len(cc.Choices) != 1 || cc.Choices[0].Message.Content != "Echo: hi" {
		t.Errorf("chat completion %+v", cc)
	}

	// A failed run is a failed Response; in chat format the error envelope.
	var failed runData
	e.must("RunAgent", map[string]any{"Messages": userMessages("fail")}, &failed)
	if failed.Status != "failed" {
		t.Errorf("failed run %+v", failed)
	}
	wantError(t, e.post("RunAgent", map[string]any{"ApiFormat": "chat_completions", "Messages": userMessages("fail")}), 500, actions.CodeInternal, "failing")
}

func TestRunAgentContinuesSession(t *testing.T) {
	e := newEnv(t)
	s := e.createSession(map[string]any{})
	e.run(map[string]any{"SessionId": s.SessionId, "Messages": userMessages("first question")})
	d := e.run(map[string]any{"SessionId": s.SessionId, "ResponsesInput": "history"})
	if d.SessionID != s.SessionId || !strings.Contains(d.OutputText, "First user message: first question") {
		t.Errorf("second turn %+v", d)
	}
	// PreviousResponseId alone continues its session too.
	d2 := e.run(map[string]any{"PreviousResponseId": d.ID, "Messages": userMessages("history")})
	if d2.SessionID != s.SessionId {
		t.Errorf("previous response continued %s, want %s", d2.SessionID, s.SessionId)
	}
	// Model and metadata reach the runner; a client-chosen invocation id is kept.
	var bg struct{ InvocationId string }
	e.must("RunAgent", map[string]any{"SessionId": s.SessionId, "InvocationId": "inv-client-1", "Background": true,
		"Messages": userMessages("hi"), "Model": "gpt-x", "Metadata": map[string]any{"agentengine": map[string]any{"tool_approval_mode": "ask"}, "k": "v"}}, &bg)
	if bg.InvocationId != "inv-client-1" {
		t.Errorf("invocation %q", bg.InvocationId)
	}
}

// ksadkFrame is a frame of KsADK's Responses stream as ksadk-web reads it: the event
// name, the bare data object (no type, no sequence_number, no response wrapper).
type ksadkFrame struct {
	event string
	data  map[string]any
}

func ksadkFrames(t *testing.T, fs []sseFrame) []ksadkFrame {
	t.Helper()
	var out []ksadkFrame
	for _, f := range fs {
		if f.comment {
			continue
		}
		var d map[string]any
		if err := json.Unmarshal([]byte(f.data), &d); err != nil {
			t.Fatalf("frame %+v: %v", f, err)
		}
		if _, ok := d["type"]; ok && f.event != "response.output_item.added" && f.event != "response.output_item.done" {
			t.Errorf("%s carries a type field: %s", f.event, f.data)
		}
		if _, ok := d["sequence_number"]; ok {
			t.Errorf("%s carries sequence_number: %s", f.event, f.data)
		}
		out = append(out, ksadkFrame{f.event, d})
	}
	return out
}

func eventNames(fs []ksadkFrame) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.event
	}
	return out
}

// TestRunAgentStreamIsKsadksStream: RunAgent streams what KsADK's RunAgent streams
// (its /v1/responses stream), which ksadk-web is written against: the same events as
// /v1/responses with the KsADK switch.
func TestRunAgentStreamIsKsadksStream(t *testing.T) {
	e := newEnv(t)
	ctx := ctxTimeout(t, 20*time.Second)
	runStream := func(input string) []ksadkFrame {
		ui := e.stream(ctx, "POST", actions.Prefix+"RunAgent", map[string]any{"Stream": true, "Messages": userMessages(input)})
		defer ui.close()
		return ksadkFrames(t, ui.all(t))
	}
	for _, input := range []string{"hello there", "fail", "use the tool on paris", "please approve deleting a.txt"} {
		got := eventNames(runStream(input))
		oa := e.stream(ctx, "POST", "/v1/responses", map[string]any{"model": "echo", "input": input, "stream": true}, "X-AgentEngine-Compat", "ksadk")
		want := eventNames(ksadkFrames(t, oa.all(t)))
		oa.close()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: RunAgent stream\n%v\n/v1/responses KsADK stream\n%v", input, got, want)
		}
	}

	// Reasoning is streamed as deltas only: the reasoning item is done with an empty
	// summary and response.completed carries no reasoning, so a client that adds up
	// every reasoning text it sees shows it once.
	fs := runStream("hello there")
	var reasoning strings.Builder
	for _, f := range fs {
		switch f.event {
		case "response.reasoning.delta":
			reasoning.WriteString(f.data["delta"].(string))
		case "response.output_item.done", "response.output_item.added":
			if it := f.data["item"].(map[string]any); it["type"] == "reasoning" {
				if sum, _ := it["summary"].([]any); len(sum) != 0 {
					t.Errorf("%s reasoning item has a summary: %v", f.event, it)
				}
			}
		case "response.completed":
			for _, it := range f.data["output"].([]any) {
				if it.(map[string]any)["type"] == "reasoning" {
					t.Errorf("response.completed repeats the reasoning: %v", it)
				}
			}
			if f.data["output_text"] != "Echo: hello there" || f.data["status"] != "completed" {
				t.Errorf("completed payload %v", f.data)
			}
		}
	}
	if reasoning.String() != "Thinking about: hello there" {
		t.Errorf("reasoning deltas %q", reasoning.String())
	}

	// Tool results come live, by default, after their function_call item.
	fs = runStream("use the tool on paris")
	names := eventNames(fs)
	call, result := slices.Index(names, "response.function_call_arguments.done"), slices.Index(names, "response.ksadk.tool_result")
	if call < 0 || result < call {
		t.Fatalf("tool turn %v", names)
	}
	if r := fs[result].data; r["name"] == "" || !strings.Contains(r["output"].(string), "PARIS") || r["run_id"] == "" {
		t.Errorf("tool result %v", r)
	}

	// A failure's message is where KsADK's UI reads it: data.error.message.
	fs = runStream("fail")
	last := fs[len(fs)-1]
	if errObj, _ := last.data["error"].(map[string]any); last.event != "response.failed" || !strings.Contains(fmt.Sprint(errObj["message"]), "fail") {
		t.Errorf("failed run ends %s %v", last.event, last.data)
	}

	// An approval pause: the mcp_approval_request item, then response.incomplete.
	fs = runStream("please approve deleting a.txt")
	if last := fs[len(fs)-1]; last.event != "response.incomplete" {
		t.Errorf("approval pause ends %s", last.event)
	}
}

// TestRunAgentStreamCancelled: a stopped run ends with KsADK's response.cancelled.
func TestRunAgentStreamCancelled(t *testing.T) {
	e := newEnv(t)
	s := e.stream(ctxTimeout(t, 20*time.Second), "POST", actions.Prefix+"RunAgent", map[string]any{"Stream": true,
		"Messages": userMessages("long answer"), "ModelOptions": slow(500, 20)})
	defer s.close()
	sid, inv := s.resp.Header.Get("X-AgentEngine-Session-Id"), s.resp.Header.Get("X-AgentEngine-Invocation-Id")
	for {
		f, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		if f.event == "response.output_text.delta" || f.event == "response.reasoning.delta" {
			break
		}
	}
	e.must("CancelRun", map[string]any{"SessionId": sid, "InvocationId": inv}, nil)
	fs := ksadkFrames(t, s.all(t))
	last := fs[len(fs)-1]
	if last.event != "response.cancelled" || last.data["status"] != "cancelled" {
		t.Errorf("stopped run ends %s %v", last.event, last.data)
	}
}

func TestRunAgentStreamChat(t *testing.T) {
	e := newEnv(t)
	s := e.stream(ctxTimeout(t, 10*time.Second), "POST", actions.Prefix+"RunAgent",
		map[string]any{"Stream": true, "ApiFormat": "chat_completions", "Messages": userMessages("hello there")})
	defer s.close()
	fs := s.all(t)
	if len(fs) < 3 || fs[len(fs)-1].data != "[DONE]" {
		t.Fatalf("frames %+v", fs)
	}
	var text strings.Builder
	for _, f := range fs[:len(fs)-1] {
		var c struct {
			Object  string
			Choices []struct{ Delta struct{ Content string } }
		}
		if err := json.Unmarshal([]byte(f.data), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("frame %q", f.data)
		}
		for _, ch := range c.Choices {
			text.WriteString(ch.Delta.Content)
		}
	}
	if text.String() != "Echo: hello there" {
		t.Errorf("streamed %q", text.String())
	}
}

func TestRunAgentBackground(t *testing.T) {
	e := newEnv(t)
	var bg struct {
		SessionId, InvocationId, ResponseId, Status, SubscribeUrl string
		Background                                                bool
	}
	e.must("RunAgent", map[string]any{"Background": true, "Messages": userMessages("hello there"), "ModelOptions": slow(5, 10)}, &bg)
	if bg.Status != "running" || !bg.Background || bg.SessionId == "" || bg.InvocationId == "" || !strings.HasPrefix(bg.ResponseId, "resp_") ||
		!strings.HasPrefix(bg.SubscribeUrl, actions.Prefix+"SubscribeRunEvents?") {
		t.Fatalf("handle %+v", bg)
	}
	s := e.stream(ctxTimeout(t, 10*time.Second), "GET", bg.SubscribeUrl, nil)
	defer s.close()
	fs := s.all(t)
	last := fs[len(fs)-1]
	term := storedEvent(t, fs[len(fs)-2])
	if last.data != "[DONE]" || term.EventType != "run_status" || term.status() != "completed" {
		t.Errorf("background run ended with %+v %+v", fs[len(fs)-2], last)
	}
}

func TestRunAgentContinuesAfterDisconnect(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := e.stream(ctx, "POST", actions.Prefix+"RunAgent", map[string]any{"Stream": true,
		"Messages": userMessages("keep going"), "ModelOptions": slow(30, 10)})
	sid := s.resp.Header.Get("X-AgentEngine-Session-Id")
	inv := s.resp.Header.Get("X-AgentEngine-Invocation-Id")
	for {
		f, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(f.event, "output_text.delta") {
			break
		}
	}
	cancel() // the browser tab goes away mid-answer
	s.close()
	r := e.stream(ctxTimeout(t, 10*time.Second), "GET", subscribePath(sid, inv), nil)
	defer r.close()
	fs := r.all(t)
	if fs[len(fs)-1].data != "[DONE]" || storedEvent(t, fs[len(fs)-2]).status() != "completed" {
		t.Fatalf("run did not complete: %+v", fs[len(fs)-2:])
	}
	evs := e.events(sid)
	var answer string
	for _, ev := range evs {
		if ev.EventType == "assistant_message" {
			answer = ev.text()
		}
	}
	if !strings.HasPrefix(answer, "Echo: keep going") {
		t.Errorf("stored answer %q", answer)
	}
}

func TestRunAgentRejections(t *testing.T) {
	e := newEnv(t)
	own := e.createSession(map[string]any{"SessionId": "alices", "UserId": "alice"})
	done := e.run(map[string]any{"Messages": userMessages("hello"), "UserId": "bob"})
	// A run in progress makes a second one in its session a conflict.
	var busy struct{ SessionId, InvocationId string }
	e.must("RunAgent", map[string]any{"Background": true, "Messages": userMessages("slow"), "ModelOptions": slow(50, 200), "UserId": "carol"}, &busy)

	approval := []map[string]any{{"type": "mcp_approval_response", "approval_request_id": "apr_x", "approve": true}}
	for _, tc := range []struct {
		name     string
		body     map[string]any
		status   int
		code     string
		mentions string
	}{
		{"no input", map[string]any{}, 400, actions.CodeMissingParameter, "Messages or ResponsesInput"},
		{"empty messages", map[string]any{"Messages": []any{}}, 400, actions.CodeInvalidParameter, "Messages"},
		{"messages not an array", map[string]any{"Messages": map[string]any{"role": "user"}}, 400, actions.CodeInvalidParameter, "Messages"},
		{"bad role", map[string]any{"Messages": []map[string]any{{"role": "robot", "content": "hi"}}}, 400, actions.CodeInvalidParameter, "Messages[0].role"},
		{"bad content part", map[string]any{"ResponsesInput": []map[string]any{{"role": "user", "content": []map[string]any{{"type": "input_video"}}}}}, 400, actions.CodeInvalidParameter, "ResponsesInput[0].content[0].type"},
		{"bad api format", map[string]any{"ApiFormat": "xml", "Messages": userMessages("x")}, 400, actions.CodeInvalidParameter, "ApiFormat"},
		{"stream and background", map[string]any{"Stream": true, "Background": true, "Messages": userMessages("x")}, 400, actions.CodeInvalidParameter, "Background"},
		{"metadata not an object", map[string]any{"Metadata": []string{"a"}, "Messages": userMessages("x")}, 400, actions.CodeInvalidParameter, "Metadata"},
		{"model options not an object", map[string]any{"ModelOptions": "fast", "Messages": userMessages("x")}, 400, actions.CodeInvalidParameter, "ModelOptions"},
		{"model metadata not an object", map[string]any{"ModelMetadata": 3, "Messages": userMessages("x")}, 400, actions.CodeInvalidParameter, "ModelMetadata"},
		{"bad invocation id", map[string]any{"InvocationId": "a\nb", "Messages": userMessages("x")}, 400, actions.CodeInvalidParameter, "InvocationId"},
		{"unknown session", map[string]any{"SessionId": "nope", "Messages": userMessages("x")}, 404, actions.CodeNotFound, "CreateSession"},
		{"another user's session", map[string]any{"SessionId": own.SessionId, "Messages": userMessages("x")}, 404, actions.CodeNotFound, ""},
		{"another user's response", map[string]any{"PreviousResponseId": done.ID, "Messages": userMessages("x")}, 404, actions.CodeNotFound, "PreviousResponseId"},
		{"response of another session", map[string]any{"PreviousResponseId": done.ID, "SessionId": "other", "UserId": "bob", "Messages": userMessages("x")}, 400, actions.CodeInvalidParameter, "PreviousResponseId"},
		{"approval without session", map[string]any{"ResponsesInput": approval}, 400, actions.CodeNoPendingApproval, "SessionId"},
		{"nothing to approve", map[string]any{"ResponsesInput": approval, "SessionId": done.SessionID, "UserId": "bob"}, 400, actions.CodeNoPendingApproval, "no pending approval"},
		{"reused invocation id", map[string]any{"SessionId": done.SessionID, "UserId": "bob", "InvocationId": e.invocation(done.SessionID, "bob"), "Messages": userMessages("x")}, 409, actions.CodeConflict, "already used"},
		{"run in progress", map[string]any{"SessionId": busy.SessionId, "UserId": "carol", "Messages": userMessages("x")}, 409, actions.CodeConflict, "in progress"},
		{"unknown agent", map[string]any{"AgentId": "nobody", "Messages": userMessages("x")}, 404, actions.CodeNotFound, "nobody"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.snapshot()
			wantError(t, e.post("RunAgent", tc.body), tc.status, tc.code, tc.mentions)
			if after := e.snapshot(); after != before {
				t.Errorf("a rejected run changed the store: %s -> %s", before, after)
			}
		})
	}
	// Runs are indexed per session: another user's invocation id names a different run,
	// and reusing it in a new session neither fails nor touches that run.
	t.Run("invocation id of another user's run", func(t *testing.T) {
		res := e.post("RunAgent", map[string]any{"InvocationId": busy.InvocationId, "Messages": userMessages("x")})
		if res.status != http.StatusOK {
			t.Fatalf("status %d: %s", res.status, res.raw)
		}
	})
}

// invocation returns the latest invocation id of a user's session.
func (e *env) invocation(sessionID, user string) string {
	e.t.Helper()
	var d sessionData
	e.must("GetSession", map[string]any{"SessionId": sessionID, "UserId": user}, &d)
	return d.Session.ActiveInvocationId
}

// snapshot summarises every user's sessions and their event counts (a session with a
// run in progress only by that).
func (e *env) snapshot() string {
	e.t.Helper()
	var b strings.Builder
	for _, user := range []string{"user", "alice", "bob", "carol", "mallory"} {
		rows, _, err := e.rt.ListSessions(context.Background(), "echo", user, session.ListQuery{Limit: 1000})
		if err != nil {
			e.t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s:", user)
		for _, r := range rows {
			if r.ActiveRunStatus == session.StatusInProgress {
				fmt.Fprintf(&b, "%s/running ", r.ID)
				continue
			}
			fmt.Fprintf(&b, "%s/%d ", r.ID, r.LastSeq)
		}
	}
	return b.String()
}
