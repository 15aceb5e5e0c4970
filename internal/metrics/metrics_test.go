package metrics_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/internal/metrics"
	"github.com/agentengine/agentengine/internal/otlptest"
)

// Every metric the Grafana dashboard in docs/ queries is one this package registers.
func TestDashboardQueriesExistingMetrics(t *testing.T) {
	b, err := os.ReadFile("../../docs/grafana/agentengine.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	m := metrics.New()
	m.RunStarted("a")
	m.RunEnded("a", "responses", "completed", 0)
	m.FirstToken("a", 0)
	m.Tokens("a", "m", 1, 1)
	m.ToolCall("a", "t", metrics.ToolOK)
	started, _, failed := m.Runner("a")
	started()
	failed(metrics.RestartExited)
	m.StoreWrite("memory", 0)
	m.Subscribed()
	m.HTTPRequest("/x", 200)
	families, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range families {
		have[f.GetName()] = true
	}
	name := regexp.MustCompile(`agentengine_[a-z_]+`)
	queried := 0
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for _, n := range name.FindAllString(tg.Expr, -1) {
				queried++
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_count"), "_sum")
				if !have[base] {
					t.Errorf("panel %q queries %s, which is not registered", p.Title, n)
				}
			}
		}
	}
	for n := range have {
		if strings.HasPrefix(n, "agentengine_") && !strings.Contains(string(b), n) {
			t.Errorf("metric %s is on no panel", n)
		}
	}
	if queried == 0 {
		t.Fatal("the dashboard queries nothing")
	}
}

// With an OTLP endpoint in the environment the same metrics are pushed over OTLP too.
func TestMetricsOverOTLP(t *testing.T) {
	recv := &otlptest.Receiver{}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.HTTP(t))
	m := metrics.New()
	m.RunStarted("a")
	m.RunEnded("a", "chat", "completed", time.Second)
	name, shutdown, err := m.ExportOTLP(context.Background(), os.Getenv)
	if err != nil || name != "otlp (http/protobuf)" {
		t.Fatalf("ExportOTLP = %q, %v", name, err)
	}
	if err := shutdown(context.Background()); err != nil { // sends the last reading
		t.Fatal(err)
	}
	for _, n := range []string{"agentengine_runs_total", "agentengine_turn_duration_seconds"} {
		if !recv.Metric(n) {
			t.Errorf("%s not received over OTLP", n)
		}
	}
	for env, want := range map[string]string{"OTEL_METRICS_EXPORTER=none": "", "OTEL_METRICS_EXPORTER=statsd": "error"} {
		k, v, _ := strings.Cut(env, "=")
		t.Setenv(k, v)
		name, _, err := m.ExportOTLP(context.Background(), os.Getenv)
		if (want == "error") != (err != nil) || (want == "" && name != "") {
			t.Errorf("%s: %q, %v", env, name, err)
		}
	}
}
