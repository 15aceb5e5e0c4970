package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentengine/agentengine/internal/testutil"
)

// These tests drive the real agentengine binary serving examples/echo-go, whose runner is
// a real go-plugin subprocess.

var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentengine-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = os.Getenv("AGENTENGINE_BIN")
	if binPath == "" {
		binPath = filepath.Join(dir, "agentengine")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build agentengine: %v\n%s", err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	url  string
	logs *syncBuffer
	// logsDone is closed when the server's stderr has been read to the end.
	logsDone chan struct{}
}

// syncBuffer collects the server's output; tests may read it while it is being written.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.WriteString(s)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

var servingLine = regexp.MustCompile(`serving .* on (http://127\.0\.0\.1:\d+)`)

// startServer runs `agentengine run` on a copy of examples/echo-go so each test has its
// own state directory; extra args are appended.
func startServer(t *testing.T, projectDir string, args ...string) *server {
	t.Helper()
	return startServerWithin(t, 90*time.Second, projectDir, args...)
}

// startServerWithin is startServer with a start deadline (Python runners import their
// framework; a first run may also create a virtualenv).
func startServerWithin(t *testing.T, wait time.Duration, projectDir string, args ...string) *server {
	t.Helper()
	all := append([]string{"run", projectDir, "--port", "0"}, args...)
	return launch(t, exec.Command(binPath, all...), wait, "server")
}

// launch starts cmd (an agentengine that serves) in its own process group, collects its
// log and waits up to wait for its serving line; what names it in failures.
func launch(t *testing.T, cmd *exec.Cmd, wait time.Duration, what string) *server {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, logs: &syncBuffer{}, logsDone: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			s.logs.WriteString(line + "\n")
			if m := servingLine.FindStringSubmatch(line); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		close(found)
		close(s.logsDone)
	}()
	select {
	case u, ok := <-found:
		if !ok {
			_ = cmd.Wait() // its exit status adds nothing to the logs below
			t.Fatalf("%s exited before serving:\n%s", what, s.logs)
		}
		s.url = u
	case <-time.After(wait):
		s.kill()
		t.Fatalf("%s did not start:\n%s", what, s.logs)
	}
	t.Cleanup(s.stop)
	return s
}

func (s *server) kill() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
}

