package runnerproc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agentengine/agentengine/host/runnerproc"
	"github.com/agentengine/agentengine/internal/runnerplugin"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// The Python SDK's runs travel the run lane (one socket for every run) unless the runner is
// told not to offer it; either way the host sees the same events.

// startPyDemo starts the SDK's demo runner (agentengine_runner.testing.demo); laneOff makes
// it offer no run lane.
func startPyDemo(t *testing.T, laneOff bool) *runnerproc.Supervisor {
	t.Helper()
	sdk, err := filepath.Abs("../../pluginsdk/python/src")
	if err != nil {
		t.Fatal(err)
	}
	py := sdkPython(t, sdk)
	env := []string{"HOME=" + os.Getenv("HOME"), "PYTHONPATH=" + sdk}
	if laneOff {
		env = append(env, runnerplugin.RunLaneEnv+"=off")
	}
	sup, _ := newSupervisor(t, runnerproc.Config{
		Name:    "demo",
		Command: []string{py, "-u", "-m", "agentengine_runner", "agentengine_runner.testing.demo:DemoRunner"},
		Env:     env,
	})
	if err := sup.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return sup
}

func demoReq(invocation string, payload map[string]any) *runnerv1.RunRequest {
	b, _ := json.Marshal(payload)
	return &runnerv1.RunRequest{SessionId: "s-" + invocation, InvocationId: invocation, PayloadJson: b}
}

// runEvents runs req to its end and returns its events, batches unpacked.
func runEvents(ctx context.Context, sup *runnerproc.Supervisor, req *runnerv1.RunRequest) ([]*runnerv1.RunEvent, error) {
	st, err := sup.Run(ctx, req)
	if err != nil {
		return nil, err
	}
	var out []*runnerv1.RunEvent
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev.Events()...)
	}
}

func TestPythonRunLaneCarriesTheSameEventsAsRunCalls(t *testing.T) {
	lane, calls := startPyDemo(t, false), startPyDemo(t, true)
	d, err := lane.Describe(ctxT(t), &runnerv1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if d.GetRunLane() == "" {
		t.Fatal("the Python SDK offers no run lane")
	}
	if d, _ := calls.Describe(ctxT(t), &runnerv1.DescribeRequest{}); d.GetRunLane() != "" {
		t.Fatalf("AGENTENGINE_RUN_LANE=off still offers %q", d.GetRunLane())
	}
	for _, input := range []string{"all", "raise", "echo me"} {
		req := demoReq("i-"+input, map[string]any{"input": input})
		viaLane, err := runEvents(ctxT(t), lane, req)
		if err != nil {
			t.Fatalf("%s over the lane: %v", input, err)
		}
		viaCalls, err := runEvents(ctxT(t), calls, req)
		if err != nil {
			t.Fatalf("%s over Run calls: %v", input, err)
		}
		if len(viaLane) < 1 || len(viaLane) != len(viaCalls) {
			t.Fatalf("%s: %d events over the lane, %d over Run calls", input, len(viaLane), len(viaCalls))
		}
		for i := range viaLane {
			a, b := viaLane[i], viaCalls[i]
			if e := a.GetError(); e != nil { // the traceback names different frames
				if b.GetError().GetMessage() != e.GetMessage() || b.GetError().GetCode() != e.GetCode() {
					t.Errorf("%s event %d: %v over the lane, %v over Run calls", input, i, a, b)
				}
				continue
			}
			if !proto.Equal(a, b) {
				t.Errorf("%s event %d: %v over the lane, %v over Run calls", input, i, a, b)
			}
		}
	}
}

// Many runs at once on one lane: each gets its own events, whole and in order.
func TestPythonRunLaneKeepsConcurrentRunsApart(t *testing.T) {
	sup := startPyDemo(t, false)
	const runs = 40
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i := range runs {
		wg.Go(func() {
			want := fmt.Sprintf("run %d says hello", i)
			evs, err := runEvents(ctxT(t), sup, demoReq(fmt.Sprint("i", i), map[string]any{"input": want}))
			var text strings.Builder
			for _, ev := range evs {
				text.WriteString(ev.GetTextDelta().GetText())
			}
			if err != nil || text.String() != want {
				errs <- fmt.Errorf("run %d: text %q, err %v", i, text.String(), err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A cancelled lane run is cancelled in the runner (the demo run records how it ended),
// and the lane goes on serving.
func TestPythonRunLaneCancelCancelsTheRun(t *testing.T) {
	sup := startPyDemo(t, false)
	marker := filepath.Join(t.TempDir(), "marker")
	ctx, cancel := context.WithCancel(ctxT(t))
	st, err := sup.Run(ctx, demoReq("sleeper", map[string]any{"input": "sleep", "marker": marker}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil { // "sleeping": the run is inside its sleep
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(marker)
		if err == nil {
			if !strings.HasSuffix(string(b), "CancelledError") {
				t.Fatalf("the run ended %q, want by CancelledError", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cancelled run is still running in the runner")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if evs, err := runEvents(ctxT(t), sup, demoReq("after", map[string]any{"input": "after"})); err != nil || len(evs) == 0 {
		t.Fatalf("run after the cancel: %v, %v", evs, err)
	}
}

// A runner killed mid-run: the lane run fails as a Run call would (ErrExited), and the
// next run gets a new process with a new lane.
func TestPythonRunLaneRunnerKilledMidRun(t *testing.T) {
	sup := startPyDemo(t, false)
	st, err := sup.Run(ctxT(t), demoReq("victim", map[string]any{"input": "sleep", "marker": filepath.Join(t.TempDir(), "m")}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	pid := sup.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := st.Recv()
		if err == nil {
			continue
		}
		if !errors.Is(err, runnerproc.ErrExited) {
			t.Fatalf("Recv after kill = %v, want ErrExited", err)
		}
		break
	}
	evs, err := runEvents(ctxT(t), sup, demoReq("next", map[string]any{"input": "next"}))
	if err != nil || len(evs) == 0 {
		t.Fatalf("run after the kill: %v, %v", evs, err)
	}
	if sup.PID() == pid {
		t.Fatal("the run after the kill went to the killed process")
	}
}
