package host_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/testutil"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session/memory"
)

// describedRunner reports described in Describe and answers host.NativeCall with out or
// err, counting the calls.
type describedRunner struct {
	runnerv1.RunnerClient
	described string
	out       string
	err       error
	gate      chan struct{} // nil, or a call waits for it to close
	calls     atomic.Int32
}

func (r *describedRunner) Describe(context.Context, *runnerv1.DescribeRequest, ...grpc.CallOption) (*runnerv1.DescribeResponse, error) {
	return &runnerv1.DescribeResponse{Framework: "adk", AgentName: "a", NativeJson: []byte(r.described)}, nil
}

func (r *describedRunner) Call(_ context.Context, in *runnerv1.CallRequest, _ ...grpc.CallOption) (*runnerv1.CallResponse, error) {
	if in.GetMethod() != host.NativeCall {
		return nil, status.Error(codes.Unimplemented, in.GetMethod())
	}
	r.calls.Add(1)
	if r.gate != nil {
		<-r.gate
	}
	if r.err != nil {
		return nil, r.err
	}
	return &runnerv1.CallResponse{Json: []byte(r.out)}, nil
}

// TestAgentNative: the native description is Describe's when it carries one, else the
// runner's answer to NativeCall, asked once and kept until the agent reloads; a runner
// without the call, or refusing it, has none; a runner that cannot be reached is an error,
// and is asked again next time.
func TestAgentNative(t *testing.T) {
	tests := []struct {
		name   string
		runner *describedRunner
		want   string // "": none
		calls  int    // after two reads, a reload and a third read
		kind   error
	}{
		{"in Describe", &describedRunner{described: `{"d":1}`, out: `{"c":1}`}, `{"d":1}`, 0, nil},
		{"by its call", &describedRunner{out: `{"c":1}`}, `{"c":1}`, 2, nil},
		{"null", &describedRunner{out: `null`}, "", 2, nil},
		{"invalid JSON", &describedRunner{out: `{`}, "", 2, nil},
		{"no such call", &describedRunner{err: status.Error(codes.Unimplemented, "no")}, "", 2, nil},
		{"refused", &describedRunner{err: status.Error(codes.InvalidArgument, "unknown method")}, "", 2, nil},
		{"a bug in the runner", &describedRunner{err: status.Error(codes.Unknown, "KeyError")}, "", 2, nil},
		{"runner gone", &describedRunner{err: status.Error(codes.Unavailable, "gone")}, "", 3, host.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "a", Framework: "adk", Runner: tt.runner}}})
			read := func() {
				t.Helper()
				got, err := rt.AgentNative(context.Background(), "a")
				if tt.kind != nil {
					if !errors.Is(err, tt.kind) {
						t.Fatalf("error %v, want %v", err, tt.kind)
					}
					return
				}
				if err != nil || string(got) != tt.want {
					t.Fatalf("= %s, %v; want %q", got, err, tt.want)
				}
			}
			read()
			read()
			rt.AgentReloaded("a")
			read()
			if n := int(tt.runner.calls.Load()); n != tt.calls {
				t.Errorf("the runner was called %d times, want %d", n, tt.calls)
			}
		})
	}
}

// TestAgentNativeAsksOnceAtATime: callers that come while the runner is being asked wait
// for its answer instead of asking too (the dev UI's first page load asks three times at
// once, and each answer may cost a runner process a second of drawing).
func TestAgentNativeAsksOnceAtATime(t *testing.T) {
	r := &describedRunner{out: `{"c":1}`, gate: make(chan struct{})}
	rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "a", Framework: "adk", Runner: r}}})
	var wg sync.WaitGroup
	got := make([]string, 5)
	for i := range got {
		wg.Go(func() {
			out, err := rt.AgentNative(context.Background(), "a")
			got[i] = string(out)
			if err != nil {
				got[i] = err.Error()
			}
		})
	}
	time.Sleep(50 * time.Millisecond) // let them all come while the first is asking
	close(r.gate)
	wg.Wait()
	for i, g := range got {
		if g != `{"c":1}` {
			t.Errorf("caller %d got %s", i, g)
		}
	}
	if n := r.calls.Load(); n != 1 {
		t.Errorf("the runner was asked %d times, want once", n)
	}
}

// TestAgentNativeAfterAReloadMeanwhile: the answer of a runner that a reload replaced
// while it was being asked is returned to its caller but not kept; the next caller asks
// again.
func TestAgentNativeAfterAReloadMeanwhile(t *testing.T) {
	r := &describedRunner{out: `{"c":1}`, gate: make(chan struct{})}
	rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "a", Framework: "adk", Runner: r}}})
	done := make(chan error, 1)
	go func() {
		_, err := rt.AgentNative(context.Background(), "a")
		done <- err
	}()
	testutil.Eventually(t, 5*time.Second, func() error {
		if r.calls.Load() == 0 {
			return errors.New("the runner has not been asked yet")
		}
		return nil
	})
	rt.AgentReloaded("a")
	close(r.gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if out, err := rt.AgentNative(context.Background(), "a"); err != nil || string(out) != `{"c":1}` {
		t.Fatalf("= %s, %v", out, err)
	}
	if n := r.calls.Load(); n != 2 {
		t.Errorf("the runner was asked %d times, want twice (the first answer predates the reload)", n)
	}
}