func (s *server) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	// Read stderr to its end before Wait closes the pipe: the logs are then complete and
	// safe to read.
	go func() { <-s.logsDone; _ = s.cmd.Wait(); close(done) }() // stopped by us: the status is a signal
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		s.t.Errorf("server did not stop on SIGTERM")
		s.kill()
	}
	// Nothing of its process group (the runner) may be left behind.
	if err := syscall.Kill(-s.cmd.Process.Pid, 0); err == nil {
		s.t.Errorf("processes of the server's group are still alive after it stopped")
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// runnerPIDs lists the server's child processes (its runners).
func (s *server) runnerPIDs() []int {
	var pids []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", s.cmd.Process.Pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, p := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(p); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}

func copyProject(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "echo-go")
	src, err := filepath.Abs("../../examples/echo-go")
	if err != nil {
		t.Fatal(err)
	}
	// The runner is built from the example's package inside this module, so the copy is
	// a config that points back at it via a prebuilt binary.
	runner := filepath.Join(t.TempDir(), "echo-runner")
	if out, err := exec.Command("go", "build", "-o", runner, src).CombinedOutput(); err != nil {
		t.Fatalf("build echo runner: %v\n%s", err, out)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("name: echo-go\nframework: go\nbinary: %s\n", runner)
	if err := os.WriteFile(filepath.Join(dst, "agentengine.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

type sseEvent struct {
	Type string
	Data map[string]any
}

// readSSE parses one event block at a time from an SSE body.
func readSSE(r *bufio.Reader) (sseEvent, error) {
	var ev sseEvent
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if ev.Data != nil {
				return ev, nil
			}
		case strings.HasPrefix(line, "event: "):
			ev.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.Data); err != nil {
				return ev, fmt.Errorf("bad data line %q: %w", line, err)
			}
		}
	}
}

func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func decode(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStreamingAnswerFromTheExample(t *testing.T) {
	s := startServer(t, copyProject(t), "--session-backend", "memory")
	tr := streamTurn(t, s.url, map[string]any{"model": "echo-go", "input": "count to three"}, nil)
	if tr.text != "Echo: count to three" || tr.last != "response.completed" {
		t.Fatalf("streamed %q, last event %s", tr.text, tr.last)
	}
}

func TestKilledRunnerFailsTheRunAndTheNextRequestWorks(t *testing.T) {
	s := startServer(t, copyProject(t), "--session-backend", "memory")
	resp := post(t, s.url+"/v1/responses", map[string]any{
		"model": "echo-go", "input": "a long answer", "stream": true,
		"model_options": map[string]any{"deltas": 2000, "delay_ms": 5},
	})
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	deltas := 0
	var types []string
	killed := false
	for {
		ev, err := readSSE(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
		if ev.Type == "response.output_text.delta" {
			deltas++
			if deltas == 5 && !killed {
				pids := s.runnerPIDs()
				if len(pids) == 0 {
					t.Fatal("no runner process found")
				}
				for _, p := range pids {
					if err := syscall.Kill(p, syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
				}
				killed = true
			}
		}
		if ev.Type == "response.failed" {
			resp := ev.Data["response"].(map[string]any)
			if resp["status"] != "failed" || resp["error"] == nil {
				t.Fatalf("failed response %v", resp)
			}
		}
	}
	if !killed || len(types) == 0 || types[len(types)-1] != "response.failed" {
		t.Fatalf("stream ended with %v (killed %v)", types[len(types)-5:], killed)
	}
	// The next request gets a fresh runner.
	got := decode(t, post(t, s.url+"/v1/responses", map[string]any{"model": "echo-go", "input": "again"}))
	if got["status"] != "completed" || got["output_text"] != "Echo: again" {
		t.Fatalf("after the crash: %v", got)
	}
}

func TestDisconnectedClientDoesNotStopTheRun(t *testing.T) {
	s := startServer(t, copyProject(t), "--session-backend", "memory")
	ctx, cancel := context.WithCancel(context.Background())
	b, _ := json.Marshal(map[string]any{
		"model": "echo-go", "input": "keep going", "stream": true,
		"model_options": map[string]any{"deltas": 40, "delay_ms": 10},
	})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/v1/responses", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(resp.Body)
	ev, err := readSSE(r)
	if err != nil || ev.Type != "response.created" {
		t.Fatalf("first event %v %v", ev, err)
	}
	id := ev.Data["response"].(map[string]any)["id"].(string)
	for ev.Type != "response.output_text.delta" {
		if ev, err = readSSE(r); err != nil {
			t.Fatal(err)
		}
	}
	cancel() // the client goes away mid-stream
	resp.Body.Close()

	// Follow the stored response until it ends, then read its final state.
	follow, err := http.Get(s.url + "/v1/responses/" + id + "?stream=true")
	if err != nil {
		t.Fatal(err)
	}
	fr := bufio.NewReader(follow.Body)
	var last sseEvent
	for {
		ev, err := readSSE(fr)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		last = ev
	}
	follow.Body.Close()
	if last.Type != "response.completed" {
		t.Fatalf("followed stream ended with %s", last.Type)
	}
	got := decode(t, mustGet(t, s.url+"/v1/responses/"+id))
	text, _ := got["output_text"].(string)
	if got["status"] != "completed" || len(strings.Fields(text)) != 40 {
		t.Fatalf("final response %v", got)
	}
}

func mustGet(t *testing.T, url string) *http.Response {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestRestartMarksOrphanedRunsInterruptedAndKeepsSessions(t *testing.T) {
	dir := copyProject(t)
	s := startServer(t, dir)
	first := decode(t, post(t, s.url+"/v1/responses", map[string]any{"model": "echo-go", "input": "remember me", "conversation": "conv-1"}))
	if first["status"] != "completed" {
		t.Fatalf("first turn %v", first)
	}
	// A run in progress when the host dies hard.
	resp := post(t, s.url+"/v1/responses", map[string]any{
		"model": "echo-go", "input": "slow", "stream": true, "conversation": "conv-2",
		"model_options": map[string]any{"deltas": 1000, "delay_ms": 20},
	})
	r := bufio.NewReader(resp.Body)
	ev, err := readSSE(r)
	if err != nil {
		t.Fatal(err)
	}
	orphan := ev.Data["response"].(map[string]any)["id"].(string)
	// Read the stream for a while (several snapshot intervals) before the host dies.
	var streamed strings.Builder
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		ev, err := readSSE(r)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "response.output_text.delta" {
			fmt.Fprint(&streamed, ev.Data["delta"])
		}
	}
	s.kill()
	resp.Body.Close()

	s2 := startServer(t, dir)
	got := decode(t, mustGet(t, s2.url+"/v1/responses/"+orphan))
	if got["status"] == "in_progress" || got["status"] == "completed" {
		t.Fatalf("orphaned run after restart: %v", got["status"])
	}
	// The text streamed before the crash was stored as it streamed (stream snapshots):
	// the interrupted response keeps it, but for its last moments.
	kept := fmt.Sprint(got["output_text"])
	if kept == "" || !strings.HasPrefix(streamed.String(), kept) {
		t.Fatalf("the interrupted response kept %q of the %d bytes streamed before the crash (%q...)", kept, streamed.Len(), firstN(streamed.String(), 80))
	}
	// The SQLite session survived: history reaches the agent.
	h := decode(t, post(t, s2.url+"/v1/responses", map[string]any{"model": "echo-go", "input": "history", "conversation": "conv-1"}))
	if !strings.Contains(fmt.Sprint(h["output_text"]), "First user message: remember me") {
		t.Fatalf("history after restart: %v", h["output_text"])
	}
}

func TestNonLoopbackBindNeedsAToken(t *testing.T) {
	out, err := exec.Command(binPath, "run", copyProject(t), "--host", "0.0.0.0", "--port", "0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--token") {
		t.Fatalf("want a refusal naming --token, got %v: %s", err, out)
	}
}

func TestServesHealthOnAFreePort(t *testing.T) {
	// --port 0 picks a free port; the serving line names it.
	s := startServer(t, copyProject(t), "--session-backend", "memory")
	host, port, err := net.SplitHostPort(strings.TrimPrefix(s.url, "http://"))
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("url %s", s.url)
	}
	h := decode(t, mustGet(t, s.url+"/health"))
	if h["status"] != "ok" {
		t.Fatalf("health %v", h)
	}
}

// namedProject writes a project named name that runs the prebuilt echo runner of base.
func namedProject(t *testing.T, base, name string) string {
	t.Helper()
	cfg, err := os.ReadFile(filepath.Join(base, "agentengine.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	renamed := strings.Replace(string(cfg), "name: echo-go", "name: "+name, 1)
	if err := os.WriteFile(filepath.Join(dir, "agentengine.yaml"), []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSeveralAgentsInOneServer(t *testing.T) {
	base := copyProject(t)
	// Given beta first: the command line's order, not the alphabet's, is the agents' order.
	s := startServer(t, namedProject(t, base, "beta"), namedProject(t, base, "alpha"), "--session-backend", "memory")
	if got := len(s.runnerPIDs()); got != 2 {
		t.Fatalf("want one runner per project, found %d", got)
	}
	models := decode(t, mustGet(t, s.url+"/v1/models"))
	var ids []string
	for _, m := range models["data"].([]any) {
		ids = append(ids, m.(map[string]any)["id"].(string))
	}
	if strings.Join(ids, ",") != "beta,alpha" {
		t.Fatalf("models = %v", ids)
	}
	for _, name := range []string{"alpha", "beta"} {
		r := decode(t, post(t, s.url+"/v1/responses", map[string]any{"model": name, "input": "hi"}))
		if r["status"] != "completed" || r["model"] != name {
			t.Fatalf("%s: %v", name, r)
		}
	}
	resp := post(t, s.url+"/v1/responses", map[string]any{"model": "gamma", "input": "hi"})
	body := decode(t, resp)
	msg := fmt.Sprint(body["error"])
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(msg, "alpha") || !strings.Contains(msg, "beta") {
		t.Fatalf("unknown model: %d %v", resp.StatusCode, body)
	}
}

func TestTwoProjectsWithOneNameAreRefused(t *testing.T) {
	base := copyProject(t)
	out, err := exec.Command(binPath, "run", namedProject(t, base, "same"), namedProject(t, base, "same"), "--port", "0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), `two projects are named "same"`) {
		t.Fatalf("want a refusal, got %v: %s", err, out)
	}
}

func firstN(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// A runner that stops responding (SIGSTOP) is found by the stall timeout: the turn
// waiting on it fails with that reason instead of hanging, the process is replaced, and
// the next turn is answered.
func TestWedgedRunnerFailsTheTurnAndIsReplaced(t *testing.T) {
	s := startServer(t, copyProject(t), "--session-backend", "memory", "--runner-stall-timeout", "1s")
	// On a loaded machine the watchdog may find the first run slow and its process slow to
	// answer, and replace the process just after that run ended; the process to stop is
	// the one that served two turns in a row, a watchdog's ping apart.
	var pids []int
	testutil.Eventually(t, 30*time.Second, func() error {
		if got := decode(t, post(t, s.url+"/v1/responses", map[string]any{"model": "echo-go", "input": "warm up"})); got["status"] != "completed" {
			return fmt.Errorf("warm-up turn: %v", got)
		}
		time.Sleep(1500 * time.Millisecond)
		before := s.runnerPIDs()
		if got := decode(t, post(t, s.url+"/v1/responses", map[string]any{"model": "echo-go", "input": "warm up"})); got["status"] != "completed" {
			return fmt.Errorf("second warm-up turn: %v", got)
		}
		if after := s.runnerPIDs(); len(before) != 1 || !slices.Equal(before, after) {
			return fmt.Errorf("runner processes %v, then %v", before, after)
		}
		pids = before
		return nil
	})
	if err := syscall.Kill(pids[0], syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() error { return testutil.Stopped(pids[0]) })
	got := decode(t, post(t, s.url+"/v1/responses", map[string]any{"model": "echo-go", "input": "anyone there?"}))
	e, _ := got["error"].(map[string]any)
	if got["status"] != "failed" || e == nil || !strings.Contains(fmt.Sprint(e["message"]), "stopped responding") {
		t.Fatalf("turn on a wedged runner: %v", got)
	}
	got = decode(t, post(t, s.url+"/v1/responses", map[string]any{"model": "echo-go", "input": "again"}))
	if got["status"] != "completed" || got["output_text"] != "Echo: again" {
		t.Fatalf("turn after the replacement: %v", got)
	}
	// The wedged process is killed, not left stopped beside its replacement.
	testutil.Eventually(t, 10*time.Second, func() error {
		if p := s.runnerPIDs(); len(p) != 1 || p[0] == pids[0] {
			return fmt.Errorf("runner processes after the replacement %v (wedged %d)", p, pids[0])
		}
		return nil
	})
}
