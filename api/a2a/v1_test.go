package a2a_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
)

// v1 returns a copy of the env whose requests carry A2A-Version: 1.0, as 1.0 clients send.
func (e *env) v1() *env {
	return e.as(append([]string{"A2A-Version", "1.0"}, e.headers...)...)
}

// v1Resp is a 1.0 JSON-RPC response: its error data is a list of typed details.
type v1Resp struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int              `json:"code"`
		Message string           `json:"message"`
		Data    []map[string]any `json:"data"`
	} `json:"error"`
}

func (e *env) v1Call(agent, method string, params any) v1Resp {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "r1", "method": method, "params": params})
	status, _, b := e.do("POST", "/a2a/"+agent, string(body))
	if status != http.StatusOK {
		e.t.Fatalf("%s: status %d: %s", method, status, b)
	}
	var r v1Resp
	if err := json.Unmarshal(b, &r); err != nil {
		e.t.Fatalf("%s: %v: %s", method, err, b)
	}
	if r.JSONRPC != "2.0" || r.ID != "r1" {
		e.t.Fatalf("%s: not a JSON-RPC response to id r1: %s", method, b)
	}
	return r
}

func (e *env) v1Result(agent, method string, params any) map[string]any {
	e.t.Helper()
	r := e.v1Call(agent, method, params)
	if r.Error != nil {
		e.t.Fatalf("%s: error %d %s %v", method, r.Error.Code, r.Error.Message, r.Error.Data)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Result, &m); err != nil {
		e.t.Fatalf("%s: %v: %s", method, err, r.Result)
	}
	return m
}

