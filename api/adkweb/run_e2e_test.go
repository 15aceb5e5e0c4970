package adkweb

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/session"
)

// texts returns the final (non-partial) model texts and the concatenated partial text
// of a stream, leaving thoughts out.
func texts(evs []map[string]any) (finals []string, partial string) {
	for _, ev := range evs {
		for _, p := range parts(ev) {
			txt, ok := p["text"].(string)
			if !ok || p["thought"] == true {
				continue
			}
			if ev["partial"] == true {
				partial += txt
			} else {
				finals = append(finals, txt)
			}
		}
	}
	return finals, partial
}

func TestRunSSEStreamedText(t *testing.T) {
	e := newEnv(t)
	sid := e.createSession("alice", "")
	raw, evs := e.runSSE(runBody("alice", sid, "hello there", true))
	golden(t, "e2e_stream_text.sse", normalise(raw))
	finals, partial := texts(evs)
	if len(finals) != 1 || finals[0] != "Echo: hello there" || partial != "Echo: hello there" {
		t.Fatalf("finals %q, partials %q", finals, partial)
	}
	var thought, partials int
	for _, ev := range evs {
		if ev["author"] != "echo" || str(ev["invocationId"]) == "" || str(ev["id"]) == "" || ev["timestamp"].(float64) < 1e9 {
			t.Errorf("event header %v", ev)
		}
		if ev["partial"] == true {
			partials++
		}
		for _, p := range parts(ev) {
			if p["thought"] == true && ev["partial"] != true {
				thought++
			}
		}
		if _, ok := ev["errorCode"]; ok {
			t.Errorf("error event %v", ev)
		}
	}
	if thought != 1 || partials < 4 {
		t.Errorf("%d final thoughts, %d partials", thought, partials)
	}

	// Without streaming: the same final events, no partials.
	_, plain := e.runSSE(runBody("alice", sid, "hello again", false))
	finals, partial = texts(plain)
	if len(finals) != 1 || finals[0] != "Echo: hello again" || partial != "" {
		t.Errorf("non-streaming finals %q partials %q", finals, partial)
	}

	// /run answers all events of the run as one array; the last model event carries the
	// turn's usage.
	arr, ok := e.json("POST", "/run", runBody("alice", sid, "once more", true), http.StatusOK).([]any)
	if !ok || len(arr) != 2 {
		t.Fatalf("/run: %v", arr)
	}
	if u, _ := arr[1].(map[string]any)["usageMetadata"].(map[string]any); u == nil || u["totalTokenCount"].(float64) <= 0 {
		t.Errorf("/run's last event has no usage: %v", arr[1])
	}
	last := arr[1].(map[string]any)
	if last["partial"] != nil || parts(last)[0]["text"] != "Echo: once more" {
		t.Errorf("/run last event %v", last)
	}
}

// TestToolCallIDs: the functionCall id, its functionResponse id, the stored call id and
// the Responses API's call_id are one id.
func TestToolCallIDs(t *testing.T) {
	e := newEnv(t)
	sid := e.createSession("alice", "")
	raw, evs := e.runSSE(runBody("alice", sid, "use the tool on paris", true))
	golden(t, "e2e_stream_tool.sse", normalise(raw))
	_, call := firstPart(evs, "functionCall")
	_, resp := firstPart(evs, "functionResponse")
	if call == nil || resp == nil || !strings.HasPrefix(str(call["id"]), "call_") || call["id"] != resp["id"] ||
		call["name"] != "lookup" || resp["name"] != "lookup" {
		t.Fatalf("call %v response %v", call, resp)
	}
	if args := call["args"].(map[string]any); args["query"] != "paris" {
		t.Errorf("args %v", args)
	}
	if r := resp["response"].(map[string]any); r["upper"] != "PARIS" {
		t.Errorf("response %v", r)
	}
	stored, err := e.rt.Events(context.Background(), session.Key{App: "echo", User: "alice", ID: sid}, session.EventQuery{Types: []string{session.TypeToolCall}})
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored calls %v %v", stored, err)
	}
	var d session.ToolCallData
	_ = json.Unmarshal(stored[0].Data, &d)
	if d.CallID != call["id"] {
		t.Errorf("stored call id %s, ADK id %s", d.CallID, call["id"])
	}

	// A call made through the Responses API (an mcp_call there, which has no call_id)
	// shows in the ADK session with the call id the runner gave it.
	r := e.obj("POST", "/v1/responses", `{"model":"echo","conversation":"`+sid+`","input":"use the tool on rome"}`, http.StatusOK,
		"X-AgentEngine-User", "alice")
	mcpCalls := 0
	for _, o := range r["output"].([]any) {
		if it := o.(map[string]any); it["type"] == "mcp_call" {
			mcpCalls++
		}
	}
	stored, err = e.rt.Events(context.Background(), session.Key{App: "echo", User: "alice", ID: sid}, session.EventQuery{Types: []string{session.TypeToolCall}})
	if err != nil || len(stored) != 2 || mcpCalls != 1 {
		t.Fatalf("after the Responses turn: stored calls %v %v, mcp_call items %d", stored, err, mcpCalls)
	}
	_ = json.Unmarshal(stored[1].Data, &d)
	callID := d.CallID
	s := e.obj("GET", "/apps/echo/users/alice/sessions/"+sid, "", http.StatusOK)
	var calls, responses []string
	for _, ev := range s["events"].([]any) {
		for _, p := range parts(ev.(map[string]any)) {
			if fc, ok := p["functionCall"].(map[string]any); ok {
				calls = append(calls, str(fc["id"]))
			}
			if fr, ok := p["functionResponse"].(map[string]any); ok {
				responses = append(responses, str(fr["id"]))
			}
		}
	}
	want := []string{str(call["id"]), callID}
	if callID == "" || strings.Join(calls, ",") != strings.Join(want, ",") || strings.Join(responses, ",") != strings.Join(want, ",") {
		t.Errorf("session calls %v responses %v, want %v", calls, responses, want)
	}
}

