package actions_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/api/actions"
)

func TestSuccessEnvelope(t *testing.T) {
	e := newEnv(t)
	r := e.post("GetAgentUiBootstrap", map[string]any{})
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	if r.env["Code"] != float64(0) || r.env["Message"] != "Success" || r.env["Action"] != "GetAgentUiBootstrap" {
		t.Errorf("envelope %s", r.raw)
	}
	id, _ := r.env["RequestId"].(string)
	if !requestIDRe.MatchString(id) || r.header.Get("X-Request-Id") != id {
		t.Errorf("RequestId %q, header %q", id, r.header.Get("X-Request-Id"))
	}
	if _, ok := r.env["detail"]; ok {
		t.Error("success carries detail")
	}
	// An empty body is {}.
	if r := e.post("GetAgentUiBootstrap", nil); r.status != http.StatusOK {
		t.Errorf("empty body: %d %s", r.status, r.raw)
	}
}

func TestRequestRejections(t *testing.T) {
	e := newEnv(t, func(o *envOptions) { o.maxBody = 4096 })
	for _, tc := range []struct {
		name, method, action, body string
		headers                    []string
		status                     int
		code                       string
		mentions                   []string
	}{
		{"unknown action", "POST", "Nope", `{}`, nil, 404, actions.CodeInvalidAction, []string{`"Nope"`}},
		{"wrong method", "GET", "RunAgent", ``, nil, 405, actions.CodeMethod, []string{"POST"}},
		{"subscribe is GET", "POST", "SubscribeRunEvents", `{}`, nil, 405, actions.CodeMethod, []string{"GET"}},
		{"not JSON", "POST", "ListSessions", `{"AgentId":`, nil, 400, actions.CodeInvalidParameter, []string{"not valid JSON"}},
		{"array body", "POST", "ListSessions", `[1,2]`, nil, 400, actions.CodeInvalidParameter, []string{"JSON object"}},
		{"trailing garbage", "POST", "ListSessions", `{"AgentId":"echo"} x`, nil, 400, actions.CodeInvalidParameter, nil},
		{"media type", "POST", "ListSessions", `{}`, []string{"Content-Type", "text/plain"}, 415, actions.CodeMediaType, nil},
		{"too large", "POST", "ListSessions", `{"AgentId":"` + strings.Repeat("x", 5000) + `"}`, nil, 413, actions.CodeTooLarge, nil},
		{"string for integer", "POST", "ListSessions", `{"AgentId":"echo","Page":"1"}`, nil, 400, actions.CodeInvalidParameter, []string{"Page", "integer"}},
		{"fraction for integer", "POST", "ListSessions", `{"AgentId":"echo","PageSize":1.5}`, nil, 400, actions.CodeInvalidParameter, []string{"PageSize"}},
		{"number for string", "POST", "GetSession", `{"SessionId":42}`, nil, 400, actions.CodeInvalidParameter, []string{"SessionId", "string"}},
		{"object for string", "POST", "CreateSession", `{"UserId":{"a":1}}`, nil, 400, actions.CodeInvalidParameter, []string{"UserId"}},
		{"string for bool", "POST", "RunAgent", `{"Stream":"yes","Messages":[]}`, nil, 400, actions.CodeInvalidParameter, []string{"Stream"}},
		{"nested wrong type", "POST", "ListSessionMessages", `{"SessionId":"s","IncludeReasoning":1}`, nil, 400, actions.CodeInvalidParameter, []string{"IncludeReasoning"}},
		{"bad user header", "POST", "ListSessions", `{"AgentId":"echo"}`, []string{"X-AgentEngine-User", "a\x01b"}, 400, actions.CodeInvalidParameter, []string{"X-AgentEngine-User"}},
		{"control char id", "POST", "GetSession", `{"SessionId":"a\u0001b"}`, nil, 400, actions.CodeInvalidParameter, []string{"SessionId"}},
		{"unknown agent", "POST", "ListSessions", `{"AgentId":"nobody"}`, nil, 404, actions.CodeNotFound, []string{"nobody", "echo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			headers := tc.headers
			r := e.do(tc.method, actions.Prefix+tc.action, body, headers...)
			wantError(t, r, tc.status, tc.code, tc.mentions...)
			if tc.status < 500 && r.env["Action"] != tc.action {
				t.Errorf("Action %v, want %s", r.env["Action"], tc.action)
			}
		})
	}
	// None of that stored anything.
	var d struct{ Total int }
	e.must("ListSessions", map[string]any{"AgentId": "echo"}, &d)
	if d.Total != 0 {
		t.Errorf("rejected requests created %d sessions", d.Total)
	}
}

func TestMiddlewareErrorsUseEnvelope(t *testing.T) {
	e := newEnv(t)
	r := e.post("ListSessions", map[string]any{"AgentId": "echo"}, "Origin", "https://evil.example")
	wantError(t, r, http.StatusForbidden, actions.CodeForbidden)
}

// TestLoopbackOrigins: a UI served from its own dev server on this machine
// (http://127.0.0.1:5173, as ksadk-web's is) may call the actions of a server bound to
// loopback; other origins still need to be allowed by name.
func TestLoopbackOrigins(t *testing.T) {
	loopback := newEnv(t, func(o *envOptions) { o.router.LoopbackOrigins = true })
	strict := newEnv(t)
	named := newEnv(t, func(o *envOptions) {
		o.router.LoopbackOrigins = true
		o.router.AllowedOrigins = []string{"https://ui.example"}
	})
	body := map[string]any{"AgentId": "echo"}
	for _, tc := range []struct {
		name   string
		e      *env
		origin string
		status int
	}{
		{"vite dev server", loopback, "http://127.0.0.1:5173", 200},
		{"localhost", loopback, "http://localhost:3000", 200},
		{"ipv6 loopback", loopback, "http://[::1]:5173", 200},
		{"https localhost", loopback, "https://localhost", 200},
		{"other site", loopback, "https://evil.example", 403},
		{"loopback look-alike", loopback, "http://127.0.0.1.evil.example", 403},
		{"opaque origin", loopback, "null", 403},
		{"not bound to loopback", strict, "http://127.0.0.1:5173", 403},
		{"allowed by name", named, "https://ui.example", 200},
		{"not named", named, "https://other.example", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.e.post("ListSessions", body, "Origin", tc.origin)
			if tc.status != 200 {
				wantError(t, r, tc.status, actions.CodeForbidden, "")
				return
			}
			if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != tc.origin {
				t.Errorf("%d %s, Access-Control-Allow-Origin %q", r.status, r.raw, r.header.Get("Access-Control-Allow-Origin"))
			}
		})
	}
	// The preflight of a POST with a JSON body is answered too.
	pre := loopback.do("OPTIONS", actions.Prefix+"RunAgent", nil, "Origin", "http://127.0.0.1:5173", "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "content-type")
	if pre.status != 204 || pre.header.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:5173" {
		t.Errorf("preflight %d %v", pre.status, pre.header)
	}
}