// v1Err calls and returns the error's code, message and ErrorInfo reason.
func (e *env) v1Err(agent, method string, params any) (int, string, string) {
	e.t.Helper()
	r := e.v1Call(agent, method, params)
	if r.Error == nil {
		e.t.Fatalf("%s: succeeded, want an error: %s", method, r.Result)
	}
	if len(r.Error.Data) != 1 || r.Error.Data[0]["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" || r.Error.Data[0]["domain"] != "a2a-protocol.org" {
		e.t.Errorf("%s: error data %v", method, r.Error.Data)
		return r.Error.Code, r.Error.Message, ""
	}
	return r.Error.Code, r.Error.Message, str(r.Error.Data[0]["reason"])
}

// v1Msg is SendMessage params of a user message with these 1.0 parts.
func v1Msg(parts ...any) map[string]any {
	return map[string]any{"message": map[string]any{"role": "ROLE_USER", "messageId": "m-" + host.NewID(""), "parts": parts}}
}

func v1Text(s string) map[string]any { return map[string]any{"text": s} }

// v1PartsWith returns the parts of a 1.0 message that have the field (text, data, …).
func v1PartsWith(m map[string]any, field string) []map[string]any {
	var out []map[string]any
	for _, p := range list(m["parts"]) {
		if _, ok := obj(p)[field]; ok {
			out = append(out, obj(p))
		}
	}
	return out
}

func TestCardListsBothVersions(t *testing.T) {
	e := newEnv(t, envOptions{keys: "k-alice-0123456789abcdef alice\n"}).as("Authorization", "Bearer k-alice-0123456789abcdef")
	_, _, b := e.do("GET", "/a2a/echo/.well-known/agent-card.json", "")
	var card map[string]any
	if err := json.Unmarshal(b, &card); err != nil {
		t.Fatal(err)
	}
	ifs := list(card["supportedInterfaces"])
	url := e.base + "/a2a/echo"
	if len(ifs) != 2 || obj(ifs[0])["protocolVersion"] != "1.0" || obj(ifs[1])["protocolVersion"] != "0.3.0" {
		t.Fatalf("supportedInterfaces %v", ifs)
	}
	for _, i := range ifs {
		if obj(i)["url"] != url || obj(i)["protocolBinding"] != "JSONRPC" {
			t.Errorf("interface %v", i)
		}
	}
	// 0.3 fields stay for 0.3 clients; 1.0's security requirement is there for 1.0 ones.
	if card["url"] != url || card["protocolVersion"] != "0.3.0" || len(list(card["security"])) != 1 {
		t.Errorf("0.3 fields %s", b)
	}
	req := list(card["securityRequirements"])
	if len(req) != 1 || obj(obj(req[0])["schemes"])["bearer"] == nil {
		t.Errorf("securityRequirements %v", req)
	}
}

func TestV1SendGetAndHistory(t *testing.T) {
	e := newEnv(t, envOptions{}).v1()
	res := e.v1Result("echo", "SendMessage", v1Msg(v1Text("hello there")))
	task := obj(res["task"])
	if task == nil || state(task) != "TASK_STATE_COMPLETED" || task["contextId"] == "" || !strings.HasPrefix(str(task["id"]), "task_") {
		t.Fatalf("SendMessage %v", res)
	}
	if _, has := task["kind"]; has {
		t.Errorf("1.0 objects have no kind: %v", task)
	}
	arts := list(task["artifacts"])
	if len(arts) != 1 || str(obj(list(obj(arts[0])["parts"])[0])["text"]) != "Echo: hello there" || obj(arts[0])["artifactId"] == "" {
		t.Errorf("artifacts %v", arts)
	}
	hist := list(task["history"])
	if len(hist) != 2 || obj(hist[0])["role"] != "ROLE_USER" || obj(hist[1])["role"] != "ROLE_AGENT" {
		t.Errorf("history %v", hist)
	}
	// A second message on the same context is a new task of that context.
	again := obj(e.v1Result("echo", "SendMessage", map[string]any{"message": map[string]any{
		"role": "ROLE_USER", "messageId": "m2", "contextId": task["contextId"], "parts": []any{v1Text("how many turns?")}}})["task"])
	if again["contextId"] != task["contextId"] || again["id"] == task["id"] {
		t.Errorf("second message %v", again)
	}
	// GetTask with historyLength keeps the latest messages.
	for _, n := range []int{0, 1, 5} {
		got := e.v1Result("echo", "GetTask", map[string]any{"id": task["id"], "historyLength": n})
		if h := list(got["history"]); len(h) != min(n, 2) || state(got) != "TASK_STATE_COMPLETED" {
			t.Errorf("historyLength %d: %v", n, got)
		}
	}
	// A task started on 1.0 reads the same on 0.3 (one task, two bindings).
	if old := e.result("echo", "tasks/get", map[string]any{"id": task["id"]}); state(old) != "completed" || artifactText(old) != "Echo: hello there" {
		t.Errorf("0.3 tasks/get %v", old)
	}
}

func TestV1StreamInPiecesAndApproval(t *testing.T) {
	e := newEnv(t, envOptions{}).v1()
	evs := e.stream(context.Background(), "echo", "SendStreamingMessage", v1Msg(v1Text("one two three four")), 0)
	if len(evs) < 4 || state(obj(evs[0]["task"])) != "TASK_STATE_SUBMITTED" || state(obj(evs[1]["statusUpdate"])) != "TASK_STATE_WORKING" {
		t.Fatalf("stream start %v", evs)
	}
	var pieces strings.Builder
	chunks := 0
	for _, ev := range evs {
		u := obj(ev["artifactUpdate"])
		if u == nil || u["lastChunk"] == true {
			continue
		}
		chunks++
		pieces.WriteString(str(obj(list(obj(u["artifact"])["parts"])[0])["text"]))
	}
	if chunks < 3 || pieces.String() != "Echo: one two three four" {
		t.Errorf("%d chunks %q", chunks, pieces.String())
	}
	end := obj(evs[len(evs)-1]["statusUpdate"])
	if state(end) != "TASK_STATE_COMPLETED" {
		t.Errorf("end %v", evs[len(evs)-1])
	}
	if _, has := end["final"]; has {
		t.Errorf("1.0 status updates have no final: %v", end)
	}

	// Approval: input-required with the request as a data part, answered on the task.
	evs = e.stream(context.Background(), "echo", "SendStreamingMessage", v1Msg(v1Text("please approve deleting notes.txt")), 0)
	end = obj(evs[len(evs)-1]["statusUpdate"])
	if state(end) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("end %v", evs[len(evs)-1])
	}
	ds := v1PartsWith(obj(obj(end["status"])["message"]), "data")
	if len(ds) != 1 || obj(ds[0]["data"])["name"] != "delete_file" {
		t.Fatalf("approval request %v", end["status"])
	}
	answer := map[string]any{"message": map[string]any{"role": "ROLE_USER", "messageId": "m-ok", "taskId": end["taskId"],
		"parts": []any{map[string]any{"data": map[string]any{"approve": true}}}}}
	done := obj(e.v1Result("echo", "SendMessage", answer)["task"])
	if state(done) != "TASK_STATE_COMPLETED" || !strings.Contains(str(obj(list(obj(list(done["artifacts"])[len(list(done["artifacts"]))-1])["parts"])[0])["text"]), "Approved: deleted notes.txt.") {
		t.Errorf("answered %v", done)
	}
}

