package host_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/agentengine/agentengine/host"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// awaitRunner gives the host streams that can be awaited (as the run lane's): a test
// goroutine reads the real stream into a queue, and the host is told when the queue
// has something. It counts the host's Recv calls made while nothing was ready: a run
// must wait for its runner without a goroutine parked in Recv.
type awaitRunner struct {
	runnerv1.RunnerClient
	blocked chan string // a Recv that would have waited: which
}

func (a *awaitRunner) Run(ctx context.Context, in *runnerv1.RunRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[runnerv1.RunEvent], error) {
	st, err := a.RunnerClient.Run(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	s := &awaitStream{ServerStreamingClient: st, blocked: a.blocked}
	go s.pump()
	return s, nil
}

type awaitStream struct {
	grpc.ServerStreamingClient[runnerv1.RunEvent]
	blocked chan string

	mu    sync.Mutex
	queue []*runnerv1.RunEvent
	err   error // the inner stream's end, after the queue
	ready func()
}

func (s *awaitStream) pump() {
	for {
		ev, err := s.ServerStreamingClient.Recv()
		s.mu.Lock()
		if err != nil {
			s.err = err
		} else {
			s.queue = append(s.queue, ev)
		}
		f := s.ready
		s.ready = nil
		s.mu.Unlock()
		if f != nil {
			f()
		}
		if err != nil {
			return
		}
	}
}

func (s *awaitStream) Await(ready func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) > 0 || s.err != nil {
		return true
	}
	s.ready = ready
	return false
}

func (s *awaitStream) Recv() (*runnerv1.RunEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case len(s.queue) > 0:
		ev := s.queue[0]
		s.queue = s.queue[1:]
		return ev, nil
	case s.err != nil:
		return nil, s.err
	}
	select {
	case s.blocked <- "Recv called with nothing ready":
	default:
	}
	return nil, errors.New("the host called Recv on an awaitable stream with nothing ready")
}

// A run on a stream that can be awaited gets all its events through Await, including
// across a quiet stretch of its runner (a long tool call), and ends as usual; cancelling
// one that waits wakes it.
func TestARunAwaitsItsRunnerWithoutAGoroutineInRecv(t *testing.T) {
	agent := &toolAgent{called: make(chan struct{}), release: make(chan struct{})}
	runner := &awaitRunner{RunnerClient: serve(t, agent), blocked: make(chan string, 1)}
	rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "tool", Runner: runner}}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	r, err := rt.Start(ctx, host.TurnRequest{App: "tool", Input: text("search")})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-agent.called:
	case <-r.Done():
		t.Fatalf("the run ended (%s) before its tool call", r.Status())
	}
	time.Sleep(50 * time.Millisecond) // the run waits for the tool's result
	close(agent.release)
	evs, err := r.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case why := <-runner.blocked:
		t.Fatal(why)
	default:
	}
	var types []string
	for _, e := range evs {
		if e.Kind == host.KindStored {
			types = append(types, e.Stored.Type)
		}
	}
	want := []string{session.TypeUserMessage, session.TypeToolCall, session.TypeToolResult, session.TypeAssistantMessage, session.TypeRunStatus}
	if len(types) < len(want) {
		t.Fatalf("stored events %v, want %v among them", types, want)
	}
	for i, w := range want {
		found := false
		for _, got := range types[i:] {
			if got == w {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("stored events %v, want %v in order", types, want)
		}
	}
	if got := r.Status(); got != session.StatusCompleted {
		t.Fatalf("status %q, want completed", got)
	}

	// Cancelled while it waits: the wake-up comes from the runner's stream ending.
	agent2 := &toolAgent{called: make(chan struct{}), release: make(chan struct{})}
	defer close(agent2.release)
	runner2 := &awaitRunner{RunnerClient: serve(t, agent2), blocked: make(chan string, 1)}
	rt2 := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "tool", Runner: runner2}}})
	r2, err := rt2.Start(ctx, host.TurnRequest{App: "tool", Input: text("search")})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-agent2.called:
	case <-r2.Done():
		t.Fatalf("the run ended (%s) before its tool call", r2.Status())
	}
	if err := rt2.Cancel(ctx, r2.Key, r2.InvocationID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r2.Done():
	case <-ctx.Done():
		t.Fatal("a cancelled run waiting for its runner never ended")
	}
	if got := r2.Status(); got != session.StatusCancelled {
		t.Fatalf("status %q, want cancelled", got)
	}
}
