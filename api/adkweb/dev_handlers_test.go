package adkweb

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"google.golang.org/grpc"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/apitest"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session/memory"
)

// TestDevRoutes: every dev route ADK's dev UI calls answers in ADK's shape, at google-adk
// 2.x's paths and the earlier ones; an unknown app is ADK's 404 and bad input ADK's 4xx.
func TestDevRoutes(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		method, path, body string
		headers            []string
		status             int
		want               string // the JSON answer (compared as values), or for errors the detail's start
	}{
		{"GET", "/config/telemetry", "", nil, 200, `{"telemetry":false}`},
		{"POST", "/config/telemetry", `{"telemetry":true}`, nil, 400, "Forbidden: missing required security header"},
		{"POST", "/config/telemetry", `{"telemetry":true}`, []string{"X-ADK-Telemetry-Request", "true"}, 400, noTelemetry},

		{"GET", "/dev/apps/echo/build_graph", "", nil, 200, `{"name":"echo","root_agent":{"name":"echo","description":""}}`},
		{"GET", "/dev/build_graph/echo", "", nil, 200, `{"name":"echo","root_agent":{"name":"echo","description":""}}`},
		{"GET", "/dev/apps/echo/build_graph_image?dark_mode=true", "", nil, 200, `{}`},
		{"GET", "/dev/apps/echo/build_graph_image?dark_mode=false&node=sub", "", nil, 200, `{}`},
		{"GET", "/dev/build_graph_image/echo?dark_mode=false", "", nil, 200, `{"dotSrc":""}`},
		{"GET", "/dev/apps/echo/build_graph_image?dark_mode=maybe", "", nil, 422, ""},
		{"GET", "/dev/apps/nope/build_graph", "", nil, 404, "App not found"},
		{"GET", "/dev/apps/nope/build_graph_image", "", nil, 404, "App not found"},

		{"GET", "/dev/apps/echo/eval_sets", "", nil, 200, `[]`},
		{"GET", "/dev/apps/echo/eval-sets", "", nil, 200, `{"evalSetIds":[]}`},
		{"GET", "/dev/apps/echo/eval_results", "", nil, 200, `[]`},
		{"GET", "/dev/apps/echo/eval-results", "", nil, 200, `{"evalResultIds":[]}`},
		{"GET", "/dev/apps/echo/metrics-info", "", nil, 200, `{"metricsInfo":[]}`},
		{"GET", "/apps/echo/eval_sets", "", nil, 200, `[]`},
		{"GET", "/apps/echo/eval_results", "", nil, 200, `[]`},
		{"GET", "/apps/echo/eval-sets", "", nil, 200, `{"evalSetIds":[]}`},
		{"GET", "/dev/apps/nope/eval_sets", "", nil, 404, "App not found"},

		{"GET", "/dev/apps/echo/builder", "", nil, 200, ""},
		{"GET", "/builder/app/echo", "", nil, 200, ""},
		{"GET", "/dev/apps/nope/builder", "", nil, 404, "App not found"},

		{"GET", "/run_live?app_name=echo&user_id=u&session_id=s", "", nil, 400, noLive},

		{"GET", "/dev/apps/echo/users/u/sessions/s/events/e/graph", "", nil, 200, `{}`},
		{"GET", "/apps/echo/users/u/sessions/s/events/e/graph", "", nil, 200, `{}`},
		{"GET", "/dev/apps/echo/graph?dark_mode=true", "", nil, 200, `{}`},
		{"GET", "/dev/apps/nope/graph", "", nil, 404, "App not found"},
		{"GET", "/dev/apps/echo/tests", "", nil, 200, `[]`},
		{"GET", "/dev/apps/echo/deploy/defaults", "", nil, 501, noDeploy},
		{"POST", "/dev/apps/echo/deploy/cloud_run", `{}`, nil, 501, noDeploy},
	}
	for _, tc := range tests {
		status, h, b := e.do(tc.method, tc.path, tc.body, tc.headers...)
		if status != tc.status {
			t.Errorf("%s %s: %d, want %d: %s", tc.method, tc.path, status, tc.status, b)
			continue
		}
		if status == http.StatusOK && (strings.HasSuffix(tc.path, "/builder") || strings.HasPrefix(tc.path, "/builder/")) {
			if len(b) != 0 || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
				t.Errorf("%s: %q %q, want an empty text", tc.path, h.Get("Content-Type"), b)
			}
			continue
		}
		if !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
			t.Errorf("%s %s: content type %q", tc.method, tc.path, h.Get("Content-Type"))
			continue
		}
		if status >= 400 {
			var d struct {
				Detail json.RawMessage `json:"detail"`
			}
			if err := json.Unmarshal(b, &d); err != nil || len(d.Detail) == 0 {
				t.Errorf("%s %s: not FastAPI's error shape: %s", tc.method, tc.path, b)
				continue
			}
			var msg string
			if json.Unmarshal(d.Detail, &msg) == nil && !strings.HasPrefix(msg, tc.want) {
				t.Errorf("%s %s: detail %q, want %q", tc.method, tc.path, msg, tc.want)
			}
			continue
		}
		var got, want any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		_ = json.Unmarshal([]byte(tc.want), &want)
		if gj, wj := mustJSON(got), mustJSON(want); string(gj) != string(wj) {
			t.Errorf("%s %s = %s, want %s", tc.method, tc.path, gj, wj)
		}
	}
}

