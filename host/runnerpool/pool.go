// Package runnerpool spreads one agent's runs over several runner processes. A Pool is a
// runnerv1.RunnerClient like the runnerproc.Supervisor each member is, so the host does
// not know whether an agent has one process or many. A pool is fixed (New) or grows and
// shrinks with its members' CPU use (NewScaling, see scale.go).
//
// Routing is per run, not per session: each Run goes to the member with the fewest runs in
// flight. A session may therefore move between processes from turn to turn, which is fine
// because runners keep nothing a later turn needs in memory (the host sends the session
// context with every run, and LangGraph checkpoints are durable on disk).
package runnerpool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"

	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// Member is one process of a pool; *runnerproc.Supervisor is one.
type Member interface {
	runnerv1.RunnerClient
	Start(ctx context.Context) error
	Close(ctx context.Context) error
	PID() int
}

// Pool routes calls to the least busy of its members. Safe for concurrent use.
type Pool struct {
	// live is the members calls go to; a scaling pool replaces it as it grows or
	// shrinks, so a call reads it once without a lock.
	live atomic.Pointer[[]*member]
	// next breaks ties between equally busy members round-robin, so an idle pool
	// still spreads sequential runs (and their cold caches) over every process.
	next atomic.Uint64

	scale *scaler // nil for a fixed pool

	mu     sync.Mutex
	all    []*member // every member not yet closed: live, starting or retiring
	closed bool
}

var _ runnerv1.RunnerClient = (*Pool)(nil)

type member struct {
	Member
	busy atomic.Int64
}

// Startable reports whether a call could have a process: nil when a member's can
// (members without a Startable method count as able), else the first member's error.
func (p *Pool) Startable() error {
	var first error
	for _, m := range p.members() {
		s, ok := m.Member.(interface{ Startable() error })
		if !ok {
			return nil
		}
		err := s.Startable()
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// New returns a pool over members (at least one).
func New(members ...Member) *Pool {
	if len(members) == 0 {
		panic("runnerpool: no members")
	}
	live := make([]*member, len(members))
	for i, m := range members {
		live[i] = &member{Member: m}
	}
	p := &Pool{all: append([]*member(nil), live...)}
	p.live.Store(&live)
	return p
}

// members returns the members calls go to now.
func (p *Pool) members() []*member { return *p.live.Load() }

// PIDs returns the live members' process ids (0 for a member without a process).
func (p *Pool) PIDs() []int {
	ms := p.members()
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.PID()
	}
	return out
}

// PID returns the first live member's pid, or 0; with PIDs it makes a Pool usable where
// a single supervisor was.
func (p *Pool) PID() int {
	for _, m := range p.members() {
		if pid := m.PID(); pid != 0 {
			return pid
		}
	}
	return 0
}

// Busy returns each member's number of runs in flight.
func (p *Pool) Busy() []int64 {
	ms := p.members()
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.busy.Load()
	}
	return out
}