// A 1.0 data part may hold any JSON value; a non-object one answers an interrupt as is.
func TestV1NonObjectDataAnswers(t *testing.T) {
	e := newEnv(t, envOptions{}).v1()
	task := obj(e.v1Result("echo", "SendMessage", v1Msg(v1Text("please approve deleting notes.txt")))["task"])
	answer := map[string]any{"message": map[string]any{"role": "ROLE_USER", "messageId": "m-v", "taskId": task["id"],
		"parts": []any{map[string]any{"data": []any{"trash", 1}}}}}
	done := obj(e.v1Result("echo", "SendMessage", answer)["task"])
	var output string
	for _, m := range list(done["history"]) {
		for _, p := range v1PartsWith(obj(m), "data") {
			if d := obj(p["data"]); d["type"] == "tool_result" {
				output = str(d["output"])
			}
		}
	}
	if state(done) != "TASK_STATE_COMPLETED" || output != `["trash",1]` {
		t.Errorf("tool output %q: %v", output, done)
	}
}

func TestV1CancelAndSubscribe(t *testing.T) {
	e := newEnv(t, envOptions{}).v1()
	p := slow(v1Msg(v1Text("a long answer")))
	p["configuration"] = map[string]any{"returnImmediately": true}
	task := obj(e.v1Result("echo", "SendMessage", p)["task"])
	if state(task) != "TASK_STATE_WORKING" {
		t.Fatalf("returnImmediately %v", task)
	}
	// SubscribeToTask: the task first, then its run's events (read a few, then drop).
	evs := e.stream(context.Background(), "echo", "SubscribeToTask", map[string]any{"id": task["id"]}, 3)
	if len(evs) != 3 || obj(evs[0]["task"])["id"] != task["id"] || evs[2]["artifactUpdate"] == nil {
		t.Errorf("subscribe %v", evs)
	}
	got := e.v1Result("echo", "CancelTask", map[string]any{"id": task["id"]})
	if state(got) != "TASK_STATE_CANCELED" {
		t.Fatalf("cancelled %v", got)
	}
	if code, _, reason := e.v1Err("echo", "CancelTask", map[string]any{"id": task["id"]}); code != -32002 || reason != "TASK_NOT_CANCELABLE" {
		t.Errorf("cancel again: %d %s", code, reason)
	}
}

