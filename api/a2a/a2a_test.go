package a2a_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestAgentCards(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      envOptions
		path      string
		headers   []string
		wantName  string
		wantURL   string // with BASE for the test server's URL
		wantAuthn bool
	}{
		{"agent", envOptions{}, "/a2a/echo/.well-known/agent-card.json", nil, "echo", "BASE/a2a/echo", false},
		{"other agent", envOptions{}, "/a2a/echo2/.well-known/agent-card.json", nil, "echo2", "BASE/a2a/echo2", false},
		{"default", envOptions{}, "/.well-known/agent-card.json", nil, "echo", "BASE/a2a/echo", false},
		{"public url", envOptions{publicURL: "https://agents.example.com/"}, "/a2a/echo/.well-known/agent-card.json", nil, "echo", "https://agents.example.com/a2a/echo", false},
		{"bearer", envOptions{keys: "k-alice-0123456789abcdef alice\n"}, "/a2a/echo/.well-known/agent-card.json", []string{"Authorization", "Bearer k-alice-0123456789abcdef"}, "echo", "BASE/a2a/echo", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opts).as(tc.headers...)
			status, h, b := e.do("GET", tc.path, "")
			if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
				t.Fatalf("%d %s: %s", status, h.Get("Content-Type"), b)
			}
			var card map[string]any
			if err := json.Unmarshal(b, &card); err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(tc.wantURL, "BASE", e.base)
			if card["name"] != tc.wantName || card["url"] != want || card["protocolVersion"] != "0.3.0" || card["preferredTransport"] != "JSONRPC" || card["version"] != "test" {
				t.Errorf("card %s", b)
			}
			caps := obj(card["capabilities"])
			if caps["streaming"] != true || caps["stateTransitionHistory"] != true || caps["pushNotifications"] != true {
				t.Errorf("capabilities %v", caps)
			}
			if len(list(card["skills"])) != 1 || len(list(card["defaultInputModes"])) == 0 || len(list(card["defaultOutputModes"])) == 0 {
				t.Errorf("skills or modes missing: %s", b)
			}
			if tc.wantName == "echo" && card["description"] != "Echoes what it is told." {
				t.Errorf("description %v", card["description"])
			}
			schemes := obj(card["securitySchemes"])
			if tc.wantAuthn {
				if s := obj(schemes["bearer"]); s["type"] != "http" || s["scheme"] != "bearer" || len(list(card["security"])) != 1 {
					t.Errorf("security %v %v", card["securitySchemes"], card["security"])
				}
			} else if schemes != nil || card["security"] != nil {
				t.Errorf("a server without keys declares security: %s", b)
			}
		})
	}
	t.Run("unknown agent", func(t *testing.T) {
		e := newEnv(t, envOptions{})
		status, _, b := e.do("GET", "/a2a/nope/.well-known/agent-card.json", "")
		if status != http.StatusNotFound || !strings.Contains(string(b), `"jsonrpc":"2.0"`) {
			t.Errorf("%d %s", status, b)
		}
	})
}

func TestSendCompletes(t *testing.T) {
	e := newEnv(t, envOptions{})
	task := e.result("echo", "message/send", msg(text("hello there")))
	if task["kind"] != "task" || state(task) != "completed" || artifactText(task) != "Echo: hello there" {
		t.Fatalf("task %v", task)
	}
	ctxID, id := str(task["contextId"]), str(task["id"])
	if ctxID == "" || id == "" {
		t.Fatalf("ids missing: %v", task)
	}
	hist := list(task["history"])
	if len(hist) != 2 || obj(hist[0])["role"] != "user" || obj(hist[1])["role"] != "agent" || obj(hist[0])["taskId"] != id || obj(hist[0])["contextId"] != ctxID {
		t.Errorf("history %v", hist)
	}

	// A second task on the same context sees the first turn, as does the same session on
	// the OpenAI surface.
	second := e.result("echo", "message/send", with(msg(text("history")), "contextId", ctxID))
	if str(second["contextId"]) != ctxID || str(second["id"]) == id || !strings.Contains(artifactText(second), "First user message: hello there") {
		t.Errorf("second task %v", second)
	}
	status, _, b := e.do("POST", "/v1/responses", `{"model":"echo","conversation":"`+ctxID+`","input":"history"}`)
	if status != http.StatusOK || !strings.Contains(string(b), "History: 4 messages") {
		t.Errorf("responses on the context: %d %s", status, b)
	}

	// And back: a conversation of the OpenAI surface continues as an A2A context.
	if status, _, b := e.do("POST", "/v1/responses", `{"model":"echo","conversation":"conv-openai","input":"from openai"}`); status != http.StatusOK {
		t.Fatalf("responses: %d %s", status, b)
	}
	back := e.result("echo", "message/send", with(msg(text("history")), "contextId", "conv-openai"))
	if !strings.Contains(artifactText(back), "First user message: from openai") {
		t.Errorf("A2A on an OpenAI conversation: %v", back)
	}

	// A client-chosen context id is created.
	own := e.result("echo", "message/send", with(msg(text("hi")), "contextId", "my-conversation"))
	if own["contextId"] != "my-conversation" || state(own) != "completed" {
		t.Errorf("client context %v", own)
	}
}