// confirmation returns the adk_request_confirmation call of a stream and the guarded
// call's id.
func confirmation(t *testing.T, evs []map[string]any) (ev, call map[string]any, guarded string) {
	t.Helper()
	for _, e := range evs {
		for _, p := range parts(e) {
			if fc, ok := p["functionCall"].(map[string]any); ok && fc["name"] == confirmationFunction {
				orig := fc["args"].(map[string]any)["originalFunctionCall"].(map[string]any)
				return e, fc, str(orig["id"])
			}
		}
	}
	t.Fatalf("no confirmation request in %v", evs)
	return nil, nil, ""
}

func resumeBody(user, sid, id string, response string) string {
	return `{"appName":"echo","userId":"` + user + `","sessionId":"` + sid + `","streaming":true,"newMessage":{"role":"user","parts":[` +
		`{"functionResponse":{"id":"` + id + `","name":"adk_request_confirmation","response":` + response + `}}]}}`
}

func TestConfirmationResume(t *testing.T) {
	e := newEnv(t)
	sid := e.createSession("alice", "")
	raw, evs := e.runSSE(runBody("alice", sid, "please approve deleting notes.txt", true))
	golden(t, "e2e_stream_approval.sse", normalise(raw))
	ev, call, guarded := confirmation(t, evs)
	id := str(call["id"])
	if !strings.HasPrefix(id, "apr_") || !strings.HasPrefix(guarded, "call_") {
		t.Fatalf("ids %s %s", id, guarded)
	}
	if ids, _ := ev["longRunningToolIds"].([]any); len(ids) != 1 || ids[0] != id {
		t.Errorf("longRunningToolIds %v", ev["longRunningToolIds"])
	}
	if tc := call["args"].(map[string]any)["toolConfirmation"].(map[string]any); tc["hint"] != "Delete notes.txt?" || tc["confirmed"] != false {
		t.Errorf("toolConfirmation %v", tc)
	}
	var requested bool
	for _, ev := range evs {
		if rc, _ := ev["actions"].(map[string]any)["requestedToolConfirmations"].(map[string]any); rc[guarded] != nil {
			requested = true
		}
	}
	if _, fc := firstPart(evs, "functionCall"); str(fc["id"]) != guarded || fc["name"] != "delete_file" || !requested {
		t.Errorf("guarded call %v, requested %v", fc, requested)
	}
	for _, ev := range evs {
		if ev["errorCode"] != nil {
			t.Errorf("a confirmation wait is not an error: %v", ev)
		}
	}

	// An answer to an unknown confirmation is rejected and stores nothing.
	seq := e.sessionLastSeq("alice", sid)
	status, _, b := e.do("POST", "/run_sse", resumeBody("alice", sid, "apr_000000000000", `{"confirmed":true}`))
	if status != http.StatusBadRequest || !strings.Contains(string(b), "detail") || e.sessionLastSeq("alice", sid) != seq {
		t.Fatalf("unknown confirmation: %d %s", status, b)
	}

	// ADK web's answer resumes the run: the guarded call's result has its id.
	raw, evs = e.runSSE(resumeBody("alice", sid, id, `{"confirmed":true,"payload":{"path":"notes.txt"}}`))
	golden(t, "e2e_stream_resume.sse", normalise(raw))
	_, resp := firstPart(evs, "functionResponse")
	if resp == nil || resp["id"] != guarded || resp["response"].(map[string]any)["deleted"] != "notes.txt" {
		t.Fatalf("resume result %v", resp)
	}
	if finals, _ := texts(evs); len(finals) != 1 || finals[0] != "Approved: deleted notes.txt." {
		t.Errorf("resume text %q", finals)
	}
	// The answer is in the session as the user's function response.
	s := e.obj("GET", "/apps/echo/users/alice/sessions/"+sid, "", http.StatusOK)
	found := false
	for _, ev := range s["events"].([]any) {
		m := ev.(map[string]any)
		for _, p := range parts(m) {
			if fr, ok := p["functionResponse"].(map[string]any); ok && m["author"] == "user" && fr["id"] == id && fr["name"] == confirmationFunction {
				found = fr["response"].(map[string]any)["confirmed"] == true
			}
		}
	}
	if !found {
		t.Errorf("answer not in the session: %v", s["events"])
	}
	// It was answered: answering again is rejected.
	if status, _, b := e.do("POST", "/run_sse", resumeBody("alice", sid, id, `{"confirmed":true}`)); status != http.StatusBadRequest {
		t.Errorf("second answer: %d %s", status, b)
	}

	// A rejection, in the {"response": "<JSON>"} wrapper some ADK clients send.
	_, evs = e.runSSE(runBody("alice", sid, "please approve deleting old.txt", false))
	_, call, _ = confirmation(t, evs)
	_, evs = e.runSSE(resumeBody("alice", sid, str(call["id"]), `{"response":"{\"confirmed\":false}"}`))
	if finals, _ := texts(evs); len(finals) != 1 || !strings.HasPrefix(finals[0], "Rejected: kept old.txt") {
		t.Errorf("rejection text %q", finals)
	}
}

