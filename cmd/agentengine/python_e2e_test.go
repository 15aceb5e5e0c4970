package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentengine/agentengine/internal/testutil"
)

// These tests drive the real agentengine binary with Python runners: the embedded bridge,
// the frameworks as pip installs them, go-plugin, the host and the HTTP API. They need a
// Python with the frameworks installed ($PYTHON, default python3); without one they skip
// (fail when CI is set) and print the install command.

// pythonInstall is the command that installs what these tests import.
const pythonInstall = `%s -m pip install -c pluginsdk/python/constraints.txt -r scripts/test-requirements.txt -r pluginsdk/python/runner-requirements.txt`

var testPython = sync.OnceValues(func() (string, error) {
	name := os.Getenv("PYTHON")
	if name == "" {
		name = "python3"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("no %s on PATH: install Python 3.10+, then\n  %s", name, fmt.Sprintf(pythonInstall, name))
	}
	// The real executable (not a pyenv shim), so the runner is a direct child.
	out, err := exec.Command(path, "-c", "import sys, grpc, google.protobuf, langgraph, langchain, deepagents, google.adk; print(sys.executable)").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s lacks the packages the Python runners need:\n%s\ninstall them from the repository root with:\n  %s", path, out, fmt.Sprintf(pythonInstall, path))
	}
	return strings.TrimSpace(string(out)), nil
})

func needPython(t *testing.T) string {
	t.Helper()
	py, err := testPython()
	if err != nil {
		// .ci/run installs them: in CI a missing Python or package is a failure, not a skip.
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skipf("needs Python with the frameworks: %v", err)
	}
	return py
}

// copyPyProject copies a project (an example or a testdata fixture) into a temp dir,
// without its environment or state, and points it at the test interpreter.
func copyPyProject(t *testing.T, src string, extraYAML string) string {
	t.Helper()
	py := needPython(t)
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			switch d.Name() {
			case ".venv", "venv", ".agentengine", "__pycache__":
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if py != "" {
		appendYAML(t, dst, "python: "+py+"\n"+extraYAML)
	}
	return dst
}

func appendYAML(t *testing.T, dir, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, "agentengine.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n" + text); err != nil {
		t.Fatal(err)
	}
}

// turn is what one streamed /v1/responses request produced.
type turn struct {
	id, text, last string
	types          []string
	calls          []map[string]any // mcp_call items (tools the agent ran), as output_item.done carried them
	results        []map[string]any // response.ksadk.tool_result events
	approvals      []map[string]any // mcp_approval_request items
	response       map[string]any   // the terminal event's response object
}

