package adkweb

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/apitest"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

// headerUser is the trusted user header the tests' router is configured with.
const headerUser = "X-AgentEngine-User"

// env is the real router (OpenAI surface plus this one) over a runtime with a memory
// store and the echo agent served in-process.
type env struct {
	t   *testing.T
	rt  *host.Runtime
	srv *httptest.Server
}

func newEnv(t *testing.T) *env {
	t.Helper()
	client, stop := inprocess.Serve(echoagent.New())
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{
		{Name: "echo", Framework: "go", Runner: client},
		{Name: "echo2", Framework: "go", Runner: client},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// The user header is trusted, as behind a reverse proxy, so that tests act as several users.
	r := api.NewRouter(api.Config{Runtime: rt, UserHeader: headerUser, Surfaces: []api.Surface{openai.New(openai.Config{Runtime: rt}), New(Config{Runtime: rt, Version: "test"})}})
	srv := apitest.Serve(t, r, rt, stop)
	return &env{t: t, rt: rt, srv: srv}
}

// do sends a request; headers are name, value pairs.
func (e *env) do(method, path, body string, headers ...string) (int, http.Header, []byte) {
	e.t.Helper()
	return apitest.Do(e.t, e.srv.URL, method, path, body, headers...)
}

// json sends a request and decodes the JSON answer, failing on another status.
func (e *env) json(method, path, body string, want int, headers ...string) any {
	e.t.Helper()
	status, h, b := e.do(method, path, body, headers...)
	if status != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, b)
	}
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		e.t.Fatalf("%s %s: content type %q: %s", method, path, ct, b)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		e.t.Fatalf("%s %s: %v: %s", method, path, err, b)
	}
	return v
}

func (e *env) obj(method, path, body string, want int, headers ...string) map[string]any {
	e.t.Helper()
	m, ok := e.json(method, path, body, want, headers...).(map[string]any)
	if !ok {
		e.t.Fatalf("%s %s: not an object", method, path)
	}
	return m
}

// createSession creates a session of app echo and returns its id.
func (e *env) createSession(user, body string) string {
	e.t.Helper()
	s := e.obj("POST", "/apps/echo/users/"+user+"/sessions", body, http.StatusOK)
	return str(s["id"])
}

// runSSE posts to /run_sse and returns the raw stream and its events.
func (e *env) runSSE(body string) ([]byte, []map[string]any) {
	e.t.Helper()
	status, h, b := e.do("POST", "/run_sse", body)
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		e.t.Fatalf("run_sse: %d %s: %s", status, h.Get("Content-Type"), b)
	}
	return b, parseStream(e.t, b)
}

func runBody(user, sid, text string, streaming bool) string {
	b, _ := json.Marshal(map[string]any{"appName": "echo", "userId": user, "sessionId": sid, "streaming": streaming,
		"newMessage": map[string]any{"role": "user", "parts": []any{map[string]any{"text": text}}}})
	return string(b)
}

// parseStream checks ADK's framing (only data: lines, each one JSON object, a blank
// line after each) and returns the events.
func parseStream(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	expectBlank := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case expectBlank:
			if line != "" {
				t.Fatalf("no blank line after an event: %q", line)
			}
			expectBlank = false
		case strings.HasPrefix(line, ": "):
			expectBlank = true
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("event is not a JSON object: %v: %s", err, line)
			}
			out = append(out, m)
			expectBlank = true
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return out
}

// sessionLastSeq is the last event seq of a session (0 if it does not exist), to check
// that a rejected request stored nothing.
func (e *env) sessionLastSeq(user, id string) int64 {
	e.t.Helper()
	s, err := e.rt.Session(context.Background(), session.Key{App: "echo", User: user, ID: id})
	if err != nil {
		return 0
	}
	return s.LastSeq
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// parts returns an event's content parts.
func parts(ev map[string]any) []map[string]any {
	c, _ := ev["content"].(map[string]any)
	ps, _ := c["parts"].([]any)
	out := make([]map[string]any, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.(map[string]any))
	}
	return out
}

// firstPart returns the first part of an event that has key.
func firstPart(evs []map[string]any, key string) (map[string]any, map[string]any) {
	for _, ev := range evs {
		for _, p := range parts(ev) {
			if v, ok := p[key].(map[string]any); ok {
				return ev, v
			}
		}
	}
	return nil, nil
}