// TestRunLiveIsRefusedOverTheWebSocket: the UI's live WebSocket is accepted and closed
// with the reason, which the UI shows.
func TestRunLiveIsRefusedOverTheWebSocket(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.srv.URL, "http")+"/run_live?app_name=echo&user_id=u&session_id=s&modalities=AUDIO", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ws.CloseNow() }()
	_, _, err = ws.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusUnsupportedData || ce.Reason != noLive {
		t.Fatalf("read = %v, want a close with %q", err, noLive)
	}
}

// TestDevRoutesAreOwned: errors on the dev paths (a refused method) are ADK's shape.
func TestDevRoutesAreOwned(t *testing.T) {
	h := New(Config{Runtime: newEnv(t).rt})
	for path, want := range map[string]bool{"/config/telemetry": true, "/run_live": true, "/dev/apps/a/build_graph": true,
		"/dev/build_graph/a": true, "/builder/app/a": true, "/dev-ui/": false, "/v1/models": false} {
		if got := h.Owns(path); got != want {
			t.Errorf("Owns(%q) = %v, want %v", path, got, want)
		}
	}
	status, _, b := newEnv(t).do("DELETE", "/config/telemetry", "")
	if status != http.StatusMethodNotAllowed || !strings.Contains(string(b), `"detail"`) {
		t.Errorf("DELETE /config/telemetry = %d %s", status, b)
	}
}

// nativeRunner is a runner that answers host.NativeCall with a native description, as
// the ADK bridge does, and counts the calls.
type nativeRunner struct {
	runnerv1.RunnerClient
	native string
	calls  *atomic.Int32
}

func (n nativeRunner) Call(ctx context.Context, in *runnerv1.CallRequest, opts ...grpc.CallOption) (*runnerv1.CallResponse, error) {
	if in.GetMethod() != host.NativeCall {
		return n.RunnerClient.Call(ctx, in, opts...)
	}
	n.calls.Add(1)
	return &runnerv1.CallResponse{Json: []byte(n.native)}, nil
}

// TestGraphRoutesServeTheRunnersGraphs: build_graph and build_graph_image answer what the
// runner computed from the loaded agent (app info, DOT per node and mode).
func TestGraphRoutesServeTheRunnersGraphs(t *testing.T) {
	client, stop := inprocess.Serve(echoagent.New())
	t.Cleanup(stop)
	native := `{"app_info":{"name":"assistant","root_agent":{"name":"assistant","sub_agents":[{"name":"helper"}]}},
		"graphs":{"light":{"":{"":{"dotSrc":"digraph {a}"}},"helper":{"helper":{"dotSrc":"digraph {h}"}}},
		          "dark":{"":{"":{"dotSrc":"digraph {A}"}},"helper":{"helper":{"dotSrc":"digraph {H}"}}}}}`
	var calls atomic.Int32
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "adk", Framework: "adk", Runner: nativeRunner{client, native, &calls}}}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, rt: rt, srv: apitest.Serve(t, api.NewRouter(api.Config{Runtime: rt, Surfaces: []api.Surface{New(Config{Runtime: rt})}}), rt, func() {})}
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/dev/apps/adk/build_graph", 200, `{"name":"assistant","root_agent":{"name":"assistant","sub_agents":[{"name":"helper"}]}}`},
		{"/dev/build_graph/adk", 200, `{"name":"assistant","root_agent":{"name":"assistant","sub_agents":[{"name":"helper"}]}}`},
		{"/dev/apps/adk/build_graph_image?dark_mode=false", 200, `{"":{"dotSrc":"digraph {a}"}}`},
		{"/dev/apps/adk/build_graph_image?dark_mode=true", 200, `{"":{"dotSrc":"digraph {A}"}}`},
		{"/dev/apps/adk/build_graph_image?dark_mode=true&node=helper", 200, `{"helper":{"dotSrc":"digraph {H}"}}`},
		// The path of the UI bundled with google-adk 1.x: both shapes that UI reads.
		{"/dev/build_graph_image/adk?dark_mode=true", 200, `{"":{"dotSrc":"digraph {A}"},"dotSrc":"digraph {A}"}`},
		{"/dev/build_graph_image/adk?dark_mode=false&node=helper", 200, `{"helper":{"dotSrc":"digraph {h}"},"dotSrc":"digraph {h}"}`},
		{"/dev/build_graph_image/adk?dark_mode=maybe", 422, `{"detail":[{"type":"bool_parsing","loc":["query","dark_mode"],"msg":"Input should be a valid boolean, unable to interpret input"}]}`},
		// An event of a session that does not exist has no graph (the runner draws an
		// existing event's: TestAgentGraphDrawnByTheRunner).
		{"/apps/adk/users/u/sessions/s/events/e/graph", 200, `{}`},
		{"/dev/apps/adk/users/u/sessions/s/events/e/graph", 200, `{}`},
		{"/dev/apps/adk/build_graph_image?node=nobody", 404, `{"detail":"Node not found: nobody"}`},
	} {
		status, _, b := e.do("GET", tc.path, "")
		var got, want any
		_ = json.Unmarshal(b, &got)
		_ = json.Unmarshal([]byte(tc.want), &want)
		if status != tc.status || string(mustJSON(got)) != string(mustJSON(want)) {
			t.Errorf("GET %s = %d %s, want %d %s", tc.path, status, b, tc.status, tc.want)
		}
	}
	// The runner draws once; the host keeps the drawing until the agent reloads.
	if n := calls.Load(); n != 1 {
		t.Errorf("the runner was asked for its native description %d times, want once", n)
	}
}
