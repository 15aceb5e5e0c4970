package main

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// versioned answers with its version; a "hold" run waits for release.
type versioned struct {
	version string
	release chan struct{}
}

func (v *versioned) Info() pluginsdk.Info { return pluginsdk.Info{Name: "a", Framework: "go"} }

func (v *versioned) Run(ctx context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	if err := emit.Text(v.version); err != nil {
		return err
	}
	if req.Payload.InputText() == "hold" {
		select {
		case <-v.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return emit.MessageDone("")
}

// testRunner is an in-process runner that records its Close.
type testRunner struct {
	runnerv1.RunnerClient
	stop   func()
	mu     sync.Mutex
	closed bool
}

func (r *testRunner) Start(context.Context) error { return nil }
func (r *testRunner) Close(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.closed = true
		r.stop()
	}
	return nil
}
func (r *testRunner) isClosed() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.closed }

func newTestRunner(v *versioned) *testRunner {
	c, stop := inprocess.Serve(v)
	return &testRunner{RunnerClient: c, stop: stop}
}

func runText(t *testing.T, r runnerv1.RunnerClient, input string) (string, error) {
	t.Helper()
	stream, err := r.Run(context.Background(), &runnerv1.RunRequest{PayloadJson: []byte(`{"input":"` + input + `"}`)})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return b.String(), nil
		}
		if err != nil {
			return b.String(), err
		}
		for _, e := range ev.Events() {
			b.WriteString(e.GetTextDelta().GetText())
		}
	}
}

func TestSlotSwapLetsRunsInFlightFinish(t *testing.T) {
	v1 := &versioned{version: "v1", release: make(chan struct{})}
	r1 := newTestRunner(v1)
	slot := newSlot("a", r1, nil)
	t.Cleanup(func() { _ = slot.Close(context.Background()) })

	held := make(chan string, 1)
	go func() {
		text, err := runText(t, slot, "hold")
		if err != nil {
			text = "error: " + err.Error()
		}
		held <- text
	}()
	// Wait until the held run is counted on r1.
	slot.mu.Lock()
	first := slot.cur
	slot.mu.Unlock()
	for deadline := time.Now().Add(10 * time.Second); first.inFlight.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the held run never started")
		}
	}
	retired := make(chan string, 1)
	slot.swap(newTestRunner(&versioned{version: "v2"}), ".reload1", time.Minute, func(build string) { retired <- build })
	if got, err := runText(t, slot, "x"); err != nil || got != "v2" {
		t.Fatalf("a run after the swap: %q, %v", got, err)
	}
	if r1.isClosed() {
		t.Fatal("the old runner closed with a run in flight")
	}
	close(v1.release)
	if got := <-held; got != "v1" {
		t.Fatalf("the run in flight ended %q, want it finished on v1", got)
	}
	select {
	case build := <-retired:
		if build != "" || !r1.isClosed() {
			t.Fatalf("retired %q, closed %v", build, r1.isClosed())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the old runner was not retired once its run ended")
	}
}

func TestEmptySlotNamesItsError(t *testing.T) {
	slot := newSlot("broken", nil, errors.New("build failed: undefined: x"))
	_, err := runText(t, slot, "x")
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), `agent "broken" is unavailable: build failed: undefined: x`) {
		t.Fatalf("err = %v", err)
	}
	if err := slot.Startable(); err == nil || !strings.Contains(err.Error(), "undefined: x") {
		t.Fatalf("Startable = %v", err)
	}
	v := &versioned{version: "fixed"}
	slot.swap(newTestRunner(v), "", time.Second, nil)
	t.Cleanup(func() { _ = slot.Close(context.Background()) })
	if got, err := runText(t, slot, "x"); err != nil || got != "fixed" {
		t.Fatalf("after a good reload: %q, %v", got, err)
	}
}

func TestReloadIgnores(t *testing.T) {
	for path, want := range map[string]bool{
		"agent.py": false, "pkg/tools.py": false, "requirements.txt": false, "agentengine.yaml": false, "main.go": false,
		".venv/lib/x.py": true, ".agentengine/ui/sessions.sqlite": true, "pkg/__pycache__/tools.cpython-311.pyc": true,
		"node_modules/a/index.js": true, ".git/HEAD": true, "agent.py~": true, ".agent.py.swp": true, "4913": true,
		".#agent.py": true, "#agent.py#": true, "notes.sqlite-journal": true,
	} {
		if got := ignoredPath(path); got != want {
			t.Errorf("ignoredPath(%q) = %v, want %v", path, got, want)
		}
	}
}
