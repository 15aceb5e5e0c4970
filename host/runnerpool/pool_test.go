package runnerpool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/agentengine/agentengine/host/runnerproc"
	"github.com/agentengine/agentengine/internal/testutil"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// A supervisor is a pool member; checked here so that the pool itself need not import
// runnerproc.
var _ Member = (*runnerproc.Supervisor)(nil)

// fake is a member whose runs stay open until the test ends them.
type fake struct {
	runnerv1.RunnerClient
	name    string
	pid     int
	runErr  error
	mu      sync.Mutex
	runs    int
	started bool
	closed  bool
}

func (f *fake) Run(ctx context.Context, in *runnerv1.RunRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[runnerv1.RunEvent], error) {
	if f.runErr != nil {
		return nil, f.runErr
	}
	f.mu.Lock()
	f.runs++
	f.mu.Unlock()
	return &fakeStream{ctx: ctx, end: make(chan struct{}), name: f.name}, nil
}

func (f *fake) Describe(context.Context, *runnerv1.DescribeRequest, ...grpc.CallOption) (*runnerv1.DescribeResponse, error) {
	return &runnerv1.DescribeResponse{AgentName: f.name}, nil
}

func (f *fake) Start(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = true
	if f.runErr != nil {
		return f.runErr
	}
	return nil
}

func (f *fake) Close(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

func (f *fake) PID() int { return f.pid }

type fakeStream struct {
	grpc.ServerStreamingClient[runnerv1.RunEvent]
	ctx  context.Context
	end  chan struct{}
	name string
	sent bool
}

func (s *fakeStream) Recv() (*runnerv1.RunEvent, error) {
	if !s.sent {
		s.sent = true
		return &runnerv1.RunEvent{}, nil
	}
	select {
	case <-s.end:
		return nil, io.EOF
	case <-s.ctx.Done():
		return nil, s.ctx.Err()
	}
}

func members(n int) ([]Member, []*fake) {
	var ms []Member
	var fs []*fake
	for i := range n {
		f := &fake{name: fmt.Sprintf("m%d", i), pid: 100 + i}
		ms = append(ms, f)
		fs = append(fs, f)
	}
	return ms, fs
}

func TestRunsGoToTheLeastBusyMember(t *testing.T) {
	ms, fs := members(3)
	p := New(ms...)
	ctx := context.Background()
	var streams []*stream
	for range 6 {
		st, err := p.Run(ctx, &runnerv1.RunRequest{})
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, st.(*stream))
	}
	for i, f := range fs {
		if f.runs != 2 {
			t.Fatalf("member %d got %d runs, want 2 (busy %v)", i, f.runs, p.Busy())
		}
	}
	// End both runs of m1: the next two runs must go there.
	for _, s := range streams {
		fsx := s.ServerStreamingClient.(*fakeStream)
		if fsx.name == "m1" {
			close(fsx.end)
			if _, err := s.Recv(); err != nil { // the first event
				t.Fatal(err)
			}
			if _, err := s.Recv(); err != io.EOF {
				t.Fatalf("want EOF, got %v", err)
			}
		}
	}
	if got := p.Busy(); got[1] != 0 || got[0] != 2 || got[2] != 2 {
		t.Fatalf("busy after ending m1's runs: %v", got)
	}
	for range 2 {
		if _, err := p.Run(ctx, &runnerv1.RunRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if fs[1].runs != 4 || fs[0].runs != 2 || fs[2].runs != 2 {
		t.Fatalf("runs per member: %d %d %d", fs[0].runs, fs[1].runs, fs[2].runs)
	}
}

func TestCancelledRunReleasesItsMember(t *testing.T) {
	ms, _ := members(2)
	p := New(ms...)
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := p.Run(ctx, &runnerv1.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	if b := p.Busy(); b[0]+b[1] != 1 {
		t.Fatalf("busy %v", b)
	}
	cancel() // the caller never reads the stream again
	testutil.Eventually(t, 5*time.Second, func() error {
		if b := p.Busy(); b[0]+b[1] != 0 {
			return fmt.Errorf("cancelled run still counted: %v", b)
		}
		return nil
	})
}

func TestIdleRunsRotate(t *testing.T) {
	ms, fs := members(3)
	p := New(ms...)
	for range 9 {
		st, err := p.Run(context.Background(), &runnerv1.RunRequest{})
		if err != nil {
			t.Fatal(err)
		}
		close(st.(*stream).ServerStreamingClient.(*fakeStream).end)
		for {
			if _, err := st.Recv(); err != nil {
				break
			}
		}
	}
	for i, f := range fs {
		if f.runs != 3 {
			t.Fatalf("member %d got %d of 9 sequential runs", i, f.runs)
		}
	}
}

func TestUnavailableMembersAreSkipped(t *testing.T) {
	tests := []struct {
		name    string
		errs    []error
		wantErr bool
		wantRun int // index of the member that must get the run
	}{
		{"restarting first member", []error{fmt.Errorf("x: %w", runnerproc.ErrBackoff), nil}, false, 1},
		{"exited first member", []error{fmt.Errorf("x: %w", runnerproc.ErrExited), nil}, false, 1},
		{"all restarting", []error{runnerproc.ErrBackoff, runnerproc.ErrBackoff}, true, -1},
		{"other errors are final", []error{errors.New("bad request"), nil}, true, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, fs := members(len(tt.errs))
			for i, e := range tt.errs {
				fs[i].runErr = e
			}
			p := New(ms...)
			p.next.Store(0) // start with member 0
			_, err := p.Run(context.Background(), &runnerv1.RunRequest{})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			for i, f := range fs {
				if want := i == tt.wantRun; (f.runs == 1) != want {
					t.Fatalf("member %d runs %d", i, f.runs)
				}
			}
			var total int64
			for _, b := range p.Busy() {
				total += b
			}
			if want := int64(0); !tt.wantErr {
				want = 1
				if total != want {
					t.Fatalf("busy %v", p.Busy())
				}
			} else if total != 0 {
				t.Fatalf("failed calls left busy counts %v", p.Busy())
			}
		})
	}
}

func TestStartAndCloseReachEveryMember(t *testing.T) {
	ms, fs := members(3)
	fs[2].runErr = errors.New("boom")
	p := New(ms...)
	err := p.Start(context.Background())
	if err == nil || !errors.Is(err, fs[2].runErr) {
		t.Fatalf("start error %v", err)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, f := range fs {
		if !f.started || !f.closed {
			t.Fatalf("member %d started %v closed %v", i, f.started, f.closed)
		}
	}
	if got := p.PIDs(); len(got) != 3 || got[0] != 100 {
		t.Fatalf("pids %v", got)
	}
	d, err := p.Describe(context.Background(), &runnerv1.DescribeRequest{})
	if err != nil || d.GetAgentName() == "" {
		t.Fatalf("describe %v %v", d, err)
	}
}
