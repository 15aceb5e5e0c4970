package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestChatCompletionsHTTP(t *testing.T) {
	e := newEnv(t, Config{})
	body := `{"model":"echo","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hello chat"}]}`
	status, hdr, raw := e.do("POST", "/v1/chat/completions", body)
	if status != 200 {
		t.Fatalf("%d %s", status, raw)
	}
	golden(t, "e2e_chat_object.json", normalise(indentRaw(t, raw)))
	if hdr.Get(HeaderSession) == "" {
		t.Errorf("no %s header", HeaderSession)
	}

	status, hdr, raw = e.do("POST", "/v1/chat/completions", `{"model":"echo","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hello chat"}]}`)
	if status != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("%d %s", status, raw)
	}
	golden(t, "e2e_chat_stream.sse", normalise(raw))
	content, calls, finish, errObj := checkChatStream(t, parseSSE(t, raw))
	if content != "Echo: hello chat" || len(calls) != 0 || finish != "stop" || errObj != nil {
		t.Errorf("%q %v %q %v", content, calls, finish, errObj)
	}
	if bytes.Contains(raw, []byte("event:")) {
		t.Errorf("chat streams carry no event: lines")
	}
}

func TestChatSessions(t *testing.T) {
	e := newEnv(t, Config{})
	first := e.json("POST", "/v1/chat/completions", `{"model":"echo","session_id":"chat-1","messages":[{"role":"user","content":"one two"}]}`, 200)
	if first["session_id"] != "chat-1" {
		t.Fatalf("%v", first)
	}
	// With session_id the stored history counts; a resent history is not doubled.
	second := e.json("POST", "/v1/chat/completions", `{"model":"echo","session_id":"chat-1","messages":[{"role":"user","content":"one two"},{"role":"assistant","content":"Echo: one two"},{"role":"user","content":"three"}]}`, 200)
	u := second["usage"].(map[string]any)
	msg := second["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if msg["content"] != "Echo: three" || u["prompt_tokens"].(float64) < 2 {
		t.Errorf("%v %v", msg, u)
	}
	// A new session is returned when none is given, so a client can continue it.
	fresh := e.json("POST", "/v1/chat/completions", `{"model":"echo","messages":[{"role":"user","content":"x"}]}`, 200)
	if !strings.HasPrefix(str(fresh["session_id"]), "sess_") {
		t.Errorf("session_id %v", fresh["session_id"])
	}
	// A stateless client's earlier messages reach the runner as items: the echo agent
	// answers the last user message.
	stateless := e.json("POST", "/v1/chat/completions", `{"model":"echo","messages":[{"role":"user","content":"first"},{"role":"assistant","content":"Echo: first"},{"role":"user","content":[{"type":"text","text":"second"}]}]}`, 200)
	if got := stateless["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; got != "Echo: second" {
		t.Errorf("%v", got)
	}
	// The echo agent counts input words plus history words: 1 + (1 + 2).
	if got := stateless["usage"].(map[string]any)["prompt_tokens"]; got != 4.0 {
		t.Errorf("prompt_tokens %v: earlier messages did not reach the runner as history", got)
	}
}

