package actions_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/api/actions"
	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

// env is the whole stack in-process: the echo agent over real gRPC, the memory store,
// the runtime and the router with this surface mounted.
type env struct {
	t      testing.TB
	rt     *host.Runtime
	store  session.Store
	router http.Handler
	srv    *httptest.Server
}

type envOptions struct {
	agents    []string // names of echo agents (default: one, "echo")
	cfg       actions.Config
	retention time.Duration
	maxBody   int64
	store     session.Store // default: a memory store
	compact   host.CompactionPolicy
	runner    pluginsdk.Runner            // default: a new echo agent per name
	runners   map[string]pluginsdk.Runner // an agent's own runner, over runner
	router    api.Config                  // router options besides the runtime and surfaces
	tracer    trace.Tracer                // the turns' tracer (nil: untraced)
}

func newEnv(t testing.TB, opts ...func(*envOptions)) *env {
	t.Helper()
	o := envOptions{agents: []string{"echo"}}
	for _, f := range opts {
		f(&o)
	}
	var agents []host.Agent
	var stops []func()
	for _, name := range o.agents {
		var r pluginsdk.Runner = echoagent.New()
		if o.runner != nil {
			r = o.runner
		}
		if own, ok := o.runners[name]; ok {
			r = own
		}
		client, stop := inprocess.Serve(r)
		stops = append(stops, stop)
		agents = append(agents, host.Agent{Name: name, Runner: client, Framework: "go", Description: "echo agent " + name})
	}
	var store session.Store = memory.New()
	if o.store != nil {
		store = o.store
	}
	rt, err := host.New(host.Config{Store: store, Agents: agents, Retention: o.retention, Compaction: o.compact,
		Tracer: o.tracer, StoreBackend: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	o.cfg.Runtime = rt
	if o.cfg.SessionBackend == "" {
		o.cfg.SessionBackend = "memory"
	}
	surface, err := actions.New(o.cfg)
	if err != nil {
		t.Fatal(err)
	}
	rc := o.router
	rc.Runtime, rc.Surfaces, rc.MaxBodyBytes = rt, []api.Surface{openai.New(openai.Config{Runtime: rt}), surface}, o.maxBody
	if rc.UserHeader == "" {
		rc.UserHeader = "X-AgentEngine-User" // trusted, as behind a reverse proxy: the tests act as several users
	}
	router := api.NewRouter(rc)
	e := &env{t: t, store: store, rt: rt, router: router}
	e.srv = httptest.NewServer(router)
	t.Cleanup(func() {
		e.srv.CloseClientConnections()
		e.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Close(ctx)
		for _, stop := range stops {
			stop()
		}
	})
	return e
}

// reply is an action's answer.
type reply struct {
	status int
	header http.Header
	raw    []byte
	env    map[string]any
}

// data returns Data re-decoded into v.
func (r reply) data(t testing.TB, v any) {
	t.Helper()
	b, err := json.Marshal(r.env["Data"])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("Data %s: %v", b, err)
	}
}

func (r reply) message() string { s, _ := r.env["Message"].(string); return s }

// do sends a request through the router (no network), body marshalled unless it is a
// string.
func (e *env) do(method, path string, body any, headers ...string) reply {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Host = "127.0.0.1:8080"
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	e.router.ServeHTTP(w, req)
	r := reply{status: w.Code, header: w.Header(), raw: w.Body.Bytes()}
	if strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(r.raw, &r.env); err != nil {
			e.t.Fatalf("%s %s: body is not JSON: %s", method, path, r.raw)
		}
	}
	return r
}

// post calls an action.
func (e *env) post(action string, body any, headers ...string) reply {
	e.t.Helper()
	return e.do(http.MethodPost, actions.Prefix+action, body, headers...)
}

// must calls an action that must succeed and decodes its Data into v (if not nil).
func (e *env) must(action string, body any, v any, headers ...string) reply {
	e.t.Helper()
	r := e.post(action, body, headers...)
	if r.status != http.StatusOK || r.env["Code"] != float64(0) {
		e.t.Fatalf("%s: %d %s", action, r.status, r.raw)
	}
	if v != nil {
		r.data(e.t, v)
	}
	return r
}

var requestIDRe = regexp.MustCompile(`^req-[0-9a-f]{12}$`)

// wantError checks an error envelope: status, code, a message containing each of
// contains, and the envelope's invariants.
func wantError(t testing.TB, r reply, status int, code string, contains ...string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	if r.env == nil {
		t.Fatalf("error is not a JSON envelope: %s", r.raw)
	}
	if got := r.env["Code"]; got != code {
		t.Errorf("Code %v, want %q (%s)", got, code, r.raw)
	}
	msg := r.message()
	if msg == "" || r.env["detail"] != msg {
		t.Errorf("Message %q and detail %v must be the same non-empty text", msg, r.env["detail"])
	}
	for _, c := range contains {
		if !strings.Contains(msg, c) {
			t.Errorf("Message %q does not mention %q", msg, c)
		}
	}
	if d, ok := r.env["Data"]; !ok || d != nil {
		t.Errorf("Data = %v, want null", d)
	}
	id, _ := r.env["RequestId"].(string)
	if !requestIDRe.MatchString(id) {
		t.Errorf("RequestId %q", id)
	}
	if _, ok := r.env["Action"].(string); !ok {
		t.Errorf("no Action in %s", r.raw)
	}
}

// sessionData is CreateSession/GetSession's Data.
type sessionData struct {
	Session sessionRow
}

