package main_test

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/internal/testutil"
)

// These tests edit a served project's files and check what --reload does: a run in
// flight finishes on the old code, the next one uses the new, and an edit that does not
// build or import keeps the last good version serving, its error in /health.

// The runners' "slow" run waits for this file (under .agentengine, which the watcher
// ignores) so that a test decides when it ends.
const gateFile = ".agentengine/gate"

const pyReloadAgent = `import asyncio
import os

from agentengine_runner import Description, Emitter, Runner, RunRequest

VERSION = "%s"


class Agent(Runner):
    def describe(self) -> Description:
        return Description(framework="python", agent_name="reloadpy")

    async def run(self, request: RunRequest, emit: Emitter) -> None:
        await emit.text(VERSION + " started")
        if request.input == "slow":
            while not os.path.exists("` + gateFile + `"):
                await asyncio.sleep(0.05)
        await emit.message_done(VERSION + " started, " + VERSION + " done")
`

const goReloadAgent = `package main

import (
	"context"
	"os"
	"time"

	"github.com/agentengine/agentengine/pluginsdk"
)

const version = "%s"

type agent struct{}

func (agent) Info() pluginsdk.Info { return pluginsdk.Info{Name: "reloadgo", Framework: "go"} }

func (agent) Run(ctx context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	if err := emit.Text(version + " started"); err != nil {
		return err
	}
	if req.Payload.InputText() == "slow" {
		for {
			if _, err := os.Stat("` + gateFile + `"); err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return emit.MessageDone(version + " started, " + version + " done")
}

func main() { pluginsdk.Serve(agent{}) }
`

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for f, c := range files {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// goReloadProject is a Go runner project outside this module that builds against it.
func goReloadProject(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gv := "1.22"
	for _, l := range strings.Split(string(goVersion), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			gv = strings.TrimSpace(v)
		}
	}
	dir := filepath.Join(t.TempDir(), "reloadgo")
	writeFiles(t, dir, map[string]string{
		"agentengine.yaml": "name: reloadgo\nframework: go\n",
		"go.mod":           fmt.Sprintf("module reloadgo\n\ngo %s\n\nrequire github.com/agentengine/agentengine v0.0.0\n\nreplace github.com/agentengine/agentengine => %s\n", gv, root),
		"go.sum":           string(sum),
		"main.go":          fmt.Sprintf(goReloadAgent, "v1"),
	})
	// Offline: every module it needs is this module's, already in the module cache.
	tidy := exec.Command("go", "mod", "tidy")
	tidy.Dir = dir
	tidy.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod")
	if out, err := tidy.CombinedOutput(); err != nil {
		t.Fatalf("go mod tidy: %v\n%s", err, out)
	}
	return dir
}

// slowRun starts a streamed "slow" run and returns, once its first text arrived, a
// channel with the run's final text.
func slowRun(t *testing.T, url, model string) <-chan string {
	t.Helper()
	resp := post(t, url+"/v1/responses", map[string]any{"model": model, "input": "slow", "stream": true})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("slow run: status %d", resp.StatusCode)
	}
	r := bufio.NewReader(resp.Body)
	for {
		ev, err := readSSE(r)
		if err != nil {
			t.Fatalf("slow run ended before its first text: %v", err)
		}
		if ev.Type == "response.output_text.delta" {
			break
		}
	}
	out := make(chan string, 1)
	go func() {
		defer resp.Body.Close()
		final := ""
		for {
			ev, err := readSSE(r)
			if err != nil {
				out <- final
				return
			}
			if ev.Type == "response.completed" || ev.Type == "response.failed" {
				resp, _ := ev.Data["response"].(map[string]any)
				final = ev.Type + ": " + outputText(resp)
			}
		}
	}()
	return out
}

