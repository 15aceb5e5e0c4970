package main_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/agentengine/agentengine/internal/otlptest"
)

// replay --spans-from prints the span tree of a turn the running server traced (kept in
// its memory, with no collector), after the session's events; --no-trace keeps none.
func TestReplayPrintsTheTurnsSpanTree(t *testing.T) {
	project := copyProject(t)
	db := filepath.Join(t.TempDir(), "s.sqlite")
	s := startServer(t, project, "--session-path", db)
	got := decode(t, post(t, s.url+"/v1/responses", map[string]any{"model": "echo-go", "input": "use the tool on paris", "conversation": "conv-spans"}))
	if got["status"] != "completed" {
		t.Fatalf("turn: %v", got)
	}
	out, err := runCLI(t, project, "", "replay", "conv-spans", "--session-path", db, "--spans-from", s.url)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	tree := out[strings.Index(out, "trace "):]
	t.Logf("span tree:\n%s", tree)
	lines := strings.Split(strings.TrimSpace(tree), "\n")
	depth := func(name string) int {
		for _, l := range lines {
			if strings.Contains(l, name) {
				return len(l) - len(strings.TrimLeft(l, " "))
			}
		}
		t.Fatalf("no %q in the tree:\n%s", name, tree)
		return 0
	}
	// HTTP span > turn > (runner call, tool call, store write).
	if h, turn := depth("POST /v1/responses"), depth("invoke_agent echo-go"); turn != h+2 ||
		depth("runner.run echo-go") != turn+2 || depth("execute_tool lookup") != turn+2 || depth("store finish_run") != turn+2 {
		t.Errorf("tree:\n%s", tree)
	}
	if !strings.Contains(tree, "tool=lookup") || !strings.Contains(tree, "status=completed") {
		t.Errorf("the tree lacks its notes:\n%s", tree)
	}

	quiet := startServer(t, copyProject(t), "--session-path", filepath.Join(t.TempDir(), "q.sqlite"), "--no-trace")
	decode(t, post(t, quiet.url+"/v1/responses", map[string]any{"model": "echo-go", "input": "hi", "conversation": "conv-quiet"}))
	out, err = runCLI(t, project, "", "replay", "conv-spans", "--session-path", db, "--spans-from", quiet.url)
	if err != nil || !strings.Contains(out, "no spans") {
		t.Errorf("replay against an untraced server: %v\n%s", err, out)
	}
	// OpenTelemetry's own off switch works too.
	t.Setenv("OTEL_SDK_DISABLED", "true")
	off := startServer(t, copyProject(t), "--session-backend", "memory")
	decode(t, post(t, off.url+"/v1/responses", map[string]any{"model": "echo-go", "input": "hi", "conversation": "conv-off"}))
	var spans []any
	if resp := mustGet(t, off.url+"/debug/trace/session/conv-off"); resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&spans) != nil || len(spans) != 0 {
		t.Errorf("OTEL_SDK_DISABLED=true server kept spans: %v", spans)
	}
}

// The server exports its spans to the OTLP endpoint of the environment, and a client's
// traceparent is the turn's trace.
func TestServerExportsTheTurnOverOTLP(t *testing.T) {
	recv := &otlptest.Receiver{}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.HTTP(t))
	t.Setenv("OTEL_METRICS_EXPORTER", "none")
	t.Setenv("OTEL_SERVICE_NAME", "ae-e2e")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100") // export within 0.1 s, not 5
	s := startServer(t, copyProject(t), "--session-backend", "memory")
	const traceID = "0af7651916cd43dd8448eb211c80319c"
	req, _ := http.NewRequest("POST", s.url+"/v1/responses", strings.NewReader(`{"model":"echo-go","input":"use the tool on paris"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-b7ad6b7169203331-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	spans := recv.WaitFor(t, "the turn's spans", func(sp []otlptest.Span) bool {
		names := map[string]bool{}
		for _, s := range sp {
			names[strings.Fields(s.Name)[0]] = s.TraceID == traceID && s.Service == "ae-e2e"
		}
		return names["POST"] && names["invoke_agent"] && names["runner.run"] && names["execute_tool"] && names["store"]
	})
	if len(spans) < 5 {
		t.Fatalf("spans %+v", spans)
	}
	// The turn's store writes are its children, client spans with the store's attributes
	// and their own times.
	byName := map[string]otlptest.Span{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	turn, write := byName["invoke_agent echo-go"], byName["store finish_run"]
	if write.ParentID != turn.SpanID || write.Kind != tracepb.Span_SPAN_KIND_CLIENT ||
		write.Attributes["db.operation.name"] != "finish_run" || write.Attributes["db.system.name"] != "memory" ||
		write.StartNanos == 0 || write.EndNanos < write.StartNanos || write.SpanID == "" || write.SpanID == turn.SpanID {
		t.Errorf("the store write's span %+v under the turn's %+v", write, turn)
	}
}