func TestV1PushConfigs(t *testing.T) {
	e := newEnv(t, envOptions{}).v1()
	id := obj(e.v1Result("echo", "SendMessage", v1Msg(v1Text("hi")))["task"])["id"]
	cfg := map[string]any{"taskId": id, "id": "hook", "url": "https://hooks.example.com/a2a", "token": "tok",
		"authentication": map[string]any{"scheme": "Bearer", "credentials": "secret"}}
	set := e.v1Result("echo", "CreateTaskPushNotificationConfig", cfg)
	if set["id"] != "hook" || set["taskId"] != id || set["url"] != cfg["url"] || set["token"] != "tok" || obj(set["authentication"])["scheme"] != "Bearer" {
		t.Errorf("create %v", set)
	}
	if got := e.v1Result("echo", "GetTaskPushNotificationConfig", map[string]any{"taskId": id, "id": "hook"}); got["url"] != cfg["url"] {
		t.Errorf("get %v", got)
	}
	if l := list(e.v1Result("echo", "ListTaskPushNotificationConfigs", map[string]any{"taskId": id})["configs"]); len(l) != 1 || obj(l[0])["id"] != "hook" {
		t.Errorf("list %v", l)
	}
	if r := e.v1Call("echo", "DeleteTaskPushNotificationConfig", map[string]any{"taskId": id, "id": "hook"}); r.Error != nil || string(r.Result) != "null" {
		t.Errorf("delete %s %v", r.Result, r.Error)
	}
	if l := list(e.v1Result("echo", "ListTaskPushNotificationConfigs", map[string]any{"taskId": id})["configs"]); len(l) != 0 {
		t.Errorf("list after delete %v", l)
	}
	bad := map[string]any{"taskId": id, "url": "http://127.0.0.1:9/hook"}
	if code, msg, reason := e.v1Err("echo", "CreateTaskPushNotificationConfig", bad); code != -32602 || reason != "INVALID_PARAMS" || !strings.Contains(msg, "loopback") {
		t.Errorf("loopback webhook: %d %s %s", code, reason, msg)
	}
}

func TestV1ErrorShapes(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, tc := range []struct {
		name       string
		method     string
		params     any
		noVersion  bool
		wantCode   int
		wantReason string
		wantMsg    string
	}{
		{"no version header", "GetTask", map[string]any{"id": "task_x"}, true, -32009, "VERSION_NOT_SUPPORTED", "A2A-Version: 1.0"},
		{"unknown task", "GetTask", map[string]any{"id": "task_nope"}, false, -32001, "TASK_NOT_FOUND", `task "task_nope" not found`},
		{"no task id", "GetTask", map[string]any{}, false, -32602, "INVALID_PARAMS", "task id is required"},
		{"bad params", "GetTask", []any{1}, false, -32602, "INVALID_PARAMS", "params"},
		{"no message", "SendMessage", map[string]any{}, false, -32602, "INVALID_PARAMS", "params.message is required"},
		{"agent role", "SendMessage", map[string]any{"message": map[string]any{"role": "ROLE_AGENT", "messageId": "m", "parts": []any{v1Text("x")}}}, false, -32602, "INVALID_PARAMS", "ROLE_USER"},
		{"0.3 role spelling", "SendMessage", map[string]any{"message": map[string]any{"role": "user", "messageId": "m", "parts": []any{v1Text("x")}}}, false, -32602, "INVALID_PARAMS", "ROLE_USER"},
		{"empty part", "SendMessage", v1Msg(map[string]any{}), false, -32602, "INVALID_PARAMS", "exactly one of text, raw, url and data"},
		{"two contents", "SendMessage", v1Msg(map[string]any{"text": "a", "url": "https://x"}), false, -32602, "INVALID_PARAMS", "exactly one"},
		{"bad raw", "SendMessage", v1Msg(map[string]any{"raw": "%%%"}), false, -32602, "INVALID_PARAMS", "base64"},
		{"no parts", "SendMessage", v1Msg(), false, -32602, "INVALID_PARAMS", "parts is empty"},
		{"list tasks", "ListTasks", map[string]any{}, false, -32004, "UNSUPPORTED_OPERATION", "ListTasks"},
		{"extended card", "GetExtendedAgentCard", map[string]any{}, false, -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", ""},
		{"unknown push config", "GetTaskPushNotificationConfig", map[string]any{"taskId": "task_nope", "id": "x"}, false, -32001, "TASK_NOT_FOUND", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e
			if !tc.noVersion {
				c = e.v1()
			}
			code, msg, reason := c.v1Err("echo", tc.method, tc.params)
			if code != tc.wantCode || reason != tc.wantReason || !strings.Contains(msg, tc.wantMsg) {
				t.Errorf("%d %s %q", code, reason, msg)
			}
		})
	}
	// A stream that fails before its first event is a plain JSON-RPC error response.
	body := `{"jsonrpc":"2.0","id":3,"method":"SendStreamingMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[]}}}`
	status, h, b := e.v1().do("POST", "/a2a/echo", body)
	var r v1Resp
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || json.Unmarshal(b, &r) != nil || r.Error == nil || r.Error.Code != -32602 || r.ID != float64(3) {
		t.Errorf("stream error: %d %s %s", status, h.Get("Content-Type"), b)
	}
	// Not JSON-RPC 2.0.
	_, _, b = e.v1().do("POST", "/a2a/echo", `{"jsonrpc":"1.0","id":4,"method":"GetTask","params":{"id":"x"}}`)
	if json.Unmarshal(b, &r) != nil || r.Error == nil || r.Error.Code != -32600 {
		t.Errorf("jsonrpc 1.0: %s", b)
	}
}