// outputText is the text of a response object's message items.
func outputText(resp map[string]any) string {
	var b strings.Builder
	items, _ := resp["output"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		parts, _ := m["content"].([]any)
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			if s, ok := pm["text"].(string); ok {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

func answer(t *testing.T, url, model string) string {
	t.Helper()
	r := decode(t, post(t, url+"/v1/responses", map[string]any{"model": model, "input": "quick"}))
	text, _ := r["output_text"].(string)
	return text
}

// waitLog waits until the server's log has said want n times.
func waitLog(t *testing.T, s *server, want string, n int) {
	t.Helper()
	testutil.Eventually(t, 3*time.Minute, func() error {
		if got := strings.Count(s.logs.String(), want); got < n {
			return fmt.Errorf("%q logged %d times, want %d:\n%s", want, got, n, s.logs)
		}
		return nil
	})
}

func reloadScenario(t *testing.T, s *server, dir, model, file string, version func(string) string, broken, brokenErr string) {
	t.Helper()
	if got := answer(t, s.url, model); got != "v1 started, v1 done" {
		t.Fatalf("first answer %q", got)
	}
	inFlight := slowRun(t, s.url, model)
	writeFiles(t, dir, map[string]string{file: version("v2")})
	waitLog(t, s, "reloaded "+model, 1)
	if got := answer(t, s.url, model); got != "v2 started, v2 done" {
		t.Fatalf("after the edit: %q\n%s", got, s.logs)
	}
	writeFiles(t, dir, map[string]string{gateFile: ""})
	if got := <-inFlight; got != "response.completed: v1 started, v1 done" {
		t.Fatalf("the run in flight during the reload ended %q, want it completed on the old code\n%s", got, s.logs)
	}

	// A broken edit: the last good version keeps serving; the error is in /health.
	writeFiles(t, dir, map[string]string{file: broken})
	waitLog(t, s, "reload of "+model+" failed", 1)
	if got := answer(t, s.url, model); got != "v2 started, v2 done" {
		t.Fatalf("after a broken edit: %q", got)
	}
	h := decode(t, mustGet(t, s.url+"/health"))
	errs, _ := h["reload_errors"].(map[string]any)
	if !strings.Contains(fmt.Sprint(errs[model]), brokenErr) {
		t.Fatalf("health after a broken edit = %v", h)
	}
	// Fixed: served again, and the error is gone.
	writeFiles(t, dir, map[string]string{file: version("v3")})
	waitLog(t, s, "reloaded "+model, 2)
	if got := answer(t, s.url, model); got != "v3 started, v3 done" {
		t.Fatalf("after the fix: %q", got)
	}
	if h := decode(t, mustGet(t, s.url+"/health")); h["reload_errors"] != nil {
		t.Fatalf("health after the fix = %v", h)
	}
}

func TestReloadPythonProject(t *testing.T) {
	py := needPython(t)
	dir := filepath.Join(t.TempDir(), "reloadpy")
	writeFiles(t, dir, map[string]string{
		"agentengine.yaml": "name: reloadpy\nframework: python\nentry_point: agent.py:Agent\npython: " + py + "\n",
		"agent.py":         fmt.Sprintf(pyReloadAgent, "v1"),
	})
	s := startServer(t, dir, "--session-backend", "memory", "--reload")
	reloadScenario(t, s, dir, "reloadpy", "agent.py", func(v string) string { return fmt.Sprintf(pyReloadAgent, v) },
		"class Agent(:\n", "SyntaxError")
}

func TestReloadGoProject(t *testing.T) {
	dir := goReloadProject(t)
	s := startServerWithin(t, 3*time.Minute, dir, "--session-backend", "memory", "--reload")
	reloadScenario(t, s, dir, "reloadgo", "main.go", func(v string) string { return fmt.Sprintf(goReloadAgent, v) },
		"package main\n\nfunc main() { notDefinedAnywhere() }\n", "undefined: notDefinedAnywhere")
	// A reload's build never overwrites the binary a runner executes; retired builds go.
	bins, _ := filepath.Glob(filepath.Join(dir, ".agentengine", "bin", "reloadgo*"))
	if len(bins) > 3 {
		t.Errorf("old builds are left behind: %v", bins)
	}
}

// An agent that did not build at start is unavailable until a save fixes it; then it
// serves, without a restart.
func TestReloadBringsAnUnavailableAgentUp(t *testing.T) {
	dir := goReloadProject(t)
	writeFiles(t, dir, map[string]string{"main.go": "package main\n\nfunc main() { notDefinedAnywhere() }\n"})
	good := namedProject(t, copyProject(t), "good")
	s := startServerWithin(t, 3*time.Minute, good, dir, "--session-backend", "memory", "--reload")
	h := decode(t, mustGet(t, s.url+"/health"))
	if u, _ := h["unavailable"].(map[string]any); !strings.Contains(fmt.Sprint(u["reloadgo"]), "notDefinedAnywhere") {
		t.Fatalf("health at start = %v", h)
	}
	writeFiles(t, dir, map[string]string{"main.go": fmt.Sprintf(goReloadAgent, "v1")})
	waitLog(t, s, "reloaded reloadgo", 1)
	if got := answer(t, s.url, "reloadgo"); got != "v1 started, v1 done" {
		t.Fatalf("after the fix: %q\n%s", got, s.logs)
	}
	models := decode(t, mustGet(t, s.url+"/v1/models"))
	if d, _ := models["data"].([]any); len(d) != 2 {
		t.Fatalf("models after the fix = %v", models)
	}
	if h := decode(t, mustGet(t, s.url+"/health")); h["unavailable"] != nil {
		t.Fatalf("health after the fix = %v", h)
	}
}
