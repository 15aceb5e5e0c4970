package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/caller"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/apitest"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/internal/testutil"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

// env is a real runtime (memory store, in-process echo runner) behind this surface.
type env struct {
	t   *testing.T
	rt  *host.Runtime
	srv *httptest.Server
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	client, stop := inprocess.Serve(echoagent.New())
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{
		{Name: "echo", Framework: "go", Runner: client},
		{Name: "echo2", Framework: "go", Runner: client},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg.Runtime = rt
	h := New(cfg)
	r := gin.New()
	r.Use(trustUserHeader)
	h.Register(r)
	srv := apitest.Serve(t, r, rt, stop)
	return &env{t: t, rt: rt, srv: srv}
}

// trustUserHeader binds a request with the HeaderUser header to that user, as the router
// does when it trusts the header (api.Config.UserHeader).
func trustUserHeader(c *gin.Context) {
	if u := c.GetHeader(HeaderUser); u != "" {
		c.Request = c.Request.WithContext(caller.With(c.Request.Context(), caller.Identity{User: u, Bound: true}))
	}
	c.Next()
}

// do sends a request; headers are name, value pairs.
func (e *env) do(method, path, body string, headers ...string) (int, http.Header, []byte) {
	e.t.Helper()
	return apitest.Do(e.t, e.srv.URL, method, path, body, headers...)
}

// json sends a request and decodes a JSON object answer, failing on another status.
func (e *env) json(method, path, body string, want int, headers ...string) map[string]any {
	e.t.Helper()
	status, h, b := e.do(method, path, body, headers...)
	if status != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, b)
	}
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		e.t.Fatalf("%s %s: content type %q", method, path, ct)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		e.t.Fatalf("%s %s: %v: %s", method, path, err, b)
	}
	return m
}

// apiErr asserts an OpenAI error envelope and returns its error object.
func (e *env) apiErr(method, path, body string, status int, code string, headers ...string) map[string]any {
	e.t.Helper()
	m := e.json(method, path, body, status, headers...)
	obj, ok := m["error"].(map[string]any)
	if !ok {
		e.t.Fatalf("no error object: %v", m)
	}
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := obj[k]; !ok {
			e.t.Errorf("error object lacks %s: %v", k, obj)
		}
	}
	if obj["code"] != code {
		e.t.Errorf("%s %s: code %v (%v), want %s", method, path, obj["code"], obj["message"], code)
	}
	return obj
}

func (e *env) stream(path, body string, headers ...string) []wireEvent {
	e.t.Helper()
	status, h, b := e.do(http.MethodPost, path, body, headers...)
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		e.t.Fatalf("stream %s: %d %s: %s", path, status, h.Get("Content-Type"), b)
	}
	return parseSSE(e.t, b)
}

// sessionSeq is the last event seq of a session, to check a rejected request stored
// nothing.
func (e *env) sessionSeq(user, id string) int64 {
	e.t.Helper()
	if user == "" {
		user = e.rt.DefaultUser()
	}
	s, err := e.rt.Session(context.Background(), session.Key{App: "echo", User: user, ID: id})
	if err != nil {
		e.t.Fatal(err)
	}
	return s.LastSeq
}

// waitStatus polls GET /v1/responses/{id} until the status differs from in_progress.
func (e *env) waitStatus(id string, headers ...string) map[string]any {
	e.t.Helper()
	var r map[string]any
	testutil.Eventually(e.t, 10*time.Second, func() error {
		r = e.json(http.MethodGet, "/v1/responses/"+id, "", http.StatusOK, headers...)
		if r["status"] == "in_progress" {
			return fmt.Errorf("response %s still in progress", id)
		}
		return nil
	})
	return r
}

func outputTypes(r map[string]any) []string {
	var out []string
	for _, o := range r["output"].([]any) {
		out = append(out, str(o.(map[string]any)["type"]))
	}
	return out
}

func outputItem(r map[string]any, typ string) map[string]any {
	for _, o := range r["output"].([]any) {
		if m := o.(map[string]any); m["type"] == typ {
			return m
		}
	}
	return nil
}

func sessionKey(e *env, id string) session.Key {
	return session.Key{App: "echo", User: e.rt.DefaultUser(), ID: id}
}

// indentRaw indents a JSON body keeping its field order (the wire order).
func indentRaw(t *testing.T, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return append(bytes.TrimSpace(b.Bytes()), '\n')
}
