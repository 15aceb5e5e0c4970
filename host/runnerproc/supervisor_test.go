package runnerproc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/host/runnerproc"
	"github.com/agentengine/agentengine/internal/testutil"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session/memory"
)

// bins holds the runner binaries built once by TestMain: echo-go, badlog, banner, stubborn,
// oldproto.
var bins string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "runnerproc-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	goTool, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "runnerproc tests need the go command:", err)
		return 1
	}
	build := exec.Command(goTool, "build", "-o", dir+string(filepath.Separator),
		"../../examples/echo-go", "./testdata/badlog", "./testdata/banner", "./testdata/stubborn", "./testdata/oldproto")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build test runners: %v\n%s", err, out)
		return 1
	}
	bins = dir
	return m.Run()
}

func bin(name string) string { return filepath.Join(bins, name) }

// logSink collects a logger's JSON records.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *logSink) records(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(s.buf.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func (s *logSink) find(t *testing.T, level, msgPrefix string) map[string]any {
	t.Helper()
	for _, r := range s.records(t) {
		if r["@level"] == level && strings.HasPrefix(fmt.Sprint(r["@message"]), msgPrefix) {
			return r
		}
	}
	return nil
}

func newLogger(sink *logSink) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Trace, Output: sink, JSONFormat: true})
}