func TestToolCallsAreDataParts(t *testing.T) {
	e := newEnv(t, envOptions{})
	task := e.result("echo", "message/send", msg(text("use the tool on paris")))
	var kinds []string
	for _, m := range list(task["history"]) {
		for _, p := range partsOf(obj(m), "data") {
			d := obj(p["data"])
			kinds = append(kinds, str(d["type"]))
			if d["type"] == "tool_call" && (d["name"] != "lookup" || obj(d["arguments"])["query"] != "paris") {
				t.Errorf("tool call %v", d)
			}
		}
	}
	if strings.Join(kinds, ",") != "tool_call,tool_result" {
		t.Errorf("data parts %v", kinds)
	}
}

func TestStreamSendsTextInPieces(t *testing.T) {
	e := newEnv(t, envOptions{})
	evs := e.stream(context.Background(), "echo", "message/stream", msg(text("one two three four")), 0)
	if len(evs) < 4 || evs[0]["kind"] != "task" || state(evs[0]) != "submitted" || evs[1]["kind"] != "status-update" || state(evs[1]) != "working" {
		t.Fatalf("stream start %v", evs)
	}
	chunks := chunksOf(evs)
	n := len(chunks)
	if n < 4 {
		t.Fatalf("%d chunks", n)
	}
	var pieces strings.Builder
	for i, c := range chunks[:n-1] {
		if c["append"] == (i == 0) || c["lastChunk"] == true {
			t.Errorf("chunk %d: append %v lastChunk %v", i, c["append"], c["lastChunk"])
		}
		pieces.WriteString(chunkText(c))
	}
	// The last chunk replaces the artifact with the whole message.
	if last := chunks[n-1]; last["lastChunk"] != true || last["append"] == true || chunkText(last) != "Echo: one two three four" {
		t.Errorf("last chunk %v", last)
	}
	if pieces.String() != "Echo: one two three four" {
		t.Errorf("pieces %q", pieces.String())
	}
	end := evs[len(evs)-1]
	if end["kind"] != "status-update" || end["final"] != true || state(end) != "completed" {
		t.Errorf("end %v", end)
	}
	// The task then reads back the same.
	task := e.result("echo", "tasks/get", map[string]any{"id": evs[0]["id"]})
	if state(task) != "completed" || artifactText(task) != "Echo: one two three four" {
		t.Errorf("task %v", task)
	}
}

func TestFailedRun(t *testing.T) {
	e := newEnv(t, envOptions{})
	task := e.result("echo", "message/send", msg(text("fail")))
	m := obj(obj(task["status"])["message"])
	if state(task) != "failed" || !strings.Contains(str(partsOf(m, "text")[0]["text"]), "failing") {
		t.Errorf("task %v", task)
	}
}

func TestApprovalRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer map[string]any
		want   string
		// output, when set, is the tool result the answer stands for.
		output string
	}{
		{"data approve", data(map[string]any{"approve": true}), "Approved: deleted notes.txt.", ""},
		{"data reject", data(map[string]any{"approve": false, "reason": "keep it"}), "Rejected: kept notes.txt (keep it).", ""},
		{"text approve", text("approve"), "Approved: deleted notes.txt.", ""},
		{"text reject", text("reject: not now"), "Rejected: kept notes.txt (not now).", ""},
		{"data value", data(map[string]any{"moved_to": "trash"}), "Approved: deleted notes.txt.", `{"moved_to":"trash"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOptions{})
			evs := e.stream(context.Background(), "echo", "message/stream", msg(text("please approve deleting notes.txt")), 0)
			end := evs[len(evs)-1]
			if end["final"] != true || state(end) != "input-required" {
				t.Fatalf("end %v", end)
			}
			ds := partsOf(obj(obj(end["status"])["message"]), "data")
			if len(ds) != 1 {
				t.Fatalf("status message %v", end["status"])
			}
			req := obj(ds[0]["data"])
			if req["type"] != "approval_request" || req["name"] != "delete_file" || obj(req["arguments"])["path"] != "notes.txt" || req["message"] == "" {
				t.Errorf("approval request %v", req)
			}
			id := str(end["taskId"])
			if got := e.result("echo", "tasks/get", map[string]any{"id": id}); state(got) != "input-required" {
				t.Errorf("get while waiting: %v", got)
			}

			// Something that is no answer is refused; the task still waits.
			if code, detail := e.rpcErr("echo", "message/send", with(msg(text("what?")), "taskId", id)); code != -32602 || !strings.Contains(detail, "approve") {
				t.Errorf("non-answer: %d %s", code, detail)
			}
			done := e.result("echo", "message/send", with(msg(tc.answer), "taskId", id, "contextId", end["contextId"]))
			if done["id"] != id || state(done) != "completed" || !strings.HasSuffix(artifactText(done), tc.want) {
				t.Fatalf("answered %v", done)
			}
			// The history holds the whole exchange, the answer included.
			var types []string
			for _, m := range list(done["history"]) {
				for _, p := range partsOf(obj(m), "data") {
					types = append(types, str(obj(p["data"])["type"]))
				}
			}
			if !strings.Contains(strings.Join(types, ","), "approval_request,approval_response,tool_result") {
				t.Errorf("history data %v", types)
			}
			if tc.output != "" {
				var got string
				for _, m := range list(done["history"]) {
					for _, p := range partsOf(obj(m), "data") {
						if d := obj(p["data"]); d["type"] == "tool_result" {
							got = str(d["output"])
						}
					}
				}
				if got != tc.output {
					t.Errorf("tool output %q, want %q", got, tc.output)
				}
			}
			// A finished task takes no more messages.
			if code, _ := e.rpcErr("echo", "message/send", with(msg(text("approve")), "taskId", id)); code != -32602 {
				t.Errorf("message to a completed task: %d", code)
			}
		})
	}
}

// A task waiting for approval that a later task of its context superseded cannot answer
// that later task's approval requests.
func TestSupersededApproval(t *testing.T) {
	e := newEnv(t, envOptions{})
	first := e.result("echo", "message/send", msg(text("please approve deleting a.txt")))
	ctxID := first["contextId"]
	second := e.result("echo", "message/send", with(msg(text("please approve deleting b.txt")), "contextId", ctxID))
	if state(first) != "input-required" || state(second) != "input-required" {
		t.Fatalf("states %s %s", state(first), state(second))
	}
	if code, detail := e.rpcErr("echo", "message/send", with(msg(text("approve")), "taskId", first["id"])); code != -32602 || !strings.Contains(detail, "superseded") {
		t.Errorf("answer to the superseded task: %d %s", code, detail)
	}
	done := e.result("echo", "message/send", with(msg(text("approve")), "taskId", second["id"]))
	if !strings.HasSuffix(artifactText(done), "Approved: deleted b.txt.") {
		t.Errorf("second task %v", done)
	}
}

func TestGetTaskHistoryLength(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.result("echo", "message/send", msg(text("use the tool on rome")))["id"]
	full := len(list(e.result("echo", "tasks/get", map[string]any{"id": id})["history"]))
	if full != 4 {
		t.Fatalf("full history %d", full)
	}
	for _, n := range []int{0, 1, 3, 10} {
		got := e.result("echo", "tasks/get", map[string]any{"id": id, "historyLength": n})
		h := list(got["history"])
		if len(h) != min(n, full) {
			t.Errorf("historyLength %d: %d messages", n, len(h))
		}
		if n == 1 && obj(h[0])["role"] != "agent" {
			t.Errorf("historyLength 1 is not the latest message: %v", h)
		}
	}
	// message/send honours configuration.historyLength too.
	p := msg(text("hi"))
	p["configuration"] = map[string]any{"historyLength": 1}
	if h := list(e.result("echo", "message/send", p)["history"]); len(h) != 1 {
		t.Errorf("send historyLength 1: %v", h)
	}
}

func TestCancel(t *testing.T) {
	e := newEnv(t, envOptions{})
	p := slow(msg(text("a long answer")))
	p["configuration"] = map[string]any{"blocking": false}
	task := e.result("echo", "message/send", p)
	if state(task) != "working" {
		t.Fatalf("non-blocking send %v", task)
	}
	got := e.result("echo", "tasks/cancel", map[string]any{"id": task["id"]})
	if state(got) != "canceled" {
		t.Fatalf("cancelled %v", got)
	}
	if code, _ := e.rpcErr("echo", "tasks/cancel", map[string]any{"id": task["id"]}); code != -32002 {
		t.Errorf("cancel again: %d", code)
	}
}

func TestResubscribeReplaysThenFollows(t *testing.T) {
	e := newEnv(t, envOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	p := slow(msg(text("go")))
	p["metadata"].(map[string]any)["agentengine"].(map[string]any)["model_options"] = map[string]any{"delay_ms": 5, "deltas": 40}
	first := e.stream(ctx, "echo", "message/stream", p, 5) // dropped after 5 events
	cancel()
	id := first[0]["id"]
	evs := e.stream(context.Background(), "echo", "tasks/resubscribe", map[string]any{"id": id}, 0)
	if evs[0]["kind"] != "task" || evs[0]["id"] != id {
		t.Fatalf("resubscribe start %v", evs[0])
	}
	chunks := chunksOf(evs)
	end := evs[len(evs)-1]
	if len(chunks) != 41 || state(end) != "completed" || end["final"] != true {
		t.Errorf("resubscribe: %d chunks (40 deltas and the whole message), end %v", len(chunks), end)
	}
	var text strings.Builder
	for _, c := range chunks[:len(chunks)-1] {
		text.WriteString(chunkText(c))
	}
	if whole := chunkText(chunks[len(chunks)-1]); whole != text.String() {
		t.Errorf("deltas %q, whole %q", text.String(), whole)
	}
	if got := artifactText(e.result("echo", "tasks/get", map[string]any{"id": id})); got != text.String() {
		t.Errorf("replayed %q, task has %q", text.String(), got)
	}
}

func TestFilePartGoesThroughAttachments(t *testing.T) {
	e := newEnv(t, envOptions{})
	file := map[string]any{"kind": "file", "file": map[string]any{"name": "notes.txt", "mimeType": "text/plain",
		"bytes": base64.StdEncoding.EncodeToString([]byte("the file's words"))}}
	task := e.result("echo", "message/send", msg(text("read this"), file))
	if got := artifactText(task); !strings.Contains(got, "[files: notes.txt (ok): the file's words]") {
		t.Errorf("reply %q", got)
	}
	bad := map[string]any{"kind": "file", "file": map[string]any{"name": "x.bin", "bytes": "%%%"}}
	if code, _ := e.rpcErr("echo", "message/send", msg(text("read"), bad)); code != -32602 {
		t.Errorf("bad bytes: %d", code)
	}
}

func TestErrorShapes(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, tc := range []struct {
		name   string
		method string
		params any
		code   int
	}{
		{"unknown method", "tasks/list", map[string]any{}, -32601},
		{"no message", "message/send", map[string]any{}, -32602},
		{"no parts", "message/send", msg(), -32602},
		{"agent role", "message/send", with(msg(text("x")), "role", "agent"), -32602},
		{"unknown task", "tasks/get", map[string]any{"id": "task_nope"}, -32001},
		{"no task id", "tasks/get", map[string]any{}, -32602},
		{"cancel unknown", "tasks/cancel", map[string]any{"id": "task_nope"}, -32001},
		{"message to unknown task", "message/send", with(msg(text("approve")), "taskId", "task_nope"), -32001},
		{"model options not an object", "message/send", func() any {
			p := msg(text("x"))
			p["metadata"] = map[string]any{"agentengine": map[string]any{"model_options": 3}}
			return p
		}(), -32602},
		{"push to loopback", "message/send", func() any {
			p := msg(text("x"))
			p["configuration"] = map[string]any{"pushNotificationConfig": map[string]any{"url": "http://127.0.0.1:9/hook"}}
			return p
		}(), -32602},
		{"push not http", "message/send", func() any {
			p := msg(text("x"))
			p["configuration"] = map[string]any{"pushNotificationConfig": map[string]any{"url": "file:///etc/passwd"}}
			return p
		}(), -32602},
		{"push get unknown task", "tasks/pushNotificationConfig/get", map[string]any{"id": "task_nope"}, -32001},
		{"extended card", "agent/getAuthenticatedExtendedCard", nil, -32007},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, _ := e.rpcErr("echo", tc.method, tc.params); code != tc.code {
				t.Errorf("code %d, want %d", code, tc.code)
			}
		})
	}
	t.Run("stream error", func(t *testing.T) {
		evs := e.stream(context.Background(), "echo", "tasks/resubscribe", map[string]any{"id": "task_nope"}, 0)
		if len(evs) != 1 || obj(evs[0]["error"])["code"] != float64(-32001) {
			t.Errorf("%v", evs)
		}
	})
	for _, tc := range []struct {
		name, method, path, body string
		status, code             int
	}{
		{"parse error", "POST", "/a2a/echo", `{"jsonrpc":`, http.StatusOK, -32700},
		{"not JSON-RPC 2.0", "POST", "/a2a/echo", `{"jsonrpc":"1.0","id":1,"method":"tasks/get"}`, http.StatusOK, -32600},
		{"unknown agent", "POST", "/a2a/nope", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`, http.StatusNotFound, -32600},
		{"GET", "GET", "/a2a/echo", "", http.StatusMethodNotAllowed, -32600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, b := e.do(tc.method, tc.path, tc.body)
			var r rpcResp
			if err := json.Unmarshal(b, &r); err != nil || status != tc.status || r.Error == nil || r.Error.Code != tc.code || r.JSONRPC != "2.0" {
				t.Errorf("%d %s", status, b)
			}
		})
	}
}