// Tenancy holds on 1.0 as on 0.3: bob cannot read or cancel alice's task.
func TestV1Tenancy(t *testing.T) {
	e := newEnv(t, envOptions{keys: "k-alice-0123456789abcdef alice\nk-bob-0123456789abcdef0 bob\n"})
	alice := e.as("Authorization", "Bearer k-alice-0123456789abcdef").v1()
	bob := e.as("Authorization", "Bearer k-bob-0123456789abcdef0").v1()
	id := obj(alice.v1Result("echo", "SendMessage", v1Msg(v1Text("secret")))["task"])["id"]
	for _, m := range []string{"GetTask", "CancelTask"} {
		if code, _, reason := bob.v1Err("echo", m, map[string]any{"id": id}); code != -32001 || reason != "TASK_NOT_FOUND" {
			t.Errorf("bob %s: %d %s", m, code, reason)
		}
	}
	if got := alice.v1Result("echo", "GetTask", map[string]any{"id": id}); state(got) != "TASK_STATE_COMPLETED" {
		t.Errorf("alice %v", got)
	}
}

// A webhook a 1.0 client set gets 1.0's body, a StreamResponse holding the task, inside
// the 0.3 task JSON (for receivers written for 0.3).
func TestV1PushNotificationBody(t *testing.T) {
	e := newEnv(t, envOptions{pushAllowPrivate: true}).v1()
	hook := newReceiver(t, 0)
	p := v1Msg(v1Text("please approve deleting notes.txt"))
	p["configuration"] = map[string]any{"returnImmediately": true, "taskPushNotificationConfig": map[string]any{
		"url": hook.srv.URL + "/hook", "token": "client-token", "authentication": map[string]any{"scheme": "Bearer", "credentials": "hook-secret"},
	}}
	id := obj(e.v1Result("echo", "SendMessage", p)["task"])["id"]
	deadline := time.Now().Add(10 * time.Second)
	for {
		hook.mu.Lock()
		got := append([]map[string]any(nil), hook.got...)
		auth := append([]string(nil), hook.auth...)
		tokens := append([]string(nil), hook.tokens...)
		hook.mu.Unlock()
		if n := len(got); n > 0 {
			if task := obj(got[n-1]["task"]); task != nil && state(task) == "TASK_STATE_INPUT_REQUIRED" {
				if task["id"] != id || got[n-1]["id"] != id || state(got[n-1]) != "input-required" || tokens[n-1] != "client-token" || auth[n-1] != "Bearer hook-secret" {
					t.Errorf("delivered %v %q %q", task, tokens[n-1], auth[n-1])
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no input-required task delivered; got %v", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
