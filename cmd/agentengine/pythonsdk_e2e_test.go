package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// examples/python-sdk, a runner on the Python SDK (`framework: python`), served as the
// README says: streaming, a tool call and its result, session state, an approval and
// the resume that answers it.
func TestPythonSDKExample(t *testing.T) {
	dir := copyPyProject(t, "../../examples/python-sdk", "")
	s := startServerWithin(t, 2*time.Minute, dir, "--session-backend", "memory")
	const model = "python-sdk"

	echo := streamTurn(t, s.url, map[string]any{"model": model, "input": "hello from the shell"}, nil)
	if echo.last != "response.completed" || echo.text != "hello from the shell" {
		t.Fatalf("echo: %s %q", echo.last, echo.text)
	}
	var deltas int
	for _, ty := range echo.types {
		if ty == "response.output_text.delta" {
			deltas++
		}
	}
	if deltas < 4 {
		t.Errorf("want the words streamed one by one, got %d text deltas", deltas)
	}

	weather := streamTurn(t, s.url, map[string]any{"model": model, "input": "weather Paris"}, nil)
	if len(weather.calls) != 1 || weather.calls[0]["name"] != "get_weather" || !strings.Contains(weather.text, "clear and 21°C in Paris") {
		t.Fatalf("weather: calls %v, text %q", weather.calls, weather.text)
	}

	remember := streamTurn(t, s.url, map[string]any{"model": model, "input": "remember buy milk"}, nil)
	recall := streamTurn(t, s.url, map[string]any{"model": model, "input": "recall", "previous_response_id": remember.id}, nil)
	if recall.text != "You asked me to remember: buy milk" {
		t.Fatalf("recall: %q", recall.text)
	}

	ask := streamTurn(t, s.url, map[string]any{"model": model, "input": "delete notes.txt"}, nil)
	if len(ask.approvals) != 1 {
		t.Fatalf("delete: approvals %v (%s)", ask.approvals, ask.last)
	}
	done := approve(t, s, model, ask)
	if done.last != "response.completed" || done.text != "Approved: deleted notes.txt." {
		t.Fatalf("resume: %s %q\n%s", done.last, done.text, s.logs)
	}
}

// `agentengine init -f python` writes a project that serves as its README says: a turn
// streams and keeps state, `publish` asks for an approval and the answer resumes it.
func TestInitPythonSDKProjectServes(t *testing.T) {
	py := needPython(t)
	parent := t.TempDir()
	out, err := runCLI(t, parent, "", "init", "mysdk", "-f", "python")
	if err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	dir := filepath.Join(parent, "mysdk")
	for _, f := range []string{"agent.py", "agentengine.yaml", "requirements.txt", "README.md", ".gitignore"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("init wrote no %s: %v", f, err)
		}
	}
	// The test's interpreter has the SDK's requirements; a user's first run makes .venv.
	appendYAML(t, dir, "python: "+py+"\n")
	s := startServerWithin(t, 2*time.Minute, dir, "--session-backend", "memory")
	first := streamTurn(t, s.url, map[string]any{"model": "mysdk", "input": "hello there"}, nil)
	if first.last != "response.completed" || first.text != "hello there" {
		t.Fatalf("turn: %s %q\n%s", first.last, first.text, s.logs)
	}
	ask := streamTurn(t, s.url, map[string]any{"model": "mysdk", "input": "publish", "previous_response_id": first.id}, nil)
	if len(ask.approvals) != 1 {
		t.Fatalf("publish: approvals %v", ask.approvals)
	}
	if done := approve(t, s, "mysdk", ask); done.text != "Publishing was approved." {
		t.Fatalf("resume: %q", done.text)
	}
}
