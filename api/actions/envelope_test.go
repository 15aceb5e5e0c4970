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