// Per-user keys: each user's tasks and contexts are theirs alone.
func TestTenancy(t *testing.T) {
	e := newEnv(t, envOptions{keys: "k-alice-0123456789abcdef alice\nk-bob-0123456789abcdef00 bob\n"})
	alice, bob := e.as("Authorization", "Bearer k-alice-0123456789abcdef"), e.as("Authorization", "Bearer k-bob-0123456789abcdef00")
	task := alice.result("echo", "message/send", msg(text("alice's secret")))
	id, ctxID := task["id"], str(task["contextId"])
	waiting := alice.result("echo", "message/send", msg(text("please approve deleting notes.txt")))

	for _, tc := range []struct {
		method string
		params any
	}{
		{"tasks/get", map[string]any{"id": id}},
		{"tasks/cancel", map[string]any{"id": id}},
		{"message/send", with(msg(text("approve")), "taskId", waiting["id"])},
	} {
		if code, _ := bob.rpcErr("echo", tc.method, tc.params); code != -32001 {
			t.Errorf("bob %s: %d, want task not found", tc.method, code)
		}
	}
	if evs := bob.stream(context.Background(), "echo", "tasks/resubscribe", map[string]any{"id": id}, 0); len(evs) != 1 || evs[0]["error"] == nil {
		t.Errorf("bob resubscribes to alice's task: %v", evs)
	}
	// Bob naming alice's context gets a conversation of his own, without her messages.
	mine := bob.result("echo", "message/send", with(msg(text("history")), "contextId", ctxID))
	if got := artifactText(mine); strings.Contains(got, "secret") || !strings.Contains(got, "History: 0 messages") {
		t.Errorf("bob on alice's context sees %q", got)
	}
	// Alice's task is untouched, and still hers.
	if got := alice.result("echo", "tasks/get", map[string]any{"id": id}); state(got) != "completed" || len(list(got["history"])) != 2 {
		t.Errorf("alice's task %v", got)
	}
	if got := alice.result("echo", "tasks/get", map[string]any{"id": waiting["id"]}); state(got) != "input-required" {
		t.Errorf("alice's waiting task %v", got)
	}
	// No key: 401 in the JSON-RPC shape, with the challenge.
	status, h, b := e.do("POST", "/a2a/echo", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`)
	var r rpcResp
	if json.Unmarshal(b, &r) != nil || status != http.StatusUnauthorized || r.Error == nil || h.Get("WWW-Authenticate") == "" {
		t.Errorf("no key: %d %s", status, b)
	}
	// Another agent's endpoint does not know the task either.
	if code, _ := alice.rpcErr("echo2", "tasks/get", map[string]any{"id": id}); code != -32001 {
		t.Errorf("task through another agent: %d", code)
	}
}

// chunksOf returns the artifact-update events of a stream.
func chunksOf(evs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, ev := range evs {
		if ev["kind"] == "artifact-update" {
			out = append(out, ev)
		}
	}
	return out
}

func chunkText(ev map[string]any) string {
	return artifactText(map[string]any{"artifacts": []any{ev["artifact"]}})
}
