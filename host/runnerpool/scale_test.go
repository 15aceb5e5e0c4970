package runnerpool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentengine/agentengine/internal/testutil"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// scaling is a scaling pool over fakes whose CPU use the test sets: each process uses
// share of a core from the moment the test sets it.
type scaling struct {
	t     *testing.T
	pool  *Pool
	mu    sync.Mutex
	fakes []*fake
	share atomic.Uint64 // percent of a core every process uses
	only  sync.Map      // pid -> uint64 percent, overriding share for that process
	cpu   sync.Map      // pid -> *atomic.Int64 nanoseconds used so far
}

func newScaling(t *testing.T, max int, startErr error, tweak func(*ScalingConfig)) *scaling {
	t.Helper()
	s := &scaling{t: t}
	cfg := ScalingConfig{
		Max: max,
		NewMember: func(i int) Member {
			f := &fake{name: fmt.Sprintf("m%d", i), pid: 100 + i}
			if i > 0 {
				f.runErr = startErr
			}
			s.mu.Lock()
			s.fakes = append(s.fakes, f)
			s.mu.Unlock()
			return f
		},
		Interval:   5 * time.Millisecond,
		HotTicks:   2,
		IdleAfter:  time.Hour,
		RetryAfter: time.Hour,
		CPUTime: func(pid int) (time.Duration, error) {
			v, _ := s.cpu.LoadOrStore(pid, new(atomic.Int64))
			share := s.share.Load()
			if o, ok := s.only.Load(pid); ok {
				share = o.(uint64)
			}
			// Every sample advances the process's CPU time by share of the interval.
			n := v.(*atomic.Int64).Add(int64(5*time.Millisecond) * int64(share) / 100)
			return time.Duration(n), nil
		},
	}
	if tweak != nil {
		tweak(&cfg)
	}
	s.pool = NewScaling(cfg)
	if err := s.pool.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.pool.Close(context.Background()) })
	return s
}

// run opens a run that stays in flight until end is called.
func (s *scaling) run() (end func()) {
	s.t.Helper()
	st, err := s.pool.Run(context.Background(), &runnerv1.RunRequest{})
	if err != nil {
		s.t.Fatal(err)
	}
	fs := st.(*stream).ServerStreamingClient.(*fakeStream)
	return func() {
		close(fs.end)
		for {
			if _, err := st.Recv(); err != nil {
				return
			}
		}
	}
}

func (s *scaling) fake(i int) *fake {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.fakes) {
		return nil
	}
	return s.fakes[i]
}

func (f *fake) state() (started, closed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started, f.closed
}

// busyUntilTwo opens four runs on the first process, makes every process CPU-bound and
// waits for the pool to grow to two; it returns the runs' ends.
func (s *scaling) busyUntilTwo() []func() {
	s.t.Helper()
	var ends []func()
	for range 4 {
		ends = append(ends, s.run())
	}
	s.share.Store(100)
	testutil.Eventually(s.t, 5*time.Second, func() error {
		if got := len(s.pool.PIDs()); got != 2 {
			return fmt.Errorf("%d live processes, want 2", got)
		}
		return nil
	})
	return ends
}

// settle lets the scaler take many samples.
func settle() { time.Sleep(100 * time.Millisecond) }

func TestAScalingPoolGrowsWhileEveryProcessIsCPUBound(t *testing.T) {
	s := newScaling(t, 2, nil, nil)
	if got := len(s.pool.PIDs()); got != 1 {
		t.Fatalf("a scaling pool starts %d processes, want 1", got)
	}
	s.busyUntilTwo()
	if started, _ := s.fake(1).state(); !started {
		t.Fatal("the added process is live but was not started")
	}
	// The new process is the least busy: the next runs go there.
	s.run()
	s.run()
	if b := s.pool.Busy(); b[0] != 4 || b[1] != 2 {
		t.Fatalf("busy %v, want [4 2]", b)
	}
	settle()
	if got := len(s.pool.PIDs()); got != 2 || s.fake(2) != nil {
		t.Fatalf("grew past Max: %d live processes", got)
	}
}

func TestAScalingPoolGathersLightLoadOnItsFirstProcess(t *testing.T) {
	s := newScaling(t, 2, nil, nil)
	ends := s.busyUntilTwo()
	s.share.Store(0)
	for _, end := range ends {
		end()
	}
	for range 6 { // one at a time: the idle first process takes each
		s.run()()
	}
	if f0, f1 := s.fake(0), s.fake(1); f0.runs != 10 || f1.runs != 0 {
		t.Fatalf("runs per process %d and %d, want 10 and 0", f0.runs, f1.runs)
	}
}