func TestChatApprovalStream(t *testing.T) {
	e := newEnv(t, Config{})
	// By default the approval is asked in text, never as tool_calls.
	status, _, raw := e.do("POST", "/v1/chat/completions", `{"model":"echo","stream":true,"session_id":"chat-apr","messages":[{"role":"user","content":"approve deleting c.txt"}]}`)
	if status != 200 {
		t.Fatalf("%d %s", status, raw)
	}
	content, calls, finish, _ := checkChatStream(t, parseSSE(t, raw))
	if finish != "stop" || len(calls) != 0 || !strings.Contains(content, "Approval required to run delete_file") {
		t.Fatalf("finish %q calls %v content %q", finish, calls, content)
	}
	status, _, raw = e.do("POST", "/v1/chat/completions", `{"model":"echo","stream":true,"messages":[{"role":"user","content":"reject: no"}]}`, HeaderSession, "chat-apr")
	content, _, finish, _ = checkChatStream(t, parseSSE(t, raw))
	if status != 200 || content != "Rejected: kept c.txt (no)." || finish != "stop" {
		t.Errorf("%d %q %q", status, content, finish)
	}
	// A stateless client resends the conversation; the approval id in the question
	// finds the session.
	ask := e.json("POST", "/v1/chat/completions", `{"model":"echo","messages":[{"role":"user","content":"approve deleting d.txt"}]}`, 200)
	q := ask["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]
	body, _ := json.Marshal(map[string]any{"model": "echo", "messages": []any{
		map[string]any{"role": "user", "content": "approve deleting d.txt"},
		map[string]any{"role": "assistant", "content": q},
		map[string]any{"role": "user", "content": "approve"}}})
	res := e.json("POST", "/v1/chat/completions", string(body), 200)
	if got := res["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; got != "Approved: deleted d.txt." || res["session_id"] != ask["session_id"] {
		t.Errorf("stateless approve %v %v", got, res["session_id"])
	}
	// The KsADK switch: tool_calls, answered by a tool message.
	status, _, raw = e.do("POST", "/v1/chat/completions", `{"model":"echo","stream":true,"session_id":"chat-apr-k","messages":[{"role":"user","content":"approve deleting c.txt"}]}`, HeaderCompat, "ksadk")
	_, calls, finish, _ = checkChatStream(t, parseSSE(t, raw))
	if status != 200 || finish != "tool_calls" || len(calls) != 1 {
		t.Fatalf("KsADK finish %q calls %v", finish, calls)
	}
	id := str(calls[0]["id"])
	status, _, raw = e.do("POST", "/v1/chat/completions", fmt.Sprintf(`{"model":"echo","stream":true,"session_id":"chat-apr-k","messages":[{"role":"tool","tool_call_id":%q,"content":"{\"approve\":false,\"reason\":\"no\"}"}]}`, id), HeaderCompat, "ksadk")
	content, _, finish, _ = checkChatStream(t, parseSSE(t, raw))
	if status != 200 || content != "Rejected: kept c.txt (no)." || finish != "stop" {
		t.Errorf("%d %q %q", status, content, finish)
	}
}

// OpenAI accepts a message list that ends with a system message (or an assistant
// prefill): the user message before it is the input.
func TestChatTrailingSystemMessage(t *testing.T) {
	e := newEnv(t, Config{})
	for _, body := range []string{
		`{"model":"echo","messages":[{"role":"user","content":"hello"},{"role":"system","content":"be brief"}]}`,
		`{"model":"echo","messages":[{"role":"user","content":"hello"},{"role":"assistant","content":"Echo:"}]}`,
		`{"model":"echo","session_id":"chat-sys","messages":[{"role":"user","content":"hello"},{"role":"developer","content":"be brief"}]}`,
	} {
		r := e.json("POST", "/v1/chat/completions", body, 200)
		if got := r["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; got != "Echo: hello" {
			t.Errorf("%s: %v", body, got)
		}
	}
	r := e.json("POST", "/v1/chat/completions", `{"model":"echo","messages":[{"role":"system","content":"hi there"}]}`, 200)
	if got := r["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; got != "Echo: hi there" {
		t.Errorf("system only: %v", got)
	}
}

func TestChatErrors(t *testing.T) {
	e := newEnv(t, Config{})
	cases := []struct {
		name, body  string
		status      int
		code, param string
	}{
		{"malformed", `{"messages":`, 400, "invalid_json", ""},
		{"no messages", `{"model":"echo"}`, 400, "missing_required_parameter", "messages"},
		{"unknown model", `{"model":"gpt","messages":[{"role":"user","content":"x"}]}`, 404, "model_not_found", "model"},
		{"function role", `{"model":"echo","messages":[{"role":"function","name":"f","content":"y"}]}`, 400, "unsupported_value", "messages[0].role"},
		{"stream string", `{"model":"echo","stream":"yes","messages":[{"role":"user","content":"x"}]}`, 400, "invalid_type", "stream"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj := e.apiErr("POST", "/v1/chat/completions", tc.body, tc.status, tc.code)
			if tc.param != "" && obj["param"] != tc.param {
				t.Errorf("param %v", obj["param"])
			}
		})
	}
	// A failed run: 500 without retries, or an in-band error chunk then [DONE].
	status, hdr, raw := e.do("POST", "/v1/chat/completions", `{"model":"echo","messages":[{"role":"user","content":"fail"}]}`)
	if status != 500 || hdr.Get("x-should-retry") != "false" || !strings.Contains(string(raw), "fail") {
		t.Errorf("%d %s", status, raw)
	}
	_, _, raw = e.do("POST", "/v1/chat/completions", `{"model":"echo","stream":true,"messages":[{"role":"user","content":"fail"}]}`)
	if _, _, _, errObj := checkChatStream(t, parseSSE(t, raw)); errObj == nil || errObj["type"] != "server_error" {
		t.Errorf("no error chunk: %s", raw)
	}
	// Concurrent turn on one session.
	e.json("POST", "/v1/responses", `{"model":"echo","conversation":"chat-busy","input":"slow","background":true,"model_options":{"delay_ms":100,"deltas":5}}`, 200)
	e.apiErr("POST", "/v1/chat/completions", `{"model":"echo","session_id":"chat-busy","messages":[{"role":"user","content":"x"}]}`, 409, "run_in_progress")
}

func TestModels(t *testing.T) {
	e := newEnv(t, Config{})
	list := e.json("GET", "/v1/models", "", 200)
	data := list["data"].([]any)
	if list["object"] != "list" || len(data) != 2 || data[0].(map[string]any)["object"] != "model" {
		t.Fatalf("%v", list)
	}
	m := e.json("GET", "/v1/models/echo", "", 200)
	if m["id"] != "echo" || m["owned_by"] != "agentengine" {
		t.Errorf("%v", m)
	}
	e.apiErr("GET", "/v1/models/gpt-4", "", 404, "model_not_found")
}
