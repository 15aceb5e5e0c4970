package main_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
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