// streamTurn posts a streaming request and reads it to the end; onEvent (optional) sees
// every event as it arrives.
func streamTurn(t *testing.T, url string, body map[string]any, onEvent func(sseEvent, *turn)) turn {
	t.Helper()
	body["stream"] = true
	body["ksadk_events"] = true
	resp := post(t, url+"/v1/responses", body)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	var tr turn
	r := bufio.NewReader(resp.Body)
	for {
		ev, err := readSSE(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		tr.types = append(tr.types, ev.Type)
		tr.last = ev.Type
		switch ev.Type {
		case "response.created":
			tr.id = ev.Data["response"].(map[string]any)["id"].(string)
		case "response.output_text.delta":
			tr.text += ev.Data["delta"].(string)
		case "response.output_item.done":
			item := ev.Data["item"].(map[string]any)
			switch item["type"] {
			case "mcp_call":
				tr.calls = append(tr.calls, item)
			case "mcp_approval_request":
				tr.approvals = append(tr.approvals, item)
			}
		case "response.ksadk.tool_result":
			tr.results = append(tr.results, ev.Data)
		case "response.completed", "response.incomplete", "response.failed":
			tr.response, _ = ev.Data["response"].(map[string]any)
		}
		if onEvent != nil {
			onEvent(ev, &tr)
		}
	}
	return tr
}

func (tr turn) status() string {
	if tr.response == nil {
		return ""
	}
	s, _ := tr.response["status"].(string)
	return s
}

func (tr turn) callNamed(name string) map[string]any {
	for _, c := range tr.calls {
		if c["name"] == name {
			return c
		}
	}
	return nil
}

// pyExamples are the framework examples and what makes each use a tool.
var pyExamples = []struct {
	dir       string
	toolInput string
	tool      string
}{
	{"langgraph-chat", "what is the weather in Paris?", "get_weather"},
	{"langchain-qa", "search the docs for checkpoints", "search_docs"},
	{"deepagents-research", "write_todos for a report on agent runtimes", "write_todos"},
}

func startPython(t *testing.T, dir string, args ...string) *server {
	t.Helper()
	return startServerWithin(t, 3*time.Minute, dir, append([]string{"--session-backend", "memory"}, args...)...)
}

func TestPythonExamples(t *testing.T) {
	for _, ex := range pyExamples {
		t.Run(ex.dir, func(t *testing.T) {
			dir := copyPyProject(t, filepath.Join("../../examples", ex.dir), "")
			s := startPython(t, dir)
			model := modelOf(t, dir)

			t.Run("streamed text", func(t *testing.T) {
				tr := streamTurn(t, s.url, map[string]any{"model": model, "input": "hello there"}, nil)
				deltas := 0
				for _, ty := range tr.types {
					if ty == "response.output_text.delta" {
						deltas++
					}
				}
				if tr.last != "response.completed" || tr.text == "" || deltas < 2 {
					t.Fatalf("last %s, %d deltas, text %q", tr.last, deltas, tr.text)
				}
			})
			t.Run("tool call and result", func(t *testing.T) {
				tr := streamTurn(t, s.url, map[string]any{"model": model, "input": ex.toolInput}, nil)
				call := tr.callNamed(ex.tool)
				if tr.last != "response.completed" || call == nil {
					t.Fatalf("last %s, calls %v, text %q", tr.last, tr.calls, tr.text)
				}
				found := false
				for _, r := range tr.results {
					if r["item_id"] == call["id"] {
						found = true
					}
				}
				if !found || tr.text == "" {
					t.Fatalf("no result for call %v in %v (text %q)", call["call_id"], tr.results, tr.text)
				}
			})
		})
	}
}

// modelOf reads the agent name from a copied project's config.
func modelOf(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "agentengine.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "name:"); ok {
			v, _, _ = strings.Cut(v, "#")
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return filepath.Base(dir)
}

// approvalInput makes langgraph-chat ask for approval before a guarded tool.
const approvalInput = "send an email to bob about the launch"

func approve(t *testing.T, s *server, model string, first turn) turn {
	t.Helper()
	// OpenAI ends a turn that waits on an approval completed, with the request in output.
	if first.status() != "completed" || len(first.approvals) != 1 {
		t.Fatalf("first turn: status %q, approvals %v, types %v", first.status(), first.approvals, first.types)
	}
	apr := first.approvals[0]
	return streamTurn(t, s.url, map[string]any{
		"model": model, "previous_response_id": first.id,
		"input": []any{map[string]any{"type": "mcp_approval_response", "approval_request_id": apr["id"], "approve": true}},
	}, nil)
}

func TestPythonApproval(t *testing.T) {
	dir := copyPyProject(t, "../../examples/langgraph-chat", "")
	model := modelOf(t, dir)
	// The SQLite store: the resume after a runner kill must find the session.
	s := startServerWithin(t, 3*time.Minute, dir)

	t.Run("interrupt, approve, complete", func(t *testing.T) {
		first := streamTurn(t, s.url, map[string]any{"model": model, "input": approvalInput}, nil)
		second := approve(t, s, model, first)
		if second.last != "response.completed" || second.text == "" || len(second.results) == 0 {
			t.Fatalf("after approval: last %s, text %q, results %v", second.last, second.text, second.results)
		}
	})
	t.Run("runner killed between interrupt and resume", func(t *testing.T) {
		first := streamTurn(t, s.url, map[string]any{"model": model, "input": approvalInput}, nil)
		killRunners(t, s)
		second := approve(t, s, model, first)
		if second.last != "response.completed" || second.text == "" || len(second.results) == 0 {
			t.Fatalf("resume in a new runner: last %s, text %q, results %v\n%s", second.last, second.text, second.results, s.logs)
		}
	})
}

// killRunners SIGKILLs the server's runner processes and waits until the server has
// reaped them, i.e. noticed their death: a run sent in the microseconds between a
// runner's death and the host noticing it fails like a run in flight would.
func killRunners(t *testing.T, s *server) {
	t.Helper()
	pids := s.runnerPIDs()
	if len(pids) == 0 {
		t.Fatal("no runner process found")
	}
	for _, p := range pids {
		if err := syscall.Kill(p, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		for _, p := range pids {
			if syscall.Kill(p, 0) == nil { // a zombie still answers until it is reaped
				return fmt.Errorf("runner %d still alive", p)
			}
		}
		return nil
	})
}

func TestPythonConcurrentSessionsKeepTheirContext(t *testing.T) {
	dir := copyPyProject(t, "testdata/pyfixture", "")
	s := startPython(t, dir)
	const n = 4
	type result struct {
		conv string
		tr   turn
	}
	results := make(chan result, n)
	for i := range n {
		conv := fmt.Sprintf("conv-%d", i)
		go func() {
			var tr turn
			defer func() { results <- result{conv, tr} }()
			tr = streamTurnNoFatal(s.url, map[string]any{"model": "pyfixture", "input": "sleep 1", "conversation": conv})
		}()
	}
	for range n {
		r := <-results
		want := fmt.Sprintf("session=%s after=%s", r.conv, r.conv)
		if r.tr.last != "response.completed" || !strings.HasPrefix(r.tr.text, want) {
			t.Errorf("%s: last %s, text %q, want %q", r.conv, r.tr.last, r.tr.text, want)
		}
	}
}

// streamTurnNoFatal is streamTurn for goroutines: errors end up in the turn's fields.
func streamTurnNoFatal(url string, body map[string]any) turn {
	body["stream"] = true
	b, _ := json.Marshal(body)
	resp, err := http.Post(url+"/v1/responses", "application/json", bytes.NewReader(b))
	if err != nil {
		return turn{last: "error: " + err.Error()}
	}
	defer resp.Body.Close()
	var tr turn
	r := bufio.NewReader(resp.Body)
	for {
		ev, err := readSSE(r)
		if err != nil {
			return tr
		}
		tr.last = ev.Type
		switch ev.Type {
		case "response.output_text.delta":
			tr.text += ev.Data["delta"].(string)
		case "response.failed", "response.incomplete", "response.completed":
			tr.response, _ = ev.Data["response"].(map[string]any)
		}
	}
}

func TestPythonPoolSpreadsConcurrentRuns(t *testing.T) {
	dir := copyPyProject(t, "testdata/pyfixture", "processes: 2\n")
	s := startPython(t, dir)
	if pids := s.runnerPIDs(); len(pids) != 2 {
		t.Fatalf("runner processes %v, want 2", pids)
	}
	// One run each first (idle members take runs in turn): the bridge opens the shared
	// checkpoint database on a process's first run, and two processes doing that at the
	// same moment can meet "database is locked" (a bridge issue, reported).
	for i := range 2 {
		if tr := streamTurnNoFatal(s.url, map[string]any{"model": "pyfixture", "input": "sleep 0", "conversation": fmt.Sprintf("warm-%d", i)}); tr.last != "response.completed" {
			t.Fatalf("warm-up run: %s %v", tr.last, tr.response)
		}
	}
	results := make(chan turn, 2)
	for i := range 2 {
		go func() {
			results <- streamTurnNoFatal(s.url, map[string]any{"model": "pyfixture", "input": "sleep 1", "conversation": fmt.Sprintf("pool-%d", i)})
		}()
	}
	pids := map[string]bool{}
	for range 2 {
		pids[fixturePID(t, s, <-results)] = true
	}
	if len(pids) != 2 {
		t.Fatalf("two concurrent runs went to one process: %v", pids)
	}
}

// TestPythonPoolGrowsWhileCPUBound: a Python project without `processes` starts one
// runner process and adds another while CPU-bound runs queue on it.
func TestPythonPoolGrowsWhileCPUBound(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("a pool grows to one process per CPU, and this machine has one")
	}
	dir := copyPyProject(t, "testdata/pyfixture", "")
	s := startPython(t, dir)
	if pids := s.runnerPIDs(); len(pids) != 1 {
		t.Fatalf("runner processes at start %v, want 1", pids)
	}
	// Four CPU-bound runs at a time keep the one process busy with runs waiting, until
	// the second process takes a share of them.
	pids := map[string]bool{}
	deadline := time.Now().Add(90 * time.Second)
	for n := 0; len(pids) < 2; n++ {
		if time.Now().After(deadline) {
			t.Fatalf("runs still all on one process after %d rounds (runner processes %v)\n%s", n, s.runnerPIDs(), s.logs)
		}
		results := make(chan turn, 4)
		for i := range 4 {
			go func() {
				results <- streamTurnNoFatal(s.url, map[string]any{"model": "pyfixture", "input": "spin 0.2", "conversation": fmt.Sprintf("spin-%d-%d", n, i)})
			}()
		}
		for range 4 {
			pids[fixturePID(t, s, <-results)] = true
		}
	}
	if got := s.runnerPIDs(); len(got) != 2 {
		t.Fatalf("runner processes %v, want 2", got)
	}
	if !strings.Contains(s.logs.String(), "starting another") {
		t.Errorf("the log does not say why a process was added:\n%s", s.logs)
	}
}

