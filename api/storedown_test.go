package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/api/actions"
	"github.com/agentengine/agentengine/api/adkweb"
	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/apitest"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session/memory"
)

// While the session store is unavailable (here: closed, as a database that went away
// is to its callers) a new turn is answered 503 with Retry-After, in each surface's
// error shape, not a generic 500.
func TestStoreDownAnswers503WithRetryAfter(t *testing.T) {
	store := memory.New()
	client, stop := inprocess.Serve(echoagent.New())
	rt, err := host.New(host.Config{Store: store, Agents: []host.Agent{{Name: "echo", Framework: "go", Runner: client}}})
	if err != nil {
		t.Fatal(err)
	}
	ui, err := actions.New(actions.Config{Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	r := api.NewRouter(api.Config{Runtime: rt,
		Surfaces: []api.Surface{openai.New(openai.Config{Runtime: rt}), adkweb.New(adkweb.Config{Runtime: rt}), ui}})
	srv := apitest.Serve(t, r, rt, stop)
	code, _, b := apitest.Do(t, srv.URL, "POST", "/apps/echo/users/u/sessions", `{}`, "Content-Type", "application/json")
	if code != 200 {
		t.Fatalf("create session: %d %s", code, b)
	}
	var s struct{ ID string }
	_ = json.Unmarshal(b, &s)
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, path, body, shape string }{
		{"responses", "/v1/responses", `{"model":"echo","input":"hi"}`, `{"error":{`},
		{"responses stream", "/v1/responses", `{"model":"echo","input":"hi","stream":true}`, `{"error":{`},
		{"chat", "/v1/chat/completions", `{"model":"echo","messages":[{"role":"user","content":"hi"}]}`, `{"error":{`},
		{"adk run", "/run", `{"appName":"echo","userId":"u","sessionId":"` + s.ID + `","newMessage":{"role":"user","parts":[{"text":"hi"}]}}`, `{"detail":"`},
		{"adk run_sse", "/run_sse", `{"appName":"echo","userId":"u","sessionId":"` + s.ID + `","newMessage":{"role":"user","parts":[{"text":"hi"}]}}`, `{"detail":"`},
		{"actions", actions.Prefix + "RunAgent", `{"AgentId":"echo","Messages":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}]}`, `{"Code":"` + actions.CodeUnavailable + `"`},
	} {
		code, h, b := apitest.Do(t, srv.URL, "POST", tt.path, tt.body, "Content-Type", "application/json")
		if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.HasPrefix(string(b), tt.shape) || !strings.Contains(string(b), "session store is unavailable") {
			t.Errorf("%s: %d Retry-After %q %s", tt.name, code, h.Get("Retry-After"), b)
		}
	}
	// The readiness probe says so too.
	if code, _, b := apitest.Do(t, srv.URL, "GET", "/readyz", ""); code != http.StatusServiceUnavailable {
		t.Errorf("readyz: %d %s", code, b)
	}
}