func TestStateDeltas(t *testing.T) {
	e := newEnv(t)
	sid := e.createSession("alice", `{"state":{"user:lang":"go","start":1}}`)
	raw, evs := e.runSSE(runBody("alice", sid, "state:color=blue", true))
	golden(t, "e2e_stream_state.sse", normalise(raw))
	var delta map[string]any
	for _, ev := range evs {
		if d := ev["actions"].(map[string]any)["stateDelta"].(map[string]any); len(d) > 0 {
			delta = d
		}
	}
	if delta["color"] != "blue" {
		t.Fatalf("stateDelta %v", delta)
	}
	// The next turn sees the state, and so does a request's own stateDelta.
	body := strings.Replace(runBody("alice", sid, "state:size=L", false), `"streaming"`, `"state_delta":{"mood":"happy"},"streaming"`, 1)
	_, evs = e.runSSE(body)
	finals, _ := texts(evs)
	if len(finals) != 1 || finals[0] != "State updated: color=blue, lang=go, mood=happy, size=L, start=1" {
		t.Errorf("next turn %q", finals)
	}
	s := e.obj("GET", "/apps/echo/users/alice/sessions/"+sid, "", http.StatusOK)
	st := s["state"].(map[string]any)
	if st["color"] != "blue" || st["size"] != "L" || st["mood"] != "happy" || st["user:lang"] != "go" || st["start"] != 1.0 {
		t.Errorf("session state %v", st)
	}
	// The request's delta is a user event of that turn; the initial state is no event.
	var userDeltas int
	for _, ev := range s["events"].([]any) {
		m := ev.(map[string]any)
		if d := m["actions"].(map[string]any)["stateDelta"].(map[string]any); len(d) > 0 && m["author"] == "user" {
			userDeltas++
			if d["mood"] != "happy" {
				t.Errorf("user delta %v", d)
			}
		}
	}
	if userDeltas != 1 {
		t.Errorf("%d user state events", userDeltas)
	}
	// PATCH writes a delta outside any run.
	p := e.obj("PATCH", "/apps/echo/users/alice/sessions/"+sid, `{"stateDelta":{"mood":"calm"}}`, http.StatusOK)
	if p["state"].(map[string]any)["mood"] != "calm" {
		t.Errorf("patched state %v", p["state"])
	}
}

func TestFailedRun(t *testing.T) {
	e := newEnv(t)
	sid := e.createSession("alice", "")
	_, evs := e.runSSE(runBody("alice", sid, "fail", true))
	last := evs[len(evs)-1]
	if last["errorCode"] != "agent_error" || !strings.Contains(str(last["errorMessage"]), "fail") {
		t.Fatalf("last event %v", last)
	}
}

// TestCrossSurface: a session started on /run_sse continues on /v1/responses, and one
// started on /v1/responses continues on /run_sse.
func TestCrossSurface(t *testing.T) {
	e := newEnv(t)
	sid := e.createSession("alice", "")
	e.runSSE(runBody("alice", sid, "hello from adk", true))
	r := e.obj("POST", "/v1/responses", `{"model":"echo","conversation":"`+sid+`","input":"history"}`, http.StatusOK, "X-AgentEngine-User", "alice")
	if got := str(r["output_text"]); got != "History: 2 messages. First user message: hello from adk" {
		t.Errorf("responses after run_sse: %q", got)
	}

	r = e.obj("POST", "/v1/responses", `{"model":"echo","input":"hello from openai"}`, http.StatusOK, "X-AgentEngine-User", "bob")
	other := str(r["session_id"])
	_, evs := e.runSSE(runBody("bob", other, "history", false))
	if finals, _ := texts(evs); len(finals) != 1 || finals[0] != "History: 2 messages. First user message: hello from openai" {
		t.Errorf("run_sse after responses: %q", finals)
	}
	// The OpenAI surface's session is listed for its user.
	list := e.json("GET", "/apps/echo/users/bob/sessions", "", http.StatusOK).([]any)
	if len(list) != 1 || list[0].(map[string]any)["id"] != other {
		t.Errorf("bob's sessions %v", list)
	}
}
