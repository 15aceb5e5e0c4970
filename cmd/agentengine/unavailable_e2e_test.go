package main_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// brokenGoProject is a Go project whose runner does not compile.
func brokenGoProject(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	files := map[string]string{
		"agentengine.yaml": "name: " + name + "\nframework: go\n",
		"go.mod":           "module " + name + "\n\ngo 1.22\n",
		"main.go":          "package main\n\nfunc main() { notDefinedAnywhere() }\n",
	}
	for f, c := range files {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A two-project server with one broken project serves the other; the broken one is
// left out of /v1/models, shows its error in /health, and a call to it is a 503 naming it.
func TestBrokenProjectDoesNotStopTheOthers(t *testing.T) {
	good := namedProject(t, copyProject(t), "good")
	s := startServer(t, good, brokenGoProject(t, "broken"), "--session-backend", "memory")
	if !strings.Contains(s.logs.String(), "agent broken is unavailable") {
		t.Errorf("the terminal does not say broken is unavailable:\n%s", s.logs)
	}
	models := decode(t, mustGet(t, s.url+"/v1/models"))
	if d := models["data"].([]any); len(d) != 1 || d[0].(map[string]any)["id"] != "good" {
		t.Fatalf("models = %v", models)
	}
	h := decode(t, mustGet(t, s.url+"/health"))
	u, _ := h["unavailable"].(map[string]any)
	if !strings.Contains(fmt.Sprint(u["broken"]), "undefined: notDefinedAnywhere") {
		t.Fatalf("health = %v", h)
	}
	resp := post(t, s.url+"/v1/responses", map[string]any{"model": "broken", "input": "hi"})
	body := decode(t, resp)
	if msg := fmt.Sprint(body["error"]); resp.StatusCode != http.StatusServiceUnavailable ||
		!strings.Contains(msg, `agent "broken" is unavailable`) || !strings.Contains(msg, "undefined: notDefinedAnywhere") {
		t.Fatalf("call to broken: %d %v", resp.StatusCode, body)
	}
	r := decode(t, post(t, s.url+"/v1/responses", map[string]any{"model": "good", "input": "hi"}))
	if r["status"] != "completed" {
		t.Fatalf("good: %v", r)
	}
}

// --strict keeps all-or-nothing: one broken project stops the server, naming the error.
func TestStrictRefusesABrokenProject(t *testing.T) {
	good := namedProject(t, copyProject(t), "good")
	out, err := exec.Command(binPath, "run", good, brokenGoProject(t, "broken"), "--port", "0", "--strict", "--session-backend", "memory").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "undefined: notDefinedAnywhere") || strings.Contains(string(out), "agentengine serving") {
		t.Fatalf("want a refusal naming the compile error, got %v:\n%s", err, out)
	}
}

// A Python agent whose module fails to import is never reported ready: the server says
// it is unavailable, with the traceback's last line, and serves the other agent.
func TestPythonImportErrorMarksTheAgentUnavailable(t *testing.T) {
	py := needPython(t)
	dir := filepath.Join(t.TempDir(), "badimport")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, c := range map[string]string{
		"agentengine.yaml": "name: badimport\nframework: langgraph\nentry_point: agent.py:graph\npython: " + py + "\n",
		"agent.py":         "import not_a_real_package_xyz\n\ngraph = None\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good := namedProject(t, copyProject(t), "good")
	s := startServer(t, good, dir, "--session-backend", "memory")
	h := decode(t, mustGet(t, s.url+"/health"))
	u, _ := h["unavailable"].(map[string]any)
	if msg := fmt.Sprint(u["badimport"]); !strings.Contains(msg, "No module named 'not_a_real_package_xyz'") {
		t.Fatalf("health = %v\nlogs:\n%s", h, s.logs)
	}
	if strings.Contains(s.logs.String(), "serving badimport") || strings.Contains(s.logs.String(), "serving good, badimport") {
		t.Fatalf("the serving line names the broken agent:\n%s", s.logs)
	}
}

// The shell's environment reaches the agent, minus agentengine's own secrets;
// --isolate-env keeps only what is configured.
func TestShellEnvironmentReachesTheAgent(t *testing.T) {
	runner := filepath.Join(t.TempDir(), "envecho")
	if out, err := exec.Command("go", "build", "-o", runner, "./testdata/envecho").CombinedOutput(); err != nil {
		t.Fatalf("build envecho: %v\n%s", err, out)
	}
	project := filepath.Join(t.TempDir(), "envecho")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "agentengine.yaml"), []byte("name: envecho\nframework: go\nbinary: "+runner+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"FROM_THE_SHELL=exported", "AGENTENGINE_TOKEN=t0ken", "KSADK_SESSION_DSN=postgres://u:secret@127.0.0.1:1/x"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "shell=exported token= dsn="},
		{[]string{"--isolate-env"}, "shell= token= dsn="},
	} {
		// The DSN is not used: --session-backend memory wins over it.
		s := startAgentengine(t, project, env, append([]string{"run", ".", "--port", "0", "--session-backend", "memory"}, tc.args...)...)
		req, _ := http.NewRequest("POST", s.url+"/v1/responses", strings.NewReader(`{"model":"envecho","input":"x"}`))
		req.Header.Set("Authorization", "Bearer t0ken")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out := decode(t, resp)
		if text, _ := out["output_text"].(string); !strings.Contains(text, tc.want) {
			t.Fatalf("%v: %v, want %q", tc.args, out, tc.want)
		}
		s.stop()
	}
}
