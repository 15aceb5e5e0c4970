package a2a_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// receiver is a webhook that records what it is sent; it fails the first failures
// deliveries with 503.
type receiver struct {
	mu       sync.Mutex
	failures int
	attempts int
	got      []map[string]any
	tokens   []string
	auth     []string
	srv      *httptest.Server
}

func newReceiver(t *testing.T, failures int) *receiver {
	r := &receiver{failures: failures}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.attempts++
		if r.failures > 0 {
			r.failures--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		var task map[string]any
		_ = json.Unmarshal(b, &task)
		r.got = append(r.got, task)
		r.tokens = append(r.tokens, req.Header.Get("X-A2A-Notification-Token"))
		r.auth = append(r.auth, req.Header.Get("Authorization"))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// waitFor waits until the receiver got a task in state, and returns what it got.
func (r *receiver) waitFor(t *testing.T, state string) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		got := append([]map[string]any(nil), r.got...)
		r.mu.Unlock()
		for _, task := range got {
			if obj(task["status"])["state"] == state {
				return got
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s task delivered; got %v", state, r.got)
	return nil
}

func TestPushNotifications(t *testing.T) {
	e := newEnv(t, envOptions{pushAllowPrivate: true})
	hook := newReceiver(t, 2) // fails twice: delivered on the third attempt
	p := msg(text("please approve deleting notes.txt"))
	p["configuration"] = map[string]any{"blocking": false, "pushNotificationConfig": map[string]any{
		"url": hook.srv.URL + "/hook", "token": "client-token",
		"authentication": map[string]any{"schemes": []any{"Bearer"}, "credentials": "hook-secret"},
	}}
	task := e.result("echo", "message/send", p)
	id := task["id"]
	got := hook.waitFor(t, "input-required")
	last := got[len(got)-1]
	if last["id"] != id || last["kind"] != "task" {
		t.Errorf("delivered %v", last)
	}
	hook.mu.Lock()
	if hook.tokens[0] != "client-token" || hook.auth[0] != "Bearer hook-secret" || hook.attempts < 3 {
		t.Errorf("token %q auth %q after %d attempts", hook.tokens[0], hook.auth[0], hook.attempts)
	}
	hook.mu.Unlock()

	// The config reads back; the answer's run is followed too.
	cfg := e.result("echo", "tasks/pushNotificationConfig/get", map[string]any{"id": id})
	if obj(cfg["pushNotificationConfig"])["url"] != hook.srv.URL+"/hook" || cfg["taskId"] != id {
		t.Errorf("config %v", cfg)
	}
	e.result("echo", "message/send", with(msg(data(map[string]any{"approve": true})), "taskId", id))
	hook.waitFor(t, "completed")

	// A second config by id, listed, then deleted.
	other := newReceiver(t, 0)
	e.result("echo", "tasks/pushNotificationConfig/set", map[string]any{"taskId": id,
		"pushNotificationConfig": map[string]any{"id": "second", "url": other.srv.URL}})
	var listed []any
	if err := json.Unmarshal(e.call("echo", "tasks/pushNotificationConfig/list", map[string]any{"id": id}).Result, &listed); err != nil || len(listed) != 2 {
		t.Errorf("list %v %v", listed, err)
	}
	if r := e.call("echo", "tasks/pushNotificationConfig/delete", map[string]any{"id": id, "pushNotificationConfigId": "second"}); r.Error != nil || string(r.Result) != "null" {
		t.Errorf("delete: %v %s", r.Error, r.Result)
	}
	if code, _ := e.rpcErr("echo", "tasks/pushNotificationConfig/get", map[string]any{"id": id, "pushNotificationConfigId": "second"}); code != -32602 {
		t.Errorf("get deleted: %d", code)
	}
}

func TestPushRefusesPrivateAddresses(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.result("echo", "message/send", msg(text("hi")))["id"]
	for _, url := range []string{"http://127.0.0.1:9/x", "http://localhost/x", "http://10.1.2.3/x", "http://169.254.169.254/latest", "http://[::1]/x", "ftp://example.com/x"} {
		if code, _ := e.rpcErr("echo", "tasks/pushNotificationConfig/set", map[string]any{"taskId": id,
			"pushNotificationConfig": map[string]any{"url": url}}); code != -32602 {
			t.Errorf("%s: %d", url, code)
		}
	}
}

func TestPushConfigsAreTheirUsers(t *testing.T) {
	e := newEnv(t, envOptions{keys: "k-alice-0123456789abcdef alice\nk-bob-0123456789abcdef00 bob\n", pushAllowPrivate: true})
	alice, bob := e.as("Authorization", "Bearer k-alice-0123456789abcdef"), e.as("Authorization", "Bearer k-bob-0123456789abcdef00")
	hook := newReceiver(t, 0)
	id := alice.result("echo", "message/send", msg(text("hi")))["id"]
	alice.result("echo", "tasks/pushNotificationConfig/set", map[string]any{"taskId": id, "pushNotificationConfig": map[string]any{"url": hook.srv.URL}})
	for _, tc := range []struct {
		method string
		params map[string]any
	}{
		{"tasks/pushNotificationConfig/get", map[string]any{"id": id}},
		{"tasks/pushNotificationConfig/list", map[string]any{"id": id}},
		{"tasks/pushNotificationConfig/set", map[string]any{"taskId": id, "pushNotificationConfig": map[string]any{"url": hook.srv.URL}}},
		{"tasks/pushNotificationConfig/delete", map[string]any{"id": id, "pushNotificationConfigId": id}},
	} {
		if code, _ := bob.rpcErr("echo", tc.method, tc.params); code != -32001 {
			t.Errorf("bob %s: %d", tc.method, code)
		}
	}
}
