package adkweb

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/api/openai"
)

// With the user header, the path's (or body's) user must be the caller: bob cannot read,
// change, run or delete alice's session, nor list or create hers; without the header the
// path names the user, as in ADK.
func TestCallerHeaderScopesUserPaths(t *testing.T) {
	e := newEnv(t)
	id := e.createSession("alice", `{"state":{"k":"v"}}`)
	bob := []string{headerUser, "bob"}
	sess := "/apps/echo/users/alice/sessions/" + id
	for _, tt := range []struct{ method, path, body string }{
		{"GET", sess, ""},
		{"PATCH", sess, `{"stateDelta":{"k":"bob"}}`},
		{"DELETE", sess, ""},
		{"POST", sess, `{}`},
		{"GET", "/apps/echo/users/alice/sessions", ""},
		{"POST", "/apps/echo/users/alice/sessions", `{}`},
		{"POST", "/run", runBody("alice", id, "hi", false)},
		{"POST", "/run_sse", runBody("alice", id, "hi", true)},
	} {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			m := e.obj(tt.method, tt.path, tt.body, http.StatusNotFound, bob...)
			if _, ok := m["detail"].(string); !ok {
				t.Errorf("body %v", m)
			}
		})
	}
	// Nothing changed, and alice (by header or by path alone) still has it.
	s := e.obj("GET", sess, "", http.StatusOK, headerUser, "alice")
	if s["state"].(map[string]any)["k"] != "v" || len(s["events"].([]any)) != 0 {
		t.Errorf("alice's session changed: %v", s)
	}
	e.obj("GET", sess, "", http.StatusOK)
	// Bob's own paths work with his header.
	e.obj("POST", "/apps/echo/users/bob/sessions", `{}`, http.StatusOK, bob...)
}

// Middleware errors (auth, size, origin) on every ADK route come in ADK's {"detail"}
// shape, not OpenAI's envelope.
func TestMiddlewareErrorsInDetailShape(t *testing.T) {
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
	big := strings.Repeat("x", 100)
	for _, tt := range []struct {
		name, method, path, body string
		headers                  []string
		want                     int
	}{
		{"401 run", "POST", "/run", "{}", nil, http.StatusUnauthorized},
		{"401 run_sse", "POST", "/run_sse", "{}", nil, http.StatusUnauthorized},
		{"401 list-apps", "GET", "/list-apps", "", nil, http.StatusUnauthorized},
		{"401 version", "GET", "/version", "", nil, http.StatusUnauthorized},
		{"401 sessions", "GET", "/apps/echo/users/u/sessions", "", nil, http.StatusUnauthorized},
		{"403 origin", "POST", "/run", "{}", []string{"Authorization", "Bearer secret", "Origin", "https://evil.example"}, http.StatusForbidden},
		{"413 run", "POST", "/run", big, []string{"Authorization", "Bearer secret"}, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, b := serve(tt.method, tt.path, tt.body, tt.headers...)
			if code != tt.want || !strings.HasPrefix(b, `{"detail":"`) {
				t.Errorf("%d %s, want %d in {\"detail\"} shape", code, b, tt.want)
			}
		})
	}
}
