package langgraph

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

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

// userHeader is the trusted user header the tests' router is configured with, so that
// tests act as several users.
const userHeader = "X-AgentEngine-User"

// env is the real router (the OpenAI surface first, then this one) over a runtime with a
// memory store. The echo agent (internal/echoagent) is served in-process as two
// assistants: "echo" answers at once, "slow" streams a long answer slowly (to cancel it);
// "other" is a Go agent, which is no assistant.
type env struct {
	t   *testing.T
	rt  *host.Runtime
	url string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	fast, stopFast := inprocess.Serve(echoagent.New())
	slow, stopSlow := inprocess.Serve(echoagent.NewWithOptions(echoagent.Options{Delay: 20 * time.Millisecond, Deltas: 2000}))
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{
		{Name: "echo", Framework: "langgraph", Runner: fast, Description: "echoes"},
		{Name: "slow", Framework: "langgraph", Runner: slow},
		{Name: "other", Framework: "go", Runner: fast},
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := api.NewRouter(api.Config{Runtime: rt, UserHeader: userHeader, Surfaces: []api.Surface{
		openai.New(openai.Config{Runtime: rt}), New(Config{Runtime: rt, Version: "test", KeepAlive: time.Second}),
	}})
	srv := apitest.Serve(t, r, rt, func() { stopFast(); stopSlow() })
	return &env{t: t, rt: rt, url: srv.URL}
}

func (e *env) do(method, path, body string, headers ...string) (int, http.Header, []byte) {
	e.t.Helper()
	return apitest.Do(e.t, e.url, method, path, body, headers...)
}

// json sends a request and decodes the JSON answer, failing on another status.
func (e *env) json(method, path, body string, want int, headers ...string) any {
	e.t.Helper()
	status, h, b := e.do(method, path, body, headers...)
	if status != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, b)
	}
	if want == http.StatusNoContent {
		return nil
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

func (e *env) list(method, path, body string, want int, headers ...string) []any {
	e.t.Helper()
	l, ok := e.json(method, path, body, want, headers...).([]any)
	if !ok {
		e.t.Fatalf("%s %s: not a list", method, path)
	}
	return l
}

// fail checks an error answer: the status and LangGraph's {"detail": text} shape.
func (e *env) fail(method, path, body string, want int, contains string, headers ...string) {
	e.t.Helper()
	m := e.obj(method, path, body, want, headers...)
	d, ok := m["detail"].(string)
	if !ok || len(m) != 1 {
		e.t.Fatalf("%s %s: error is not {\"detail\": text}: %v", method, path, m)
	}
	if !strings.Contains(d, contains) {
		e.t.Fatalf("%s %s: detail %q does not say %q", method, path, d, contains)
	}
}

func (e *env) thread(body string, headers ...string) string {
	e.t.Helper()
	return str(e.obj("POST", "/threads", body, http.StatusOK, headers...)["thread_id"])
}

// sseEvent is one parsed SSE event.
type sseEvent struct {
	ID, Event string
	Data      any
}

// stream posts a run stream request (or GETs a join) and returns its events, checking
// the SSE framing: id/event/data lines, one JSON document per data line.
func (e *env) stream(method, path, body string, headers ...string) (http.Header, []sseEvent) {
	e.t.Helper()
	status, h, b := e.do(method, path, body, headers...)
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		e.t.Fatalf("%s %s: %d %s: %s", method, path, status, h.Get("Content-Type"), b)
	}
	return h, parseSSE(e.t, b)
}

func parseSSE(t *testing.T, b []byte) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Event != "" || cur.Data != nil {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, ": "):
		case strings.HasPrefix(line, "id: "):
			cur.ID = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.Event = line[7:]
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[6:]), &cur.Data); err != nil {
				t.Fatalf("data line is not JSON: %q", line)
			}
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return out
}

func names(evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Event)
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

func runBody(assistant, text string, extra ...string) string {
	b := `{"assistant_id":"` + assistant + `","input":{"messages":[{"role":"user","content":` + quote(text) + `}]}`
	for _, x := range extra {
		b += "," + x
	}
	return b + "}"
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// messages returns values.messages as (type, content) pairs.
func messages(t *testing.T, values any) [][2]string {
	t.Helper()
	v, ok := values.(map[string]any)
	if !ok {
		t.Fatalf("values is not an object: %v", values)
	}
	list, _ := v["messages"].([]any)
	var out [][2]string
	for _, m := range list {
		mm := m.(map[string]any)
		c, _ := mm["content"].(string)
		out = append(out, [2]string{str(mm["type"]), c})
	}
	return out
}

// waitStatus polls the thread until it has the status (runs end asynchronously).
func (e *env) waitStatus(tid, status string, headers ...string) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		th := e.obj("GET", "/threads/"+tid, "", http.StatusOK, headers...)
		if th["status"] == status {
			return th
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("thread %s: status %v, want %s", tid, th["status"], status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *env) waitBriefly() { time.Sleep(10 * time.Millisecond) }

func sessionsQuery() session.ListQuery { return session.ListQuery{Limit: 10} }
