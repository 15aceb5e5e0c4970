package api

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/agentengine/agentengine/api/adkweb"
	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/internal/metrics"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session/memory"
)

// After a known load, /metrics, read with Prometheus's own parser, counts exactly the
// turns, tokens, tool calls and requests sent, and no label carries a user, session or
// any text of the conversation.
func TestMetricsCountTheLoad(t *testing.T) {
	mx := metrics.New()
	client, stop := inprocess.Serve(echoagent.New())
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "echo", Runner: client}},
		Metrics: mx, StoreBackend: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Close(ctx)
		stop()
	})
	const token = "secret-token"
	srv := httptest.NewServer(NewRouter(Config{Runtime: rt, AuthToken: token, Metrics: mx, MetricsRoute: true,
		Surfaces: []Surface{openai.New(openai.Config{Runtime: rt}), adkweb.New(adkweb.Config{Runtime: rt})}}))
	defer srv.Close()

	send := func(method, path, body string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		return resp, []byte(b.String())
	}

	// The load: plain and tool turns on Responses, streamed turns on Chat Completions
	// (with usage in the last chunk), and a request for no route.
	const plain, tools, streamed = 3, 2, 2
	var wantIn, wantOut float64
	usageOf := func(b []byte) {
		var r struct {
			Usage struct {
				InputTokens  float64 `json:"input_tokens"`
				OutputTokens float64 `json:"output_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("response %s: %v", b, err)
		}
		wantIn += r.Usage.InputTokens
		wantOut += r.Usage.OutputTokens
	}
	for i := range plain + tools {
		input := "hello private words number " + string(rune('a'+i))
		if i >= plain {
			input = "use the tool on secret phrase " + string(rune('a'+i))
		}
		resp, b := send("POST", "/v1/responses", `{"model":"echo","input":"`+input+`","user":"alice-the-user"}`)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("responses: %d %s", resp.StatusCode, b)
		}
		usageOf(b)
	}
	for range streamed {
		resp, b := send("POST", "/v1/chat/completions", `{"model":"echo","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"stream me please"}]}`)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("chat: %d %s", resp.StatusCode, b)
		}
		found := false
		for _, line := range strings.Split(string(b), "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || !strings.Contains(data, `"usage":{`) {
				continue
			}
			var c struct {
				Usage struct {
					PromptTokens     float64 `json:"prompt_tokens"`
					CompletionTokens float64 `json:"completion_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal([]byte(data), &c); err != nil {
				t.Fatal(err)
			}
			wantIn += c.Usage.PromptTokens
			wantOut += c.Usage.CompletionTokens
			found = true
		}
		if !found {
			t.Fatalf("no usage chunk in the stream:\n%s", b)
		}
	}
	send("GET", "/v1/nothing-here/sess_123", "")
	if err := rt.Idle(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Behind the API's auth.
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /metrics without the token = %d, want 401", resp.StatusCode)
	}
	resp, body := send("GET", "/metrics", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d %s", resp.StatusCode, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	value := func(name string, labels map[string]string) float64 {
		t.Helper()
		f, ok := families["agentengine_"+name]
		if !ok {
			t.Fatalf("no metric agentengine_%s in\n%s", name, body)
		}
		sum := 0.0
		for _, m := range f.GetMetric() {
			if !matches(m, labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			case m.Histogram != nil:
				sum += float64(m.Histogram.GetSampleCount())
			}
		}
		return sum
	}
	turns := float64(plain + tools + streamed)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"runs_total", map[string]string{"agent": "echo", "status": "completed"}, turns},
		{"runs_total", nil, turns},
		{"runs_in_progress", map[string]string{"agent": "echo"}, 0},
		{"turn_duration_seconds", map[string]string{"agent": "echo", "surface": "responses"}, plain + tools},
		{"turn_duration_seconds", map[string]string{"agent": "echo", "surface": "chat"}, streamed},
		{"time_to_first_token_seconds", map[string]string{"agent": "echo"}, turns},
		{"tokens_total", map[string]string{"agent": "echo", "model": echoagent.Model, "direction": "input"}, wantIn},
		{"tokens_total", map[string]string{"agent": "echo", "model": echoagent.Model, "direction": "output"}, wantOut},
		{"tool_calls_total", map[string]string{"agent": "echo", "tool": "lookup", "status": "ok"}, tools},
		{"tool_calls_total", nil, tools},
		{"http_requests_total", map[string]string{"route": "/v1/responses", "code": "200"}, plain + tools},
		{"http_requests_total", map[string]string{"route": "/v1/chat/completions", "code": "200"}, streamed},
		{"http_requests_total", map[string]string{"route": "unmatched", "code": "404"}, 1},
		{"http_requests_total", map[string]string{"route": "/metrics", "code": "401"}, 1},
		{"stream_subscribers", nil, 0},
	} {
		if got := value(c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if wantIn == 0 || wantOut == 0 {
		t.Fatalf("the load reported no tokens (in %v, out %v)", wantIn, wantOut)
	}
	if n := value("store_write_seconds", map[string]string{"backend": "memory"}); n < turns {
		t.Errorf("store writes observed = %v, want at least one a turn (%v)", n, turns)
	}
	for name, f := range families {
		if !strings.HasPrefix(name, "agentengine_") {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				v := l.GetValue()
				for _, leak := range []string{"alice", "sess", "resp_", "conv", "run_", "hello", "secret", "stream me"} {
					if strings.Contains(v, leak) {
						t.Errorf("%s label %s=%q carries %q", name, l.GetName(), v, leak)
					}
				}
			}
		}
	}
}

func matches(m *dto.Metric, labels map[string]string) bool {
	for k, v := range labels {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == k && l.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// A nil *Metrics records nothing and serves nothing: the router and the runtime run
// without metrics exactly as before.
func TestNoMetricsNoRoute(t *testing.T) {
	w := httptest.NewRecorder()
	newRouter(Config{Runtime: newRuntime(t)}).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/metrics", nil))
	if w.Code != http.StatusNotFound {
		t.Fatalf("GET /metrics without metrics = %d, want 404", w.Code)
	}
}
