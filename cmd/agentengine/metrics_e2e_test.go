package main_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

var metricsLine = regexp.MustCompile(`metrics on (http://127\.0\.0\.1:\d+/metrics)`)

// --metrics-addr serves the metrics on a listener of their own (and the API no longer
// does); they count the server's turns and its live runner process.
func TestMetricsOnTheirOwnListener(t *testing.T) {
	s := startServer(t, copyProject(t), "--session-backend", "memory", "--metrics-addr", "127.0.0.1:0", "--log-format", "json")
	m := metricsLine.FindStringSubmatch(s.logs.String())
	if m == nil {
		t.Fatalf("no metrics line in:\n%s", s.logs)
	}
	got := decode(t, post(t, s.url+"/v1/responses", map[string]any{"model": "echo-go", "input": "use the tool on paris"}))
	if got["status"] != "completed" {
		t.Fatalf("turn: %v", got)
	}
	if resp := mustGetStatus(t, s.url+"/metrics"); resp != http.StatusNotFound {
		t.Errorf("GET /metrics on the API with --metrics-addr = %d, want 404", resp)
	}
	resp, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	one := func(name, label, value string) float64 {
		t.Helper()
		for _, mt := range families[name].GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					if mt.Counter != nil {
						return mt.Counter.GetValue()
					}
					return mt.Gauge.GetValue()
				}
			}
		}
		t.Fatalf("no %s{%s=%q}", name, label, value)
		return 0
	}
	if n := one("agentengine_runs_total", "status", "completed"); n != 1 {
		t.Errorf("runs_total = %v, want 1", n)
	}
	if n := one("agentengine_tool_calls_total", "tool", "lookup"); n != 1 {
		t.Errorf("tool_calls_total = %v, want 1", n)
	}
	if n := one("agentengine_runner_processes", "agent", "echo-go"); n != 1 {
		t.Errorf("runner_processes = %v, want 1", n)
	}
	if !strings.Contains(s.logs.String(), "metrics on") {
		t.Error("the start log does not say where the metrics are")
	}
	// --log-format json: the log records are JSON objects, one a line.
	records := 0
	for _, line := range strings.Split(s.logs.String(), "\n") {
		var rec map[string]any
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &rec) == nil && rec["@level"] != nil {
			records++
		}
	}
	if records == 0 {
		t.Errorf("no JSON log record in:\n%s", s.logs)
	}
	if out, err := runCLI(t, t.TempDir(), "", "run", "--log-format", "xml"); err == nil || !strings.Contains(out, "--log-format") {
		t.Errorf("--log-format xml: %v %s", err, out)
	}
}

func mustGetStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
