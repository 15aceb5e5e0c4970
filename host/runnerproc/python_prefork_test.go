package runnerproc_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host/prefork"
	"github.com/agentengine/agentengine/host/runnerproc"
)

// Runner processes forked from a zygote (host/prefork) serve, crash and restart like
// started ones; the zygote's own death takes none of them with it.

type forkFixture struct {
	sdk, py string
	env     []string
	zygote  *prefork.Zygote
}

func newForkFixture(t *testing.T, module string) *forkFixture {
	t.Helper()
	sdk, err := filepath.Abs("../../pluginsdk/python/src")
	if err != nil {
		t.Fatal(err)
	}
	f := &forkFixture{sdk: sdk, py: sdkPython(t, sdk)}
	f.env = []string{"HOME=" + os.Getenv("HOME"), "PYTHONPATH=" + sdk}
	f.zygote = prefork.New(prefork.Config{
		Command: []string{f.py, "-u", "-m", "agentengine_runner", module},
		Env:     f.env, StartTimeout: 30 * time.Second,
	})
	t.Cleanup(func() { _ = f.zygote.Close(context.Background()) })
	return f
}

func (f *forkFixture) supervisor(t *testing.T, name string) (*runnerproc.Supervisor, *logSink) {
	t.Helper()
	return newSupervisor(t, runnerproc.Config{
		Name:    name,
		Command: []string{f.py},
		Env:     f.env,
		Fork: func(ctx context.Context, env []string, stdout, stderr *os.File) (runnerproc.Forked, error) {
			c, err := f.zygote.Fork(ctx, env, stdout, stderr)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
		Backoff: runnerproc.Backoff{Initial: 10 * time.Millisecond},
	})
}

// ppid reads a process's parent pid from /proc.
func ppid(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, _ := strconv.Atoi(f[1])
	return n
}

func echo(t *testing.T, s *runnerproc.Supervisor, input string) {
	t.Helper()
	evs, err := runEvents(ctxT(t), s, demoReq(input, map[string]any{"input": input}))
	if err != nil {
		t.Fatalf("run %q: %v", input, err)
	}
	var text strings.Builder
	for _, ev := range evs {
		text.WriteString(ev.GetTextDelta().GetText())
	}
	if text.String() != input {
		t.Fatalf("run %q answered %q", input, text.String())
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestPythonForkedRunnersServeAndRecover(t *testing.T) {
	f := newForkFixture(t, "agentengine_runner.testing.demo:DemoRunner")
	a, logA := f.supervisor(t, "a")
	b, _ := f.supervisor(t, "b")
	for _, s := range []*runnerproc.Supervisor{a, b} {
		if err := s.Start(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	zpid := f.zygote.PID()
	if zpid == 0 {
		t.Fatal("no zygote running")
	}
	if a.PID() == b.PID() || ppid(t, a.PID()) != zpid || ppid(t, b.PID()) != zpid {
		t.Fatalf("runners %d and %d are not both children of the zygote %d", a.PID(), b.PID(), zpid)
	}
	// Each has its own process group (the host kills a runner's group).
	if pg, _ := syscall.Getpgid(a.PID()); pg != a.PID() {
		t.Fatalf("runner %d is in process group %d", a.PID(), pg)
	}
	echo(t, a, "one")
	echo(t, b, "two")

	// kill -9 of a runner: its supervisor sees the exit (status from the zygote) and
	// forks a new one from the same zygote.
	old := a.PID()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the killed runner's exit", func() bool { return logA.find(t, "error", "runner process exited unexpectedly") != nil })
	if r := logA.find(t, "error", "runner process exited unexpectedly"); r["status"] != "signal: killed" {
		t.Fatalf("exit logged as %v", r["status"])
	}
	echo(t, a, "three")
	if a.PID() == old || ppid(t, a.PID()) != zpid {
		t.Fatalf("replacement %d (was %d) is not a child of the zygote %d", a.PID(), old, zpid)
	}

	// kill -9 of the zygote: the runners serve on; the next fork starts a new zygote.
	if err := syscall.Kill(zpid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the zygote's death", func() bool { return f.zygote.PID() == 0 })
	echo(t, a, "four")
	echo(t, b, "five")
	old = b.PID()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The orphan's exit is seen without the zygote (pidfd), and its replacement comes
	// from a new zygote.
	waitFor(t, "the orphaned runner's exit", func() bool { return b.PID() == 0 })
	echo(t, b, "six")
	if z := f.zygote.PID(); z == 0 || z == zpid || ppid(t, b.PID()) != z {
		t.Fatalf("runner %d: zygote %d (old %d)", b.PID(), z, zpid)
	}

	// Close stops the runner (its group) and the zygote.
	pid := b.PID()
	if err := b.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err == nil && ppid(t, pid) != 1 {
		waitFor(t, "the closed runner's exit", func() bool { return syscall.Kill(pid, 0) != nil })
	}
	z := f.zygote.PID()
	if err := f.zygote.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(z, 0); err == nil {
		t.Fatalf("zygote %d still runs after Close", z)
	}
}

// A runner whose import fails: the start error quotes why, from the zygote's log.
func TestPythonForkedRunnerImportErrorIsReported(t *testing.T) {
	f := newForkFixture(t, "no_such_module_for_prefork:runner")
	s, _ := f.supervisor(t, "broken")
	err := s.Start(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "No module named 'no_such_module_for_prefork'") {
		t.Fatalf("start error: %v", err)
	}
}
