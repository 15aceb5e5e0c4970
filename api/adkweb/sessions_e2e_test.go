package adkweb

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/session"
)

func TestListAppsAndVersion(t *testing.T) {
	e := newEnv(t)
	apps := e.json("GET", "/list-apps?relative_path=./", "", http.StatusOK).([]any)
	if len(apps) != 2 || apps[0] != "echo" || apps[1] != "echo2" {
		t.Errorf("apps %v", apps)
	}
	detailed := e.obj("GET", "/list-apps?detailed=true", "", http.StatusOK)
	if a := detailed["apps"].([]any)[0].(map[string]any); a["name"] != "echo" || a["rootAgentName"] != "echo" || a["language"] != "go" {
		t.Errorf("detailed %v", detailed)
	}
	if v := e.obj("GET", "/version", "", http.StatusOK); v["version"] != "test" || v["language"] != "go" {
		t.Errorf("version %v", v)
	}
}

func TestSessionsCRUD(t *testing.T) {
	e := newEnv(t)
	s := e.obj("POST", "/apps/echo/users/alice/sessions", "", http.StatusOK)
	if !strings.HasPrefix(str(s["id"]), "sess_") || s["appName"] != "echo" || s["userId"] != "alice" ||
		len(s["events"].([]any)) != 0 || len(s["state"].(map[string]any)) != 0 || s["lastUpdateTime"].(float64) < 1e9 {
		t.Fatalf("created %v", s)
	}
	// Client-chosen ids, in camelCase, snake_case or the deprecated path form.
	s = e.obj("POST", "/apps/echo/users/alice/sessions", `{"sessionId":"s1","state":{"a":1,"app:theme":"dark","temp:x":1}}`, http.StatusOK)
	if s["id"] != "s1" {
		t.Fatalf("created %v", s)
	}
	if st := s["state"].(map[string]any); st["a"] != 1.0 || st["app:theme"] != "dark" || st["temp:x"] != nil || len(s["events"].([]any)) != 0 {
		t.Errorf("state %v events %v", st, s["events"])
	}
	e.obj("POST", "/apps/echo/users/alice/sessions", `{"session_id":"s2","events":[]}`, http.StatusOK)
	s = e.obj("POST", "/apps/echo/users/alice/sessions/s3", `{"k":"v"}`, http.StatusOK)
	if s["id"] != "s3" || s["state"].(map[string]any)["k"] != "v" {
		t.Errorf("created with id %v", s)
	}
	// Taken ids are 409; initial events that cannot be imported create nothing.
	if m := e.obj("POST", "/apps/echo/users/alice/sessions", `{"sessionId":"s1"}`, http.StatusConflict); m["detail"] != "Session already exists: s1" {
		t.Errorf("conflict %v", m)
	}
	e.obj("POST", "/apps/echo/users/alice/sessions", `{"sessionId":"s4","events":[{"author":"a","content":{"parts":[{"executableCode":{"code":"1"}}]}}]}`, http.StatusBadRequest)
	e.obj("GET", "/apps/echo/users/alice/sessions/s4", "", http.StatusNotFound)

	list := e.json("GET", "/apps/echo/users/alice/sessions", "", http.StatusOK).([]any)
	if len(list) != 4 {
		t.Fatalf("list %v", list)
	}
	for _, it := range list {
		m := it.(map[string]any)
		if len(m["events"].([]any)) != 0 || m["userId"] != "alice" {
			t.Errorf("listed %v", m)
		}
	}
	e.runSSE(runBody("alice", "s1", "hello", false))
	got := e.obj("GET", "/apps/echo/users/alice/sessions/s1", "", http.StatusOK)
	evs := got["events"].([]any)
	if len(evs) != 3 || evs[2].(map[string]any)["usageMetadata"] == nil || evs[0].(map[string]any)["author"] != "user" || parts(evs[0].(map[string]any))[0]["text"] != "hello" {
		t.Errorf("events %v", evs)
	}
	if status, _, b := e.do("DELETE", "/apps/echo/users/alice/sessions/s1", ""); status != http.StatusOK || string(b) != "null" {
		t.Errorf("delete: %d %s", status, b)
	}
	e.obj("GET", "/apps/echo/users/alice/sessions/s1", "", http.StatusNotFound)
	e.obj("DELETE", "/apps/echo/users/alice/sessions/s1", "", http.StatusNotFound)
	e.obj("PATCH", "/apps/echo/users/alice/sessions/s1", `{"stateDelta":{"a":2}}`, http.StatusNotFound)
}

