package a2a_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/api/a2a"
	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/host/attach"
	"github.com/agentengine/agentengine/internal/apitest"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session/memory"
)

// pushRetries: a webhook failing twice is still notified.
var pushRetries = 2

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

// env is the real router (the OpenAI surface, then this one) over a runtime with a
// memory store, an upload store and the echo agent served in-process as "echo" and
// "echo2".
type env struct {
	t    *testing.T
	rt   *host.Runtime
	base string
	// headers are sent with every request (name, value pairs).
	headers []string
}

type envOptions struct {
	// keys is a tokens file's content ("KEY USER" lines): the server then requires keys.
	keys      string
	publicURL string
	// pushAllowPrivate lets webhooks be loopback addresses (the tests' receivers).
	pushAllowPrivate bool
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	dir := t.TempDir()
	uploads, err := attach.New(attach.Config{Dir: filepath.Join(dir, "files"), LookPath: func(string) (string, error) { return "", os.ErrNotExist }})
	if err != nil {
		t.Fatal(err)
	}
	client, stop := inprocess.Serve(echoagent.New())
	rt, err := host.New(host.Config{Store: memory.New(), Attachments: uploads.ForHost(), Agents: []host.Agent{
		{Name: "echo", Description: "Echoes what it is told.", Framework: "go", Runner: client},
		{Name: "echo2", Framework: "go", Runner: client},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := api.Config{Runtime: rt, UserHeader: "X-AgentEngine-User"}
	if o.keys != "" {
		path := filepath.Join(dir, "tokens")
		if err := os.WriteFile(path, []byte(o.keys), 0o600); err != nil {
			t.Fatal(err)
		}
		if cfg.Tokens, err = api.LoadTokens(path, nil); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Surfaces = []api.Surface{openai.New(openai.Config{Runtime: rt}),
		a2a.New(a2a.Config{Runtime: rt, PublicURL: o.publicURL, Bearer: o.keys != "", Version: "test",
			PushAllowPrivate: o.pushAllowPrivate, PushRetries: &pushRetries})}
	srv := apitest.Serve(t, api.NewRouter(cfg), rt, stop)
	return &env{t: t, rt: rt, base: srv.URL}
}

// as returns a copy of the env that sends these headers.
func (e *env) as(headers ...string) *env {
	c := *e
	c.headers = headers
	return &c
}

func (e *env) do(method, path, body string) (int, http.Header, []byte) {
	e.t.Helper()
	return apitest.Do(e.t, e.base, method, path, body, e.headers...)
}

// rpcResp is a JSON-RPC response.
type rpcResp struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
}

// call sends a JSON-RPC request to agent and returns the response (HTTP 200 expected).
func (e *env) call(agent, method string, params any) rpcResp {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	status, _, b := e.do("POST", "/a2a/"+agent, string(body))
	if status != http.StatusOK {
		e.t.Fatalf("%s: status %d: %s", method, status, b)
	}
	var r rpcResp
	if err := json.Unmarshal(b, &r); err != nil {
		e.t.Fatalf("%s: %v: %s", method, err, b)
	}
	if r.JSONRPC != "2.0" || r.ID != float64(7) {
		e.t.Fatalf("%s: not a JSON-RPC response to id 7: %s", method, b)
	}
	return r
}

// result calls and decodes a successful result into a map.
func (e *env) result(agent, method string, params any) map[string]any {
	e.t.Helper()
	r := e.call(agent, method, params)
	if r.Error != nil {
		e.t.Fatalf("%s: error %d %s %v", method, r.Error.Code, r.Error.Message, r.Error.Data)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Result, &m); err != nil {
		e.t.Fatal(err)
	}
	return m
}

// rpcErr calls and returns the error code and its detail, failing on success.
func (e *env) rpcErr(agent, method string, params any) (int, string) {
	e.t.Helper()
	r := e.call(agent, method, params)
	if r.Error == nil {
		e.t.Fatalf("%s: succeeded, want an error: %s", method, r.Result)
	}
	detail, _ := r.Error.Data["error"].(string)
	return r.Error.Code, detail
}

// stream posts a streaming method and returns its events (the results of the SSE data
// lines); read, when set, stops reading after that many events (a dropped stream).
func (e *env) stream(ctx context.Context, agent, method string, params any, read int) []map[string]any {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, "POST", e.base+"/a2a/"+agent, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(e.headers); i += 2 {
		req.Header.Set(e.headers[i], e.headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		e.t.Fatalf("%s: %d %s", method, resp.StatusCode, ct)
	}
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			e.t.Fatalf("%s: bad event %v: %s", method, err, line)
		}
		if r["error"] != nil {
			out = append(out, map[string]any{"error": r["error"]})
		} else {
			out = append(out, r["result"].(map[string]any))
		}
		if read > 0 && len(out) == read {
			break
		}
	}
	return out
}

// msg is message/send params of a user message with these parts.
func msg(parts ...any) map[string]any {
	return map[string]any{"message": map[string]any{"kind": "message", "role": "user", "messageId": "m-" + host.NewID(""), "parts": parts}}
}

func text(s string) map[string]any { return map[string]any{"kind": "text", "text": s} }

func data(d map[string]any) map[string]any { return map[string]any{"kind": "data", "data": d} }

// with sets message fields (taskId, contextId, metadata) of msg params.
func with(p map[string]any, kv ...any) map[string]any {
	m := p["message"].(map[string]any)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return p
}

// slow makes the echo agent pause before each of many deltas.
func slow(p map[string]any) map[string]any {
	p["metadata"] = map[string]any{"agentengine": map[string]any{"model_options": map[string]any{"delay_ms": 20, "deltas": 200}}}
	return p
}

func str(v any) string { s, _ := v.(string); return s }

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

func list(v any) []any { l, _ := v.([]any); return l }

func state(task map[string]any) string { return str(obj(task["status"])["state"]) }

// artifactText is the text of a task's artifacts, joined.
func artifactText(task map[string]any) string {
	var b strings.Builder
	for _, a := range list(task["artifacts"]) {
		for _, p := range list(obj(a)["parts"]) {
			b.WriteString(str(obj(p)["text"]))
		}
	}
	return b.String()
}

// partsOf returns the parts of kind of a message.
func partsOf(m map[string]any, kind string) []map[string]any {
	var out []map[string]any
	for _, p := range list(m["parts"]) {
		if str(obj(p)["kind"]) == kind {
			out = append(out, obj(p))
		}
	}
	return out
}