func newSupervisor(t *testing.T, cfg runnerproc.Config) (*runnerproc.Supervisor, *logSink) {
	t.Helper()
	sink := &logSink{}
	if cfg.Logger == nil {
		cfg.Logger = newLogger(sink)
	}
	if cfg.KillTimeout == 0 {
		cfg.KillTimeout = 2 * time.Second
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	s := runnerproc.New(cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, sink
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func runReq(input string, modelOptions string) *runnerv1.RunRequest {
	p := map[string]any{"input": input}
	if modelOptions != "" {
		p["model_options"] = json.RawMessage(modelOptions)
	}
	b, _ := json.Marshal(p)
	return &runnerv1.RunRequest{SessionId: "s1", InvocationId: "inv1", PayloadJson: b}
}

// drain reads a run to its end and returns the text and the kinds of events.
func drain(t *testing.T, s runnerv1.RunnerClient, req *runnerv1.RunRequest) (string, []string) {
	t.Helper()
	st, err := s.Run(ctxT(t), req)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var text strings.Builder
	var kinds []string
	for {
		ev, err := st.Recv()
		if err == io.EOF {
			return text.String(), kinds
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		switch e := ev.Event.(type) {
		case *runnerv1.RunEvent_TextDelta:
			text.WriteString(e.TextDelta.Text)
			kinds = append(kinds, "text")
		case *runnerv1.RunEvent_ReasoningDelta:
			kinds = append(kinds, "reasoning")
		case *runnerv1.RunEvent_Usage:
			kinds = append(kinds, "usage")
		case *runnerv1.RunEvent_Error:
			kinds = append(kinds, "error:"+e.Error.Code)
		default:
			kinds = append(kinds, fmt.Sprintf("%T", e))
		}
	}
}

func groupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// processGone: no such process, or only a zombie waiting for whoever reaps orphans here.
func processGone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return os.IsNotExist(err)
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

func waitGone(t *testing.T, what string, gone func() bool) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() error {
		if !gone() {
			return fmt.Errorf("%s still exists", what)
		}
		return nil
	})
}

func TestEchoRunner(t *testing.T) {
	s, _ := newSupervisor(t, runnerproc.Config{Name: "echo-go", Command: []string{bin("echo-go")}})
	ctx := ctxT(t)
	t0 := time.Now()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("cold start (spawn + handshake + dial + health check): %.1f ms", float64(time.Since(t0).Microseconds())/1000)

	d, err := s.Describe(ctx, &runnerv1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if d.AgentName != "echo-go" || d.Framework != "go" || d.ProtocolVersion != "1" || !d.Capabilities.GetResume() || !d.Capabilities.GetSummarize() {
		t.Errorf("Describe = %v", d)
	}
	// The Go SDK serves its runs on a run lane, in the socket directory the host made.
	if lane := d.GetRunLane(); !strings.HasSuffix(lane, ".lane") || !filepath.IsAbs(lane) {
		t.Errorf("Describe names run lane %q, want the Go SDK's", lane)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}

	tests := []struct {
		input, wantText string
		wantKinds       []string
	}{
		{"hello there", "Echo: hello there", []string{"reasoning", "text", "usage"}},
		{"fail", "", []string{"error:agent_error"}},
		{"panic", "", []string{"error:agent_panic"}},
		{"use the tool on x", `The lookup tool says "x" has 1 characters and 1 words.`, []string{"text", "usage"}},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			text, kinds := drain(t, s, runReq(tt.input, ""))
			if text != tt.wantText {
				t.Errorf("text %q, want %q", text, tt.wantText)
			}
			for _, k := range tt.wantKinds {
				if !strings.Contains(strings.Join(kinds, " "), k) {
					t.Errorf("kinds %v lack %q", kinds, k)
				}
			}
		})
	}
	// A panic in one run does not take the runner down.
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping after panic: %v", err)
	}

	sum, err := s.Summarize(ctx, &runnerv1.SummarizeRequest{HistoryJson: []byte(`[{"role":"user","content":"hi"}]`)})
	if err != nil || !strings.Contains(sum.GetSummary(), "1 messages") {
		t.Errorf("Summarize = %v, %v", sum, err)
	}

	pid := s.PID()
	if pid <= 0 {
		t.Fatalf("PID = %d", pid)
	}
	// A run in flight when Close comes fails with ErrClosed.
	st, err := s.Run(ctx, runReq("slow", `{"deltas":100000,"delay_ms":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("graceful Close: %.1f ms", float64(time.Since(t0).Microseconds())/1000)
	for err == nil {
		_, err = st.Recv()
	}
	if !errors.Is(err, runnerproc.ErrClosed) {
		t.Errorf("in-flight run after Close: %v, want ErrClosed", err)
	}
	waitGone(t, "runner process group", func() bool { return groupGone(pid) })
	if s.PID() != 0 {
		t.Error("PID after Close")
	}
	if _, err := s.Run(ctx, runReq("x", "")); !errors.Is(err, runnerproc.ErrClosed) {
		t.Errorf("Run after Close = %v, want ErrClosed", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, runnerproc.ErrClosed) {
		t.Errorf("Ping after Close = %v, want ErrClosed", err)
	}
}

func TestRunnerEnvironmentIsOnlyConfigured(t *testing.T) {
	t.Setenv("RUNNERPROC_TEST_SECRET", "do-not-leak")
	s, _ := newSupervisor(t, runnerproc.Config{Command: []string{bin("badlog")}, Env: []string{"ONLY_THIS=1"}})
	text, _ := drain(t, s, runReq("env", ""))
	for _, kv := range strings.Split(text, "\n") {
		k, _, _ := strings.Cut(kv, "=")
		if k != "ONLY_THIS" && k != "AGENTENGINE_RUNNER" && !strings.HasPrefix(k, "PLUGIN_") {
			t.Errorf("unexpected variable in the runner's environment: %q", kv)
		}
	}
	if !strings.Contains(text, "ONLY_THIS=1") || !strings.Contains(text, "PLUGIN_UNIX_SOCKET_DIR=") {
		t.Errorf("environment %q", text)
	}
}

// lifecycle records a supervisor's Events.
type lifecycle struct {
	mu               sync.Mutex
	started, stopped int
	failed           []string
}

func (l *lifecycle) events() runnerproc.Events {
	return runnerproc.Events{
		Started: func() { l.mu.Lock(); l.started++; l.mu.Unlock() },
		Stopped: func() { l.mu.Lock(); l.stopped++; l.mu.Unlock() },
		Failed:  func(r string) { l.mu.Lock(); l.failed = append(l.failed, r); l.mu.Unlock() },
	}
}

func (l *lifecycle) get() (started, stopped int, failed []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.started, l.stopped, append([]string(nil), l.failed...)
}

func TestKillMidStreamFailsRunAndRestarts(t *testing.T) {
	var lc lifecycle
	s, sink := newSupervisor(t, runnerproc.Config{
		Command: []string{bin("echo-go")},
		Env:     []string{"ECHO_DELAY_MS=1", "ECHO_DELTAS=100000"},
		Events:  lc.events(),
	})
	ctx := ctxT(t)
	st, err := s.Run(ctx, runReq("long stream", ""))
	if err != nil {
		t.Fatal(err)
	}
	for seen := 0; seen < 5; {
		ev, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetTextDelta() != nil {
			seen++
		}
	}
	pid := s.PID()
	t0 := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for {
		_, err = st.Recv()
		if err != nil {
			break
		}
	}
	t.Logf("kill -9 to stream error: %.2f ms", float64(time.Since(t0).Microseconds())/1000)
	if !errors.Is(err, runnerproc.ErrExited) {
		t.Fatalf("stream error %v, want ErrExited", err)
	}

	// The next run gets a fresh process, without waiting for a backoff.
	text, _ := drain(t, s, runReq("again", `{"deltas":0,"delay_ms":0}`))
	if text != "Echo: again" {
		t.Fatalf("text after restart %q", text)
	}
	if s.PID() == pid || s.PID() == 0 {
		t.Fatalf("PID after restart %d (old %d)", s.PID(), pid)
	}
	waitGone(t, "killed runner's process group", func() bool { return groupGone(pid) })
	waitGone(t, "crash log record", func() bool { return sink.find(t, "error", "runner process exited unexpectedly") != nil })
	// Metrics see two processes started, the killed one gone, one unasked exit.
	if started, stopped, failed := lc.get(); started != 2 || stopped != 1 || !slices.Equal(failed, []string{"exited"}) {
		t.Fatalf("events: started %d, stopped %d, failed %v; want 2, 1, [exited]", started, stopped, failed)
	}
}

// A run sent while the runner's lane has broken but the process is not yet known dead
// never reached the runner: it goes to a fresh process instead of failing.
func TestRunOnABrokenLaneGoesToAFreshProcess(t *testing.T) {
	s, _ := newSupervisor(t, runnerproc.Config{Command: []string{bin("echo-go")}})
	if text, _ := drain(t, s, runReq("first", `{"deltas":0,"delay_ms":0}`)); text != "Echo: first" {
		t.Fatalf("first run: %q", text)
	}
	pid := s.PID()
	if !runnerproc.BreakLane(s) {
		t.Fatal("echo-go runs without a run lane")
	}
	text, _ := drain(t, s, runReq("second", `{"deltas":0,"delay_ms":0}`))
	if text != "Echo: second" {
		t.Fatalf("run on the broken lane: %q", text)
	}
	if s.PID() == pid || s.PID() == 0 {
		t.Fatalf("PID after the broken lane %d (old %d)", s.PID(), pid)
	}
}

// The window the Web and API surfaces hit after a runner's kill -9: go-plugin has reaped
// the process but not yet said so. The next run must not go to the dead process.
func TestRunRightAfterAReapedKillGoesToAFreshProcess(t *testing.T) {
	s, _ := newSupervisor(t, runnerproc.Config{
		Command: []string{bin("echo-go")},
		Backoff: runnerproc.Backoff{Reset: time.Nanosecond}, // every kill is a first failure: no wait
	})
	for round := range 5 {
		if text, _ := drain(t, s, runReq("warm", `{"deltas":0,"delay_ms":0}`)); text != "Echo: warm" {
			t.Fatalf("round %d: warm-up run: %q", round, text)
		}
		pid := s.PID()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitGone(t, "killed runner", func() bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) })
		if text, _ := drain(t, s, runReq("after", `{"deltas":0,"delay_ms":0}`)); text != "Echo: after" {
			t.Fatalf("round %d: run right after the kill: %q", round, text)
		}
	}
}

func TestCancelRunKeepsRunner(t *testing.T) {
	s, _ := newSupervisor(t, runnerproc.Config{Command: []string{bin("echo-go")}})
	ctx, cancel := context.WithCancel(ctxT(t))
	st, err := s.Run(ctx, runReq("slow", `{"deltas":100000,"delay_ms":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	cancel()
	for {
		_, err = st.Recv()
		if err != nil {
			break
		}
	}
	if status.Code(err) != codes.Canceled || errors.Is(err, runnerproc.ErrExited) {
		t.Fatalf("Recv after cancel = %v, want Canceled", err)
	}
	if text, _ := drain(t, s, runReq("still there", "")); text != "Echo: still there" || s.PID() != pid {
		t.Fatalf("after cancel: text %q, pid %d (was %d)", text, s.PID(), pid)
	}
}

func TestHostileOutputDoesNotCrashHost(t *testing.T) {
	s, sink := newSupervisor(t, runnerproc.Config{Command: []string{bin("badlog")}})
	// Twice: the junk is written at startup (before the handshake) and during each run.
	for range 2 {
		drain(t, s, runReq("x", ""))
	}
	if err := s.Ping(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "last junk line", func() bool { return sink.find(t, "error", "the end") != nil })

	checks := []struct {
		level, msg string
		check      func(r map[string]any) bool
	}{
		{"debug", `{"@message": 5}`, nil},
		{"debug", `{"@message":"typed level","@level":5}`, nil},
		{"info", "hello from badlog", func(r map[string]any) bool {
			return r["count"] == "3" && r["module"] == "runner.badlog" && r["stream"] == "stderr"
		}},
		{"debug", "{not json", nil},
		{"warn", "[WARN] a prefixed warning", nil},
		{"debug", "escape \uFFFD[31mred", nil},
		{"debug", "xxxxxxxx", func(r map[string]any) bool {
			return r["truncated_at_bytes"] != nil && len(fmt.Sprint(r["@message"])) <= 16<<10
		}},
		{"info", `{"@message": 5}`, func(r map[string]any) bool { return r["stream"] == "stdout" }},
	}
	for _, c := range checks {
		r := sink.find(t, c.level, c.msg)
		if r == nil {
			t.Errorf("no %s record starting %q", c.level, c.msg)
			continue
		}
		if c.check != nil && !c.check(r) {
			t.Errorf("record %v", r)
		}
	}
}

func TestStartErrors(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	tests := []struct {
		name    string
		cfg     runnerproc.Config
		want    []string
		maxWait time.Duration
	}{
		{name: "stdout before handshake", cfg: runnerproc.Config{Command: []string{bin("banner")}},
			want: []string{`printed "Welcome to banner 1.0" to stdout`}},
		{name: "exits at once", cfg: runnerproc.Config{Command: []string{sh, "-c", "echo 'ImportError: no module named agent' >&2; exit 3"}},
			want: []string{"without the go-plugin handshake", "exit status 3", "\nlast stderr lines:\n  ImportError: no module named agent"}},
		{name: "never calls Serve", cfg: runnerproc.Config{Command: []string{sh, "-c", "exit 0"}},
			want: []string{"without the go-plugin handshake line", "pluginsdk.Serve in its main", "exit status 0"}},
		{name: "handshake version mismatch", cfg: runnerproc.Config{Command: []string{sh, "-c", "echo '1|7|unix|/nonexistent.sock|grpc'; sleep 5"}},
			want: []string{"handshake version does not match", "Plugin version: 7", "rebuild it with the pluginsdk that comes with this agentengine"}},
		{name: "magic cookie mismatch", cfg: runnerproc.Config{Command: []string{sh, "-c", "echo 'This binary is a plugin. These are not meant to be executed directly.' >&2; exit 1"}},
			want: []string{"magic cookie", "serve with pluginsdk.Serve"}},
		{name: "never handshakes", cfg: runnerproc.Config{Command: []string{sleep, "30"}, StartTimeout: 300 * time.Millisecond},
			want: []string{"no go-plugin handshake within the start timeout (300ms)"}},
		{name: "missing binary", cfg: runnerproc.Config{Command: []string{"/nonexistent/runner"}},
			want: []string{"/nonexistent/runner", "no such file"}},
		{name: "relative command", cfg: runnerproc.Config{Command: []string{"echo-go"}},
			want: []string{"must be an absolute path"}},
		{name: "no command", want: []string{"no command"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newSupervisor(t, tt.cfg)
			err := s.Start(ctxT(t))
			if err == nil {
				t.Fatal("Start succeeded")
			}
			t.Log(err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestBackoffAfterFailedStarts(t *testing.T) {
	var lc lifecycle
	s, _ := newSupervisor(t, runnerproc.Config{
		Events:  lc.events(),
		Command: []string{bin("banner")},
		Backoff: runnerproc.Backoff{Initial: time.Minute},
	})
	ctx := ctxT(t)
	if err := s.Startable(); err != nil {
		t.Fatalf("Startable before any attempt: %v", err)
	}
	for i, wantBackoff := range []bool{false, false, true, true} {
		err := s.Start(ctx)
		if err == nil {
			t.Fatalf("attempt %d started", i)
		}
		if got := errors.Is(err, runnerproc.ErrBackoff); got != wantBackoff {
			t.Fatalf("attempt %d: %v (backoff %v, want %v)", i, err, got, wantBackoff)
		}
	}
	if _, err := s.Run(ctx, runReq("x", "")); !errors.Is(err, runnerproc.ErrBackoff) || !strings.Contains(err.Error(), "next start attempt in") {
		t.Fatalf("Run while backing off = %v", err)
	}
	if err := s.Startable(); !errors.Is(err, runnerproc.ErrBackoff) {
		t.Fatalf("Startable while backing off = %v", err)
	}
	// Two real attempts failed; the refusals while backing off started nothing.
	if started, _, failed := lc.get(); started != 0 || !slices.Equal(failed, []string{"start_failed", "start_failed"}) {
		t.Fatalf("events: started %d, failed %v", started, failed)
	}
	// Readiness follows: a host whose agent's runner cannot start is not ready.
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "banner", Runner: s}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Ready(ctx); !errors.Is(err, host.ErrUnavailable) || !strings.Contains(host.ClientMessage(err), `"banner"`) {
		t.Fatalf("Ready with a runner backing off = %v", err)
	}
}

func TestCloseKillsStubbornProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	s, sink := newSupervisor(t, runnerproc.Config{
		Command:     []string{bin("stubborn")},
		Env:         []string{"STUBBORN_PIDFILE=" + pidFile},
		KillTimeout: 300 * time.Millisecond,
	})
	ctx := ctxT(t)
	if text, _ := drain(t, s, runReq("x", "")); text != "still here" {
		t.Fatalf("text %q", text)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(string(b))
	pgid := s.PID()

	t0 := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { errs[i] = s.Close(ctx) }) // concurrent Close calls are fine
	}
	wg.Wait()
	t.Logf("Close of a runner that ignores Shutdown, with a grandchild holding stderr: %v", time.Since(t0).Round(time.Millisecond))
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Fatalf("Close took %v", d)
	}
	waitGone(t, "runner process group", func() bool { return groupGone(pgid) })
	waitGone(t, "grandchild", func() bool { return processGone(child) })
	if sink.find(t, "warn", "runner did not exit in time") == nil {
		t.Error("no record of the forced kill")
	}
	if err := s.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCloseDuringSlowStart(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	s := runnerproc.New(runnerproc.Config{Command: []string{sleep, "30"}, StartTimeout: time.Minute})
	started := make(chan error, 1)
	go func() { started <- s.Start(context.Background()) }()
	time.Sleep(200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-started:
		if !errors.Is(err, runnerproc.ErrClosed) {
			t.Fatalf("Start = %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Start still waiting after Close")
	}
}

func TestHungRunnerIsReplaced(t *testing.T) {
	var lc lifecycle
	s, sink := newSupervisor(t, runnerproc.Config{
		Events:         lc.events(),
		Command:        []string{bin("echo-go")},
		HealthInterval: 100 * time.Millisecond,
		HealthTimeout:  100 * time.Millisecond,
		KillTimeout:    300 * time.Millisecond,
	})
	ctx := ctxT(t)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	// A stopped process keeps its socket open but answers nothing: only health checks
	// can tell.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "hung runner", func() bool { return s.PID() != pid })
	if text, _ := drain(t, s, runReq("back", "")); text != "Echo: back" {
		t.Fatalf("text %q", text)
	}
	waitGone(t, "hung runner's group", func() bool { return groupGone(pid) })
	if sink.find(t, "warn", "retiring runner process") == nil {
		t.Error("no retire record")
	}
	waitGone(t, "the hung runner's unhealthy end", func() bool { _, _, f := lc.get(); return len(f) > 0 })
	if _, _, failed := lc.get(); !slices.Equal(failed, []string{"unhealthy"}) {
		t.Fatalf("failed events %v, want [unhealthy]", failed)
	}
}

func TestRunnerRunDirectlyExplainsItself(t *testing.T) {
	cmd := exec.Command(bin("echo-go"))
	cmd.Env = []string{}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v", err)
	}
	for _, w := range []string{"agentengine runner", "agentengine run", "AGENTENGINE_RUNNER"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr %q lacks %q", stderr.String(), w)
		}
	}
}

func TestRunnerExitsWhenHostDies(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	// sh plays a host that dies without stopping its runner.
	pidFile := filepath.Join(t.TempDir(), "runner.pid")
	cmd := exec.Command(sh, "-c", `"$0" & echo $! > "$1"; sleep 0.3`, bin("echo-go"), pidFile)
	cmd.Env = []string{"AGENTENGINE_RUNNER=agentengine-runner-v1", "PLUGIN_PROTOCOL_VERSIONS=1", "PLUGIN_UNIX_SOCKET_DIR=" + t.TempDir()}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	waitGone(t, "orphaned runner", func() bool { return processGone(pid) })
}

// A runner that stops responding while a run waits on it (here: SIGSTOP, with the
// periodic health check too far off to notice) is found by the stall watchdog: the run
// fails with ErrUnresponsive, Startable (the readiness probe) reports it until a new
// process serves, and one is started without waiting for a call.
func TestWedgedRunnerFailsItsRunAndIsReplaced(t *testing.T) {
	// A copy of the runner, removed while the process is wedged so that the replacement
	// cannot start yet: the window the readiness probe must report stays open.
	exe := filepath.Join(t.TempDir(), "echo-go")
	b, err := os.ReadFile(bin("echo-go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	s, sink := newSupervisor(t, runnerproc.Config{
		Command:        []string{exe},
		HealthInterval: time.Hour,
		HealthTimeout:  200 * time.Millisecond,
		StallTimeout:   200 * time.Millisecond,
		KillTimeout:    200 * time.Millisecond,
		Backoff:        runnerproc.Backoff{Initial: time.Millisecond, Max: time.Millisecond},
	})
	ctx := ctxT(t)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, func() error { return testutil.Stopped(pid) })
	st, err := s.Run(ctx, runReq("anyone there?", ""))
	if err == nil {
		for err == nil {
			_, err = st.Recv()
		}
	}
	var u interface{ Unresponsive() bool }
	if !errors.Is(err, runnerproc.ErrUnresponsive) || !errors.Is(err, runnerproc.ErrExited) || !errors.As(err, &u) || !strings.Contains(err.Error(), "no health answer") {
		t.Fatalf("run on a wedged runner: %v", err)
	}
	if err := s.Startable(); !errors.Is(err, runnerproc.ErrUnresponsive) {
		t.Errorf("Startable while no process replaced the wedged one: %v", err)
	}
	waitGone(t, "wedged runner's group", func() bool { return groupGone(pid) })
	// The runner is back: a new process starts and serves.
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		if err := s.Start(ctx); err != nil {
			return err
		}
		return s.Startable()
	})
	if text, _ := drain(t, s, runReq("back", "")); text != "Echo: back" || s.PID() == pid {
		t.Fatalf("after the replacement: text %q, pid %d (wedged %d)", text, s.PID(), pid)
	}
	if sink.find(t, "error", "runner process stopped responding") == nil {
		t.Error("no record of the wedged runner")
	}
}