// order returns the members from least to most busy, ties rotated in a fixed pool. A
// scaling pool breaks ties by age instead: the load it does not need gathers on its
// first members, and the newest one cools down and can be retired.
func (p *Pool) order() []*member {
	ms := p.members()
	n := len(ms)
	start := 0
	if p.scale == nil {
		start = int(p.next.Add(1)-1) % n
	}
	out := make([]*member, 0, n)
	for i := range n {
		out = append(out, ms[(start+i)%n])
	}
	// Insertion sort: pools are small, and it keeps the rotation among equals.
	for i := 1; i < n; i++ {
		for j := i; j > 0 && out[j].busy.Load() < out[j-1].busy.Load(); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// unavailable: the member has no process right now (restarting after a crash, or a
// crash mid-call); another member can take the call. Members say so with an error whose
// Unavailable method reports true (runnerproc's ErrExited, ErrBackoff, ErrNotRunning);
// checking the method keeps the pool free of runnerproc and go-plugin.
func unavailable(err error) bool {
	var u interface{ Unavailable() bool }
	return errors.As(err, &u) && u.Unavailable()
}

// call runs f on the least busy member, moving on to the next one while members are
// unavailable. f's member stays counted busy until done is called.
func call[T any](ctx context.Context, p *Pool, f func(m *member) (T, error)) (T, *member, error) {
	var zero T
	var errs []error
	for _, m := range p.order() {
		m.busy.Add(1)
		v, err := f(m)
		if err == nil {
			return v, m, nil
		}
		m.busy.Add(-1)
		if !unavailable(err) || ctx.Err() != nil {
			return zero, nil, err
		}
		errs = append(errs, err)
	}
	return zero, nil, errors.Join(errs...)
}

// Describe implements runnerv1.RunnerClient.
func (p *Pool) Describe(ctx context.Context, in *runnerv1.DescribeRequest, opts ...grpc.CallOption) (*runnerv1.DescribeResponse, error) {
	v, m, err := call(ctx, p, func(m *member) (*runnerv1.DescribeResponse, error) { return m.Describe(ctx, in, opts...) })
	if m != nil {
		m.busy.Add(-1)
	}
	return v, err
}

// Summarize implements runnerv1.RunnerClient.
func (p *Pool) Summarize(ctx context.Context, in *runnerv1.SummarizeRequest, opts ...grpc.CallOption) (*runnerv1.SummarizeResponse, error) {
	v, m, err := call(ctx, p, func(m *member) (*runnerv1.SummarizeResponse, error) { return m.Summarize(ctx, in, opts...) })
	if m != nil {
		m.busy.Add(-1)
	}
	return v, err
}

// Call implements runnerv1.RunnerClient.
func (p *Pool) Call(ctx context.Context, in *runnerv1.CallRequest, opts ...grpc.CallOption) (*runnerv1.CallResponse, error) {
	v, m, err := call(ctx, p, func(m *member) (*runnerv1.CallResponse, error) { return m.Call(ctx, in, opts...) })
	if m != nil {
		m.busy.Add(-1)
	}
	return v, err
}

// Run implements runnerv1.RunnerClient. The run counts against its member until its
// stream ends (Recv returns an error, io.EOF included) or ctx is cancelled.
func (p *Pool) Run(ctx context.Context, in *runnerv1.RunRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[runnerv1.RunEvent], error) {
	st, m, err := call(ctx, p, func(m *member) (grpc.ServerStreamingClient[runnerv1.RunEvent], error) {
		return m.Run(ctx, in, opts...)
	})
	if err != nil {
		return nil, err
	}
	s := &stream{ServerStreamingClient: st}
	s.release = func() { m.busy.Add(-1) }
	s.stop = context.AfterFunc(ctx, s.done)
	return s, nil
}

type stream struct {
	grpc.ServerStreamingClient[runnerv1.RunEvent]
	release func()
	stop    func() bool
	once    sync.Once
}

func (s *stream) done() { s.once.Do(s.release) }

func (s *stream) Recv() (*runnerv1.RunEvent, error) {
	ev, err := s.ServerStreamingClient.Recv()
	if err != nil {
		s.stop()
		s.done()
		if err != io.EOF {
			return nil, err
		}
	}
	return ev, err
}

// Await forwards to the underlying stream's (see the run lane's), so that a run waiting
// on it needs no goroutine; a stream without one is read by a blocking Recv.
func (s *stream) Await(ready func()) bool {
	if a, ok := s.ServerStreamingClient.(interface{ Await(func()) bool }); ok {
		return a.Await(ready)
	}
	return true
}

// Start starts every live member concurrently and reports all failures; a scaling pool
// then begins watching its members' CPU use.
func (p *Pool) Start(ctx context.Context) error {
	ms := p.members()
	err := each(ms, func(i int, m *member) error {
		if err := m.Start(ctx); err != nil {
			return fmt.Errorf("process %d of %d: %w", i+1, len(ms), err)
		}
		return nil
	})
	if err == nil && p.scale != nil {
		p.scale.begin(p)
	}
	return err
}

// Close closes every member concurrently, those a scaling pool is starting or retiring
// included.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	all := p.all
	p.all = nil
	p.mu.Unlock()
	if p.scale != nil {
		p.scale.stop()
	}
	return each(all, func(_ int, m *member) error { return m.Close(ctx) })
}

func each(ms []*member, f func(int, *member) error) error {
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Go(func() { errs[i] = f(i, m) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