// TestUsersIsolated: a session exists only for its user and app.
func TestUsersIsolated(t *testing.T) {
	e := newEnv(t)
	sid := e.createSession("alice", `{"state":{"secret":"a"}}`)
	e.runSSE(runBody("alice", sid, "alice's words", false))
	seq := e.sessionLastSeq("alice", sid)

	if list := e.json("GET", "/apps/echo/users/bob/sessions", "", http.StatusOK).([]any); len(list) != 0 {
		t.Errorf("bob sees %v", list)
	}
	for _, path := range []string{"/apps/echo/users/bob/sessions/" + sid, "/apps/echo2/users/alice/sessions/" + sid} {
		if m := e.obj("GET", path, "", http.StatusNotFound); m["detail"] != "Session not found: "+sid {
			t.Errorf("GET %s: %v", path, m)
		}
		e.obj("DELETE", path, "", http.StatusNotFound)
		e.obj("PATCH", path, `{"stateDelta":{"secret":"b"}}`, http.StatusNotFound)
	}
	m := e.obj("POST", "/run_sse", runBody("bob", sid, "let me in", true), http.StatusNotFound)
	if m["detail"] != "Session not found: "+sid {
		t.Errorf("run_sse on another user's session: %v", m)
	}
	e.obj("POST", "/run", strings.Replace(runBody("alice", sid, "x", false), `"echo"`, `"echo2"`, 1), http.StatusNotFound)
	if e.sessionLastSeq("alice", sid) != seq {
		t.Fatalf("alice's session changed")
	}
	// Bob may use the same id: it is his own session.
	e.obj("POST", "/apps/echo/users/bob/sessions", `{"sessionId":"`+sid+`"}`, http.StatusOK)
	_, evs := e.runSSE(runBody("bob", sid, "history", false))
	if finals, _ := texts(evs); len(finals) != 1 || finals[0] != "History: 0 messages." {
		t.Errorf("bob's history %q", finals)
	}
	st := e.obj("GET", "/apps/echo/users/bob/sessions/"+sid, "", http.StatusOK)["state"].(map[string]any)
	if len(st) != 0 {
		t.Errorf("bob sees state %v", st)
	}
	if e.sessionLastSeq("alice", sid) != seq {
		t.Fatalf("alice's session changed")
	}
}