type sessionRow struct {
	SessionId, AgentId, UserId, Title, FirstPrompt, LastPrompt string
	ActiveInvocationId, ActiveRunStatus                        string
	LatestSeqId                                                int64
	CreatedAt, UpdatedAt                                       float64
}

func (e *env) createSession(body map[string]any) sessionRow {
	e.t.Helper()
	var d sessionData
	e.must("CreateSession", body, &d)
	return d.Session
}

// runData is the part of a Responses object tests read.
type runData struct {
	ID         string `json:"id"`
	Object     string `json:"object"`
	Status     string `json:"status"`
	OutputText string `json:"output_text"`
	SessionID  string `json:"session_id"`
	Output     []struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	} `json:"output"`
}

// run runs a non-stream turn and returns its Responses object.
func (e *env) run(body map[string]any, headers ...string) runData {
	e.t.Helper()
	if body["Messages"] == nil && body["ResponsesInput"] == nil {
		e.t.Fatal("run needs input")
	}
	var d runData
	e.must("RunAgent", body, &d, headers...)
	return d
}

func userMessages(text string) []map[string]any {
	return []map[string]any{{"role": "user", "content": []map[string]any{{"type": "input_text", "text": text}}}}
}

// events lists a session's stored events with ListSessionEvents.
func (e *env) events(sessionID string, extra ...any) []eventRow {
	e.t.Helper()
	body := map[string]any{"SessionId": sessionID, "Limit": 2000}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	var d struct{ Events []eventRow }
	e.must("ListSessionEvents", body, &d)
	return d.Events
}

type eventRow struct {
	EventId, SessionId, Author, EventType, InvocationId string
	SeqId                                               int64
	Timestamp                                           float64
	Content                                             json.RawMessage
	Metadata                                            map[string]any
}

func (ev eventRow) status() string {
	var c struct{ Status string }
	_ = json.Unmarshal(ev.Content, &c)
	return c.Status
}

func (ev eventRow) text() string {
	var c struct {
		Parts []struct{ Text string }
	}
	_ = json.Unmarshal(ev.Content, &c)
	var b strings.Builder
	for _, p := range c.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func types(evs []eventRow) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.EventType
	}
	return out
}

// sseFrame is one Server-Sent Event as a client sees it.
type sseFrame struct {
	id, event, data string
	comment         bool
}

// sseStream reads frames from a live HTTP response.
type sseStream struct {
	resp *http.Response
	rd   *bufio.Reader
}

// open sends a request to the real server and returns the response; streams are read
// with next.
func (e *env) open(ctx context.Context, method, path string, body any, headers ...string) *http.Response {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

func (e *env) stream(ctx context.Context, method, path string, body any, headers ...string) *sseStream {
	e.t.Helper()
	resp := e.open(ctx, method, path, body, headers...)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return &sseStream{resp: resp, rd: bufio.NewReader(resp.Body)}
}

// next returns the next frame, or io.EOF when the server closed the stream.
func (s *sseStream) next() (sseFrame, error) {
	var f sseFrame
	seen := false
	for {
		line, err := s.rd.ReadString('\n')
		if err != nil {
			if seen {
				return f, nil
			}
			return f, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if seen {
				return f, nil
			}
			continue
		}
		seen = true
		switch {
		case strings.HasPrefix(line, ":"):
			f.comment, f.data = true, strings.TrimSpace(line[1:])
		case strings.HasPrefix(line, "id: "):
			f.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			f.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			f.data = line[6:]
		}
	}
}

// all reads frames until the server closes the stream.
func (s *sseStream) all(t testing.TB) []sseFrame {
	t.Helper()
	var out []sseFrame
	for {
		f, err := s.next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
}

func (s *sseStream) close() { s.resp.Body.Close() }

// subscribePath builds a SubscribeRunEvents URL.
func subscribePath(sessionID, invocationID string, extra ...string) string {
	q := "SessionId=" + sessionID + "&InvocationId=" + invocationID
	for i := 0; i+1 < len(extra); i += 2 {
		q += "&" + extra[i] + "=" + extra[i+1]
	}
	return actions.Prefix + "SubscribeRunEvents?" + q
}

// storedEvent decodes a stored frame's data.
func storedEvent(t testing.TB, f sseFrame) eventRow {
	t.Helper()
	var ev eventRow
	if err := json.Unmarshal([]byte(f.data), &ev); err != nil {
		t.Fatalf("frame data %q: %v", f.data, err)
	}
	return ev
}

func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// slow is model options that make the echo agent's reply take about n*ms.
func slow(n, ms int) map[string]any { return map[string]any{"deltas": n, "delay_ms": ms} }

// sessionKey is the key of the default user's session of the echo agent.
func sessionKey(id string) session.Key { return session.Key{App: "echo", User: "user", ID: id} }

// countingStore counts the store reads that follow a session's log or rows, to prove
// which actions never read event logs and that subscriptions do not poll.
type countingStore struct {
	session.Store
	events, sessions atomic.Int64
}

func (s *countingStore) Events(ctx context.Context, key session.Key, q session.EventQuery) ([]session.Event, error) {
	s.events.Add(1)
	return s.Store.Events(ctx, key, q)
}

func (s *countingStore) GetSession(ctx context.Context, key session.Key) (session.Session, error) {
	s.sessions.Add(1)
	return s.Store.GetSession(ctx, key)
}

func (s *countingStore) GetRun(ctx context.Context, key session.Key, inv string) (session.Run, error) {
	s.sessions.Add(1)
	return s.Store.GetRun(ctx, key, inv)
}

func (s *countingStore) reads() int64 { return s.events.Load() + s.sessions.Load() }