func TestAScalingPoolStaysAtOneWhenAnotherWouldNotHelp(t *testing.T) {
	for _, tt := range []struct {
		name  string
		runs  int
		share uint64
	}{
		{"one run at a time keeps the process busy", 1, 100},
		{"runs waiting on something other than the CPU", 8, 20},
		{"no runs", 0, 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newScaling(t, 4, nil, nil)
			for range tt.runs {
				s.run()
			}
			s.share.Store(tt.share)
			settle()
			if got := len(s.pool.PIDs()); got != 1 || s.fake(1) != nil {
				t.Fatalf("%d live processes, want 1", got)
			}
		})
	}
}

func TestAScalingPoolRetiresAProcessOnceItsRunsEnd(t *testing.T) {
	s := newScaling(t, 2, nil, func(c *ScalingConfig) { c.IdleAfter = 30 * time.Millisecond })
	ends := s.busyUntilTwo()
	onNew := s.run() // goes to the new, least busy process
	if b := s.pool.Busy(); b[1] != 1 {
		t.Fatalf("busy %v: the run did not go to the new process", b)
	}
	s.share.Store(0)
	for _, end := range ends {
		end()
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		if got := len(s.pool.PIDs()); got != 1 {
			return fmt.Errorf("%d live processes, want 1", got)
		}
		return nil
	})
	settle()
	if _, closed := s.fake(1).state(); closed {
		t.Fatal("the retired process was closed with a run in flight")
	}
	onNew()
	testutil.Eventually(t, 5*time.Second, func() error {
		if _, closed := s.fake(1).state(); !closed {
			return errors.New("the retired process is not closed after its run ended")
		}
		return nil
	})
	if _, closed := s.fake(0).state(); closed {
		t.Fatal("the first process was closed")
	}
}

func TestAScalingPoolRetiresAnIdleNewestProcess(t *testing.T) {
	s := newScaling(t, 2, nil, func(c *ScalingConfig) { c.IdleAfter = 30 * time.Millisecond })
	s.busyUntilTwo()
	// The first process stays busy (its four runs, most of a core: together more than
	// the pool's cool threshold), the new one takes nothing.
	s.only.Store(101, uint64(0))
	s.share.Store(70)
	testutil.Eventually(t, 5*time.Second, func() error {
		if _, closed := s.fake(1).state(); !closed {
			return errors.New("the idle newest process is still open")
		}
		return nil
	})
	if got := len(s.pool.PIDs()); got != 1 {
		t.Fatalf("%d live processes, want 1", got)
	}
}

func TestAScalingPoolDoesNotRetryAFailedStartAtOnce(t *testing.T) {
	s := newScaling(t, 3, errors.New("no memory"), nil)
	for range 4 {
		s.run()
	}
	s.share.Store(100)
	testutil.Eventually(t, 5*time.Second, func() error {
		f := s.fake(1)
		if f == nil {
			return errors.New("no process added")
		}
		if _, closed := f.state(); !closed {
			return errors.New("the process that failed to start is not closed")
		}
		return nil
	})
	settle()
	if got := len(s.pool.PIDs()); got != 1 || s.fake(2) != nil {
		t.Fatalf("%d live processes after a failed start; started again: %v", got, s.fake(2) != nil)
	}
}

func TestClosingAScalingPoolClosesTheProcessesItAdded(t *testing.T) {
	s := newScaling(t, 2, nil, nil)
	s.busyUntilTwo()
	if err := s.pool.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, closed := s.fake(i).state(); !closed {
			t.Fatalf("process %d not closed", i)
		}
	}
}

func TestParseStatCPU(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    time.Duration
		wantErr bool
	}{
		{"plain", "42 (python3) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 100 1000 10", 3 * time.Second, false},
		{"command with spaces and parentheses", "42 (a) b (c) R 1 42 42 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 1 1 1", 100 * time.Millisecond, false},
		{"no command", "42 python3 S 1", 0, true},
		{"too short", "42 (x) S 1 2 3", 0, true},
		{"not a number", "42 (x) S 1 42 42 0 -1 0 0 0 0 0 x 3 0", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatCPU([]byte(tt.line))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("got %v, %v; want %v (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		if _, err := procCPUTime(os.Getpid()); err != nil {
			t.Fatalf("this process's CPU time: %v", err)
		}
	}
	if _, err := procCPUTime(0); err == nil {
		t.Fatal("pid 0 has a CPU time")
	}
}