// TestBadInput: clear FastAPI-style errors with the right status, and nothing stored.
func TestBadInput(t *testing.T) {
	e := newEnv(t)
	sid := e.createSession("alice", "")
	seq := e.sessionLastSeq("alice", sid)
	ok := func(text string) string { return runBody("alice", sid, text, true) }
	cases := []struct {
		name, path, body string
		status           int
		want             string // in the detail
		headers          []string
	}{
		{"unknown app", "/run_sse", strings.Replace(ok("x"), `"echo"`, `"nope"`, 1), 404, "App not found: nope", nil},
		{"unknown session", "/run_sse", runBody("alice", "missing", "x", true), 404, "Session not found: missing", nil},
		{"malformed json", "/run_sse", `{"appName":`, 422, "json_invalid", nil},
		{"missing newMessage", "/run_sse", `{"appName":"echo","userId":"alice","sessionId":"` + sid + `"}`, 422, "newMessage", nil},
		{"parts not a list", "/run_sse", strings.Replace(ok("x"), `"parts":[{"text":"x"}]`, `"parts":"x"`, 1), 422, "list_type", nil},
		{"unknown part type", "/run_sse", strings.Replace(ok("x"), `{"text":"x"}`, `{"audio":"x"}`, 1), 422, "extra_forbidden", nil},
		{"function call part", "/run_sse", strings.Replace(ok("x"), `{"text":"x"}`, `{"functionCall":{"name":"f"}}`, 1), 400, "not supported", nil},
		{"streaming not bool", "/run", strings.Replace(ok("x"), `"streaming":true`, `"streaming":"yes"`, 1), 422, "bool_type", nil},
		{"user id number", "/run", strings.Replace(ok("x"), `"userId":"alice"`, `"userId":7`, 1), 422, "string_type", nil},
		{"state delta not object", "/run_sse", strings.Replace(ok("x"), `"streaming"`, `"stateDelta":"x","streaming"`, 1), 422, "dict_type", nil},
		{"bad base64", "/run_sse", strings.Replace(ok("x"), `{"text":"x"}`, `{"inlineData":{"mimeType":"image/png","data":"%%"}}`, 1), 422, "base64", nil},
		{"unknown confirmation", "/run_sse", resumeBody("alice", sid, "apr_1", `{"confirmed":true}`), 400, "no pending confirmation", nil},
		{"text/plain body", "/run_sse", ok("x"), 415, "JSON", []string{"Content-Type", "text/plain"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, h, b := e.do("POST", tc.path, tc.body, tc.headers...)
			if status != tc.status || !strings.HasPrefix(h.Get("Content-Type"), "application/json") ||
				!strings.HasPrefix(string(b), `{"detail":`) || !strings.Contains(string(b), tc.want) {
				t.Errorf("%d %s: %s", status, h.Get("Content-Type"), b)
			}
		})
	}
	if e.sessionLastSeq("alice", sid) != seq {
		t.Errorf("a rejected request stored events")
	}
	// A state delta is not applied when the request is rejected.
	bad := strings.Replace(resumeBody("alice", sid, "apr_1", `{"confirmed":true}`), `"streaming"`, `"stateDelta":{"x":1},"streaming"`, 1)
	e.obj("POST", "/run_sse", bad, http.StatusBadRequest)
	st, err := e.rt.State(context.Background(), session.Key{App: "echo", User: "alice", ID: sid})
	if err != nil || len(st.Session) != 0 || e.sessionLastSeq("alice", sid) != seq {
		t.Errorf("state %v %v", st, err)
	}
	// Session routes.
	e.obj("GET", "/apps/nope/users/alice/sessions", "", http.StatusNotFound)
	e.obj("POST", "/apps/echo/users/alice/sessions", `{"state":[1]}`, http.StatusUnprocessableEntity)
	e.obj("POST", "/apps/echo/users/alice/sessions", `{"sessionId":"a\u0001b"}`, http.StatusBadRequest)
	e.obj("PATCH", "/apps/echo/users/alice/sessions/"+sid, `{}`, http.StatusUnprocessableEntity)
	e.obj("PUT", "/apps/echo/users/alice/sessions/"+sid, `{}`, http.StatusMethodNotAllowed)
	if list := e.json("GET", "/apps/echo/users/alice/sessions", "", http.StatusOK).([]any); len(list) != 1 {
		t.Errorf("rejected creates made sessions: %v", list)
	}
}

var (
	_ api.Surface     = (*Handler)(nil)
	_ api.ErrorWriter = (*Handler)(nil)
)

// TestRouterErrors: errors of the router's middleware under /apps/ and of this
// surface's own limits come in FastAPI's shape.
func TestRouterErrors(t *testing.T) {
	e := newEnv(t)
	r := api.NewRouter(api.Config{Runtime: e.rt, AuthToken: "secret", MaxBodyBytes: 64,
		Surfaces: []api.Surface{openai.New(openai.Config{Runtime: e.rt}), New(Config{Runtime: e.rt})}})
	serve := func(method, path, body string, headers ...string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Host = "127.0.0.1"
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	if code, b := serve("GET", "/apps/echo/users/u/sessions", ""); code != http.StatusUnauthorized || !strings.HasPrefix(b, `{"detail":`) {
		t.Errorf("unauthorised: %d %s", code, b)
	}
	auth := []string{"Authorization", "Bearer secret"}
	if code, b := serve("GET", "/apps/echo/users/u/nothing", "", auth...); code != http.StatusNotFound || !strings.HasPrefix(b, `{"detail":`) {
		t.Errorf("no route: %d %s", code, b)
	}
	big := runBody("u", "s", strings.Repeat("x", 100), false)
	if code, b := serve("POST", "/run_sse", big, append(auth, "Content-Type", "application/json")...); code != http.StatusRequestEntityTooLarge || !strings.HasPrefix(b, `{"detail":`) {
		t.Errorf("too large: %d %s", code, b)
	}
}
