package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// agentSlot is the runner an agent's calls go to. It can be empty (the agent's runner
// failed to build, import or start: calls fail naming that error) and can be swapped (a
// reload): new calls go to the new runner while runs in flight finish on the old one,
// which is closed once they have, or after a bound.
type agentSlot struct {
	name string

	mu      sync.Mutex
	cur     *slotRunner
	err     error         // why cur is nil
	old     []*slotRunner // swapped out, still finishing their runs
	closed  bool
	retired sync.WaitGroup // closing old runners
}

// slotRunner is one runner and the calls in flight on it.
type slotRunner struct {
	agentRunner
	calls    sync.WaitGroup
	inFlight atomic.Int64 // the calls' count, for the log and tests
	// build tells this runner's Go binary apart from other reloads' ("" for the first).
	build string
}

func newSlot(name string, r agentRunner, err error) *agentSlot {
	s := &agentSlot{name: name, err: err}
	if r != nil {
		s.cur = &slotRunner{agentRunner: r}
	}
	return s
}

var _ agentRunner = (*agentSlot)(nil)

// acquire returns the current runner with one more call counted on it.
func (s *agentSlot) acquire() (*slotRunner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		err := s.err
		if err == nil {
			err = errors.New("it has no runner")
		}
		return nil, status.Errorf(codes.Unavailable, "agent %q is unavailable: %v", s.name, err)
	}
	s.cur.calls.Add(1)
	s.cur.inFlight.Add(1)
	return s.cur, nil
}

// release ends a call acquire counted.
func (r *slotRunner) release() {
	r.inFlight.Add(-1)
	r.calls.Done()
}

func (s *agentSlot) Describe(ctx context.Context, in *runnerv1.DescribeRequest, opts ...grpc.CallOption) (*runnerv1.DescribeResponse, error) {
	r, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer r.release()
	return r.Describe(ctx, in, opts...)
}

func (s *agentSlot) Summarize(ctx context.Context, in *runnerv1.SummarizeRequest, opts ...grpc.CallOption) (*runnerv1.SummarizeResponse, error) {
	r, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer r.release()
	return r.Summarize(ctx, in, opts...)
}

func (s *agentSlot) Call(ctx context.Context, in *runnerv1.CallRequest, opts ...grpc.CallOption) (*runnerv1.CallResponse, error) {
	r, err := s.acquire()
	if err != nil {
		return nil, err
	}
	defer r.release()
	return r.Call(ctx, in, opts...)
}

func (s *agentSlot) Run(ctx context.Context, in *runnerv1.RunRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[runnerv1.RunEvent], error) {
	r, err := s.acquire()
	if err != nil {
		return nil, err
	}
	stream, err := r.Run(ctx, in, opts...)
	if err != nil {
		r.release()
		return nil, err
	}
	done := sync.OnceFunc(r.release)
	// The run is over for the host when its stream ends or its context does.
	context.AfterFunc(ctx, done)
	return &slotStream{ServerStreamingClient: stream, done: done}, nil
}

// slotStream counts its run as finished when the stream ends.
type slotStream struct {
	grpc.ServerStreamingClient[runnerv1.RunEvent]
	done func()
}

func (s *slotStream) Recv() (*runnerv1.RunEvent, error) {
	ev, err := s.ServerStreamingClient.Recv()
	if err != nil {
		s.done()
	}
	return ev, err
}

// Await forwards to the underlying stream's (see the run lane's), so that a run waiting
// on it needs no goroutine; a stream without one is read by a blocking Recv.
func (s *slotStream) Await(ready func()) bool {
	if a, ok := s.ServerStreamingClient.(interface{ Await(func()) bool }); ok {
		return a.Await(ready)
	}
	return true
}

// Start starts the current runner, if there is one.
func (s *agentSlot) Start(ctx context.Context) error {
	s.mu.Lock()
	r := s.cur
	s.mu.Unlock()
	if r == nil {
		return s.err
	}
	return r.Start(ctx)
}

// Startable is the current runner's (host.Ready asks it).
func (s *agentSlot) Startable() error {
	s.mu.Lock()
	r, err := s.cur, s.err
	s.mu.Unlock()
	if r == nil {
		return fmt.Errorf("agent %q is unavailable: %w", s.name, err)
	}
	if st, ok := r.agentRunner.(interface{ Startable() error }); ok {
		return st.Startable()
	}
	return nil
}

// swap puts a started runner (its Go build named by build) in place of the current
// one. The old runner's runs in flight finish on it for up to drain; then it is closed
// and retired is called with its build.
func (s *agentSlot) swap(r agentRunner, build string, drain time.Duration, retired func(build string)) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = r.Close(context.Background())
		return
	}
	old := s.cur
	s.cur, s.err = &slotRunner{agentRunner: r, build: build}, nil
	if old != nil {
		s.old = append(s.old, old)
		s.retired.Add(1)
	}
	s.mu.Unlock()
	if old == nil {
		return
	}
	go func() {
		defer s.retired.Done()
		idle := make(chan struct{})
		go func() { old.calls.Wait(); close(idle) }()
		t := time.NewTimer(drain)
		select {
		case <-idle:
		case <-t.C:
		}
		t.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = old.Close(ctx)
		cancel()
		s.mu.Lock()
		for i, o := range s.old {
			if o == old {
				s.old = append(s.old[:i], s.old[i+1:]...)
				break
			}
		}
		s.mu.Unlock()
		if retired != nil {
			retired(old.build)
		}
	}()
}

// serving reports whether the slot has a runner (a last good version).
func (s *agentSlot) serving() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur != nil
}

// setErr replaces the reason an empty slot cannot serve.
func (s *agentSlot) setErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		s.err = err
	}
}

// Close closes the current runner and any still finishing their runs.
func (s *agentSlot) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	all := append([]*slotRunner(nil), s.old...)
	if s.cur != nil {
		all = append(all, s.cur)
	}
	s.mu.Unlock()
	var errs []error
	for _, r := range all {
		errs = append(errs, r.Close(ctx))
	}
	done := make(chan struct{})
	go func() { s.retired.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return errors.Join(errs...)
}