// fixturePID is the runner pid a completed pyfixture turn reports ("... pid=N").
func fixturePID(t *testing.T, s *server, tr turn) string {
	t.Helper()
	_, pid, ok := strings.Cut(tr.text, "pid=")
	if tr.last != "response.completed" || !ok {
		t.Fatalf("last %s, text %q, response %v\n%s", tr.last, tr.text, tr.response, s.logs)
	}
	return pid
}

func TestPythonCancelStopsTheTask(t *testing.T) {
	dir := copyPyProject(t, "testdata/pyfixture", "env:\n  FIXTURE_MARKER_SLEEP: \"2\"\n")
	s := startPython(t, dir)
	marker := func(name string) string { return filepath.Join(dir, ".agentengine", name) }

	// A server-side call is shown once its result is known, so the stream cannot say when
	// the tool runs: the tool itself does, with a ".started" marker.
	cancelled := make(chan int, 1)
	tr := streamTurn(t, s.url, map[string]any{"model": "pyfixture", "input": "marker cancelled"}, func(ev sseEvent, tr *turn) {
		if ev.Type != "response.created" {
			return
		}
		id := tr.id
		go func() {
			// Cancelled even if the marker never appears: the test then fails on the outcome.
			_ = testutil.Wait(60*time.Second, func() error {
				_, err := os.Stat(marker("cancelled.started"))
				return err
			})
			resp, err := http.Post(s.url+"/v1/responses/"+id+"/cancel", "application/json", nil)
			if err != nil {
				t.Error(err)
				cancelled <- 0
				return
			}
			resp.Body.Close()
			cancelled <- resp.StatusCode
		}()
	})
	cancelStatus := <-cancelled
	if cancelStatus != http.StatusOK || tr.status() != "cancelled" {
		t.Fatalf("cancel answered %d; stream ended %s with status %q (types %v)", cancelStatus, tr.last, tr.status(), tr.types)
	}
	// Long enough for the tool to have finished had it not been cancelled.
	time.Sleep(3500 * time.Millisecond)
	if _, err := os.Stat(marker("cancelled")); err == nil {
		t.Fatal("the cancelled run's tool kept running and wrote its marker")
	}
	// The same tool, not cancelled, does write it: the check above means something.
	done := streamTurn(t, s.url, map[string]any{"model": "pyfixture", "input": "marker completed"}, nil)
	if done.last != "response.completed" || !strings.Contains(done.text, "marker completed written") {
		t.Fatalf("uncancelled run: %s %q", done.last, done.text)
	}
	if _, err := os.Stat(marker("completed")); err != nil {
		t.Fatalf("uncancelled run wrote no marker: %v", err)
	}
}

func TestPythonScaffoldsRunAsIs(t *testing.T) {
	py := needPython(t)
	for _, fw := range []string{"langgraph", "langchain", "deepagents"} {
		t.Run(fw, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "new-"+fw)
			if out, err := exec.Command(binPath, "init", dir, "-f", fw).CombinedOutput(); err != nil {
				t.Fatalf("init: %v\n%s", err, out)
			}
			appendYAML(t, dir, "python: "+py+"\n")
			s := startPython(t, dir)
			tr := streamTurn(t, s.url, map[string]any{"model": "new-" + fw, "input": "what is the weather in Paris?"}, nil)
			if tr.last != "response.completed" || tr.callNamed("get_weather") == nil || !strings.Contains(tr.text, "Paris") {
				t.Fatalf("last %s, calls %v, text %q\n%s", tr.last, tr.calls, tr.text, s.logs)
			}
		})
	}
}

// A langgraph.json project without agentengine.yaml, with its interpreter in .venv.
func TestPythonLangGraphJSONProjectWithVenv(t *testing.T) {
	py := needPython(t)
	dir := t.TempDir()
	src, _ := os.ReadFile("testdata/pyfixture/graph.py")
	files := map[string]string{
		"langgraph.json": `{"dependencies": ["."], "graphs": {"fixture": "./graph.py:graph"}, "env": ".env"}`,
		"graph.py":       string(src),
		".env":           "FIXTURE_MARKER_SLEEP=0\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A real virtualenv that sees the test interpreter's packages. The test interpreter
	// is itself a virtualenv's, mostly: --system-site-packages would show the new one
	// only the base interpreter's packages, so a .pth file adds the test one's.
	venv := filepath.Join(dir, ".venv")
	if out, err := exec.Command(py, "-m", "venv", "--system-site-packages", "--without-pip", venv).CombinedOutput(); err != nil {
		t.Fatalf("venv: %v\n%s", err, out)
	}
	sitePackages := func(python string) string {
		out, err := exec.Command(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").Output()
		if err != nil {
			t.Fatalf("%s: site-packages: %v", python, err)
		}
		return strings.TrimSpace(string(out))
	}
	pth := filepath.Join(sitePackages(filepath.Join(venv, "bin", "python3")), "test-interpreter.pth")
	if err := os.WriteFile(pth, []byte(sitePackages(py)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startPython(t, dir)
	model := filepath.Base(dir)
	tr := streamTurn(t, s.url, map[string]any{"model": model, "input": "marker m"}, nil)
	if tr.last != "response.completed" || !strings.Contains(tr.text, "marker m written") {
		t.Fatalf("last %s, text %q\n%s", tr.last, tr.text, s.logs)
	}
	// The runner ran in the venv.
	if !strings.Contains(s.logs.String(), filepath.Join(dir, ".venv")) {
		t.Logf("logs do not name the venv interpreter:\n%s", s.logs)
	}
}

func TestDoctor(t *testing.T) {
	dir := copyPyProject(t, "testdata/pyfixture", "")
	out, err := exec.Command(binPath, "doctor", dir, "--json").Output()
	var rep struct {
		OK     bool
		Checks []struct {
			Name, Detail, Fix string
			OK                bool
		}
	}
	if jerr := json.Unmarshal(out, &rep); jerr != nil {
		t.Fatalf("doctor --json printed %q (%v)", out, err)
	}
	if err != nil || !rep.OK || len(rep.Checks) < 6 {
		t.Fatalf("doctor on a good project: %v %+v", err, rep)
	}

	// A wrong entry point: a failing config check with the fix, exit status 1.
	bad := copyPyProject(t, "testdata/pyfixture", "")
	cfg := filepath.Join(bad, "agentengine.yaml")
	data, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, bytes.Replace(data, []byte("graph.py:graph"), []byte("graf.py:graph"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	text, err := exec.Command(binPath, "doctor", bad).CombinedOutput()
	if code := exitStatus(err); code != 1 || !strings.Contains(string(text), "graf.py does not exist") || !strings.Contains(string(text), "fix:") || !strings.Contains(string(text), "graph.py") {
		t.Fatalf("doctor on a bad entry point: exit %d\n%s", code, text)
	}
}

func exitStatus(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// The README's main command on a machine without the project's environment: `run` creates
// .venv, installs the pinned requirements from the package index with pip's output
// shown, and serves; a second run finds the environment ready.
func TestPythonFirstRunCreatesTheEnvironment(t *testing.T) {
	needPython(t)
	src := "../../examples/langgraph-chat"
	dir := filepath.Join(t.TempDir(), "langgraph-chat")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	for _, leftover := range []string{".venv", "venv", ".agentengine"} {
		os.RemoveAll(filepath.Join(dir, leftover))
	}
	s := startServerWithin(t, 15*time.Minute, dir, "--session-backend", "memory")
	marker, err := os.ReadFile(filepath.Join(dir, ".venv", "agentengine-setup.json"))
	if err != nil || !strings.Contains(string(marker), `"complete": true`) {
		t.Fatalf("setup marker %q %v", marker, err)
	}
	tr := streamTurn(t, s.url, map[string]any{"model": "langgraph-chat", "input": "what is the weather in Paris?"}, nil)
	if tr.last != "response.completed" || tr.callNamed("get_weather") == nil {
		t.Fatalf("last %s, calls %v, text %q", tr.last, tr.calls, tr.text)
	}
	s.stop()
	logs := s.logs.String()
	// Each step with its time, then the total.
	for _, want := range []string{"has no Python environment: creating .venv", "virtualenv created in", "pip install", "Successfully installed", "installed in", "Python environment ready",
		"==> starting runner langgraph-chat", "runner langgraph-chat started in", "(ready in "} {
		if !strings.Contains(logs, want) {
			t.Errorf("first run's output lacks %q", want)
		}
	}
	s2 := startServerWithin(t, 3*time.Minute, dir, "--session-backend", "memory")
	s2.stop()
	if strings.Contains(s2.logs.String(), "pip install") {
		t.Errorf("the second run installed again:\n%s", s2.logs)
	}
}

// TestPythonADK serves examples/adk-assistant (google-adk with the scripted BaseLlm):
// streamed text and an approval through /v1/responses, a tool call with id continuity
// through the ADK web API's /run_sse, and the `init -f adk` scaffold.
func TestPythonADK(t *testing.T) {
	py := needPython(t)
	if out, err := exec.Command(py, "-c", "import google.adk").CombinedOutput(); err != nil {
		t.Fatalf("%s lacks google-adk:\n%s\ninstall it with:\n  %s -m pip install -c pluginsdk/python/constraints.txt -r examples/adk-assistant/requirements.txt", py, out, py)
	}
	dir := copyPyProject(t, "../../examples/adk-assistant", "")
	s := startPython(t, dir)
	model := modelOf(t, dir)

	t.Run("streamed text via /v1/responses", func(t *testing.T) {
		tr := streamTurn(t, s.url, map[string]any{"model": model, "input": "hello there"}, nil)
		deltas := 0
		for _, ty := range tr.types {
			if ty == "response.output_text.delta" {
				deltas++
			}
		}
		// Partials only: the aggregated final ADK event must not repeat the text.
		if tr.last != "response.completed" || tr.text != "You said: hello there" || deltas < 2 {
			t.Fatalf("last %s, %d deltas, text %q\n%s", tr.last, deltas, tr.text, s.logs)
		}
	})
	t.Run("confirmation via /v1/responses", func(t *testing.T) {
		first := streamTurn(t, s.url, map[string]any{"model": model, "input": "delete file path=/tmp/x"}, nil)
		// A call that waits on an approval is shown as the approval request alone (OpenAI's
		// hosted-tool shape); the mcp_call follows once it is approved and has run.
		if len(first.calls) != 0 || len(first.approvals) != 1 || first.approvals[0]["name"] != "delete_file" {
			t.Fatalf("calls %v, approvals %v, types %v\n%s", first.calls, first.approvals, first.types, s.logs)
		}
		second := approve(t, s, model, first)
		call := second.callNamed("delete_file")
		found := false
		for _, r := range second.results {
			found = found || call != nil && r["item_id"] == call["id"]
		}
		if call == nil || call["approval_request_id"] != first.approvals[0]["id"] {
			t.Fatalf("after approval: calls %v, want delete_file answering %v", second.calls, first.approvals[0]["id"])
		}
		if second.last != "response.completed" || !found || !strings.Contains(second.text, "deleted") {
			t.Fatalf("after approval: last %s, results %v, text %q\n%s", second.last, second.results, second.text, s.logs)
		}
	})
	t.Run("tool call via /run_sse", func(t *testing.T) {
		base := s.url + "/apps/" + model + "/users/u1/sessions"
		resp := post(t, base, map[string]any{})
		created := decode(t, resp)
		sid, _ := created["id"].(string)
		if resp.StatusCode != http.StatusOK || sid == "" {
			t.Fatalf("create session: %d %v", resp.StatusCode, created)
		}
		resp = post(t, s.url+"/run_sse", map[string]any{
			"appName": model, "userId": "u1", "sessionId": sid, "streaming": true,
			"newMessage": map[string]any{"role": "user", "parts": []any{map[string]any{"text": "weather city=Paris"}}},
		})
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("run_sse: %d %s", resp.StatusCode, b)
		}
		var callIDs, resultIDs []string
		r := bufio.NewReader(resp.Body)
		for {
			ev, err := readSSE(r)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if msg, ok := ev.Data["error"]; ok {
				t.Fatalf("run_sse error: %v", msg)
			}
			content, _ := ev.Data["content"].(map[string]any)
			parts, _ := content["parts"].([]any)
			for _, p := range parts {
				part, _ := p.(map[string]any)
				if fc, ok := part["functionCall"].(map[string]any); ok && fc["name"] == "get_weather" {
					callIDs = append(callIDs, fmt.Sprint(fc["id"]))
				}
				if fr, ok := part["functionResponse"].(map[string]any); ok && fr["name"] == "get_weather" {
					resultIDs = append(resultIDs, fmt.Sprint(fr["id"]))
				}
			}
		}
		if len(callIDs) != 1 || len(resultIDs) != 1 || callIDs[0] != resultIDs[0] || callIDs[0] == "" {
			t.Fatalf("call ids %v, result ids %v\n%s", callIDs, resultIDs, s.logs)
		}
	})
	t.Run("init -f adk runs as is", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "new-adk")
		if out, err := exec.Command(binPath, "init", dir, "-f", "adk").CombinedOutput(); err != nil {
			t.Fatalf("init: %v\n%s", err, out)
		}
		appendYAML(t, dir, "python: "+py+"\n")
		s := startPython(t, dir)
		tr := streamTurn(t, s.url, map[string]any{"model": "new-adk", "input": "what is the weather in Paris?"}, nil)
		if tr.last != "response.completed" || tr.callNamed("get_weather") == nil {
			t.Fatalf("last %s, calls %v, text %q\n%s", tr.last, tr.calls, tr.text, s.logs)
		}
	})
}

// TestPythonPoolPreforked: with AGENTENGINE_PREFORK=on a pool's processes are forked from
// one zygote (the host's only child), serve runs, and a process killed with kill -9 is
// replaced by another fork of the same zygote.
func TestPythonPoolPreforked(t *testing.T) {
	t.Setenv("AGENTENGINE_PREFORK", "on")
	dir := copyPyProject(t, "testdata/pyfixture", "processes: 2\n")
	s := startPython(t, dir)
	kids := s.runnerPIDs()
	if len(kids) != 1 {
		t.Fatalf("host children %v, want the zygote alone", kids)
	}
	zygote := kids[0]
	forked := func() map[string]bool {
		out := map[string]bool{}
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", zygote))
		for _, f := range tasks {
			b, _ := os.ReadFile(f)
			for _, p := range strings.Fields(string(b)) {
				out[p] = true
			}
		}
		return out
	}
	if got := forked(); len(got) != 2 {
		t.Fatalf("zygote %d has children %v, want 2 runner processes", zygote, got)
	}
	run := func(conv string) string {
		return fixturePID(t, s, streamTurnNoFatal(s.url, map[string]any{"model": "pyfixture", "input": "sleep 0", "conversation": conv}))
	}
	// Idle members take runs in turn: two runs reach both processes.
	served := map[string]bool{run("a"): true, run("b"): true}
	if len(served) != 2 {
		t.Fatalf("two runs went to %v", served)
	}
	for pid := range served {
		if !forked()[pid] {
			t.Fatalf("run served by %s, not a child of the zygote %d (%v)", pid, zygote, forked())
		}
	}
	var victim string
	for pid := range served {
		victim = pid
	}
	n, _ := strconv.Atoi(victim)
	if err := syscall.Kill(n, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The kill takes effect a little later (a process's threads exit one by one): a run
	// sent meanwhile fails, as with a started process. Once the host has seen the exit,
	// no run may go to it.
	if err := testutil.Wait(20*time.Second, func() error {
		for _, l := range strings.Split(s.logs.String(), "\n") {
			if strings.Contains(l, "exited unexpectedly") && strings.Contains(l, "pid="+victim+" ") {
				return nil
			}
		}
		return errors.New("exit not logged")
	}); err != nil {
		t.Fatalf("%v\n%s", err, s.logs)
	}
	// Runs keep completing; the killed process's member forks a new one.
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		pid := run(fmt.Sprintf("after-%d", i))
		if !served[pid] {
			if !forked()[pid] {
				t.Fatalf("replacement %s is not a child of the zygote %d", pid, zygote)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no replacement process after kill -9 of %s\n%s", victim, s.logs)
		}
	}
	if !strings.Contains(s.logs.String(), "signal: killed") {
		t.Errorf("the log does not say how the process ended:\n%s", s.logs)
	}
}
