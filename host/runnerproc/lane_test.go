package runnerproc

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// lanePeer is the runner's end of a lane in these tests: it reads and writes raw frames.
type lanePeer struct {
	t    *testing.T
	conn net.Conn
	lr   *runnerv1.LaneReader
}

func newTestLane(t *testing.T) (*lane, *lanePeer) {
	t.Helper()
	hostEnd, runnerEnd := net.Pipe()
	l := newLane(hostEnd, hclog.NewNullLogger())
	t.Cleanup(func() {
		l.fail(errors.New("test over"))
		_ = runnerEnd.Close()
	})
	return l, &lanePeer{t: t, conn: runnerEnd, lr: runnerv1.NewLaneReader(runnerEnd, maxLaneFrameBytes)}
}

func (p *lanePeer) readFrame() *runnerv1.LaneFrame {
	p.t.Helper()
	_ = p.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	f, err := p.lr.Next()
	if err != nil {
		p.t.Fatalf("runner end: read frame: %v", err)
	}
	return f
}

func (p *lanePeer) writeRaw(b []byte) {
	p.t.Helper()
	_ = p.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := p.conn.Write(b); err != nil {
		p.t.Fatalf("runner end: write: %v", err)
	}
}

func (p *lanePeer) write(f *runnerv1.LaneFrame) {
	p.t.Helper()
	b, err := runnerv1.EncodeLaneFrame(f, maxLaneFrameBytes)
	if err != nil {
		p.t.Fatal(err)
	}
	p.writeRaw(b)
}

func (p *lanePeer) text(run uint64, s string) {
	p.write(&runnerv1.LaneFrame{Run: run, Body: &runnerv1.LaneFrame_Event{Event: &runnerv1.RunEvent{
		Event: &runnerv1.RunEvent_TextDelta{TextDelta: &runnerv1.TextDelta{Text: s}}}}})
}

func (p *lanePeer) end(run uint64, errText string) {
	p.write(&runnerv1.LaneFrame{Run: run, Body: &runnerv1.LaneFrame_End{End: &runnerv1.LaneEnd{Error: errText}}})
}

// startRun starts a run on l while the runner end reads its start frame.
func startRun(t *testing.T, ctx context.Context, l *lane, p *lanePeer, invocation string) (*laneStream, uint64) {
	t.Helper()
	type res struct {
		s   *laneStream
		err error
	}
	done := make(chan res, 1)
	go func() {
		s, err := l.run(ctx, &runnerv1.RunRequest{InvocationId: invocation})
		done <- res{s, err}
	}()
	f := p.readFrame()
	if got := f.GetStart().GetInvocationId(); got != invocation {
		t.Fatalf("start frame carries invocation %q, want %q", got, invocation)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("run: %v", r.err)
	}
	return r.s, f.GetRun()
}

// texts reads s to its end: the text of each event, and the error that ended it.
func texts(s *laneStream) ([]string, error) {
	var out []string
	for {
		ev, err := s.Recv()
		if err != nil {
			return out, err
		}
		out = append(out, ev.GetTextDelta().GetText())
	}
}

func TestLaneRunStreamsEventsThenEnds(t *testing.T) {
	l, p := newTestLane(t)
	s, id := startRun(t, context.Background(), l, p, "inv-1")
	go func() {
		p.text(id, "a")
		p.text(id, "b")
		p.end(id, "")
	}()
	got, err := texts(s)
	if !errors.Is(err, io.EOF) || strings.Join(got, ",") != "a,b" {
		t.Fatalf("got %q, %v; want [a b], EOF", got, err)
	}
}

func TestLaneMultiplexesRuns(t *testing.T) {
	l, p := newTestLane(t)
	s1, id1 := startRun(t, context.Background(), l, p, "inv-1")
	s2, id2 := startRun(t, context.Background(), l, p, "inv-2")
	if id1 == id2 {
		t.Fatalf("two runs share id %d", id1)
	}
	go func() {
		p.text(id2, "two-a")
		p.text(id1, "one-a")
		p.text(id2, "two-b")
		p.end(id2, "")
		p.text(id1, "one-b")
		p.end(id1, "")
	}()
	type result struct {
		got []string
		err error
	}
	r1, r2 := make(chan result, 1), make(chan result, 1)
	go func() { got, err := texts(s1); r1 <- result{got, err} }()
	go func() { got, err := texts(s2); r2 <- result{got, err} }()
	for _, c := range []struct {
		r    chan result
		want string
	}{{r1, "one-a,one-b"}, {r2, "two-a,two-b"}} {
		r := <-c.r
		if !errors.Is(r.err, io.EOF) || strings.Join(r.got, ",") != c.want {
			t.Errorf("got %q, %v; want %s, EOF", r.got, r.err, c.want)
		}
	}
}

func TestLaneEndWithErrorFailsTheRun(t *testing.T) {
	l, p := newTestLane(t)
	s, id := startRun(t, context.Background(), l, p, "inv-1")
	go p.end(id, "RuntimeError: the SDK broke")
	_, err := texts(s)
	if status.Code(err) != codes.Unknown || !strings.Contains(err.Error(), "the SDK broke") {
		t.Fatalf("err = %v, want Unknown carrying the runner's message", err)
	}
}

// Cancelling a run tells the runner; what the runner still sends for it is dropped
// without holding up the lane's other runs.
func TestLaneCancelReachesTheRunnerAndLateFramesAreDropped(t *testing.T) {
	l, p := newTestLane(t)
	ctx, cancel := context.WithCancel(context.Background())
	s1, id1 := startRun(t, ctx, l, p, "inv-1")
	s2, id2 := startRun(t, context.Background(), l, p, "inv-2")
	cancel()
	f := p.readFrame()
	if f.GetCancel() == nil || f.GetRun() != id1 {
		t.Fatalf("runner got %v, want a cancel of run %d", f, id1)
	}
	if _, err := s1.Recv(); status.Code(err) != codes.Canceled {
		t.Fatalf("cancelled run's Recv = %v, want Canceled", err)
	}
	go func() {
		for range laneRunBuffer * 2 { // more than a run's buffer: would block a stuck lane
			p.text(id1, "late")
		}
		p.text(id2, "still here")
		p.end(id2, "")
	}()
	got, err := texts(s2)
	if !errors.Is(err, io.EOF) || strings.Join(got, ",") != "still here" {
		t.Fatalf("other run got %q, %v", got, err)
	}
}

// A connection that breaks fails the runs on it after what they were sent, and the lane
// takes no more.
func TestLaneBrokenConnectionFailsRunsAndLaterStarts(t *testing.T) {
	l, p := newTestLane(t)
	s, id := startRun(t, context.Background(), l, p, "inv-1")
	p.text(id, "before")
	_ = p.conn.Close()
	got, err := texts(s)
	if status.Code(err) != codes.Unavailable || strings.Join(got, ",") != "before" {
		t.Fatalf("got %q, %v; want [before] then Unavailable", got, err)
	}
	if _, err := l.run(context.Background(), &runnerv1.RunRequest{}); status.Code(err) != codes.Unavailable {
		t.Fatalf("run on a broken lane: %v, want Unavailable", err)
	}
}

func TestLaneEndBeforeBreakStillEndsCleanly(t *testing.T) {
	l, p := newTestLane(t)
	s, id := startRun(t, context.Background(), l, p, "inv-1")
	p.text(id, "all")
	p.end(id, "")
	_ = p.conn.Close()
	<-l.broken
	got, err := texts(s)
	if !errors.Is(err, io.EOF) || strings.Join(got, ",") != "all" {
		t.Fatalf("got %q, %v; want [all], EOF", got, err)
	}
}

func TestLaneBadFramesBreakTheLane(t *testing.T) {
	for name, raw := range map[string][]byte{
		"oversized": binary.BigEndian.AppendUint32(nil, maxLaneFrameBytes+1),
		"garbage":   append(binary.BigEndian.AppendUint32(nil, 3), 0xff, 0xff, 0xff),
	} {
		t.Run(name, func(t *testing.T) {
			l, p := newTestLane(t)
			s, _ := startRun(t, context.Background(), l, p, "inv-1")
			go func() { _, _ = p.conn.Write(raw) }()
			if _, err := s.Recv(); status.Code(err) != codes.Unavailable {
				t.Fatalf("Recv = %v, want Unavailable", err)
			}
		})
	}
}

func TestLaneRefusesARequestOverTheMessageLimit(t *testing.T) {
	l, _ := newTestLane(t)
	big := &runnerv1.RunRequest{PayloadJson: make([]byte, maxLaneFrameBytes)}
	if _, err := l.run(context.Background(), big); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("run = %v, want ResourceExhausted", err)
	}
}

func TestDialLaneOnlyInsideTheSocketDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{"relative.lane", filepath.Join(t.TempDir(), "r1.lane"), filepath.Join(dir, "sub", "r1.lane")} {
		if _, err := dialLane(context.Background(), path, dir, hclog.NewNullLogger()); err == nil || !strings.Contains(err.Error(), "socket directory") {
			t.Errorf("dialLane(%q) = %v, want refused", path, err)
		}
	}
}

// FuzzLaneRead: whatever a runner writes on its lane, the host's reader neither panics
// nor hangs; it delivers frames or breaks the lane.
func FuzzLaneRead(f *testing.F) {
	ev, _ := proto.Marshal(&runnerv1.LaneFrame{Run: 1, Body: &runnerv1.LaneFrame_Event{Event: &runnerv1.RunEvent{
		Event: &runnerv1.RunEvent_TextDelta{TextDelta: &runnerv1.TextDelta{Text: "hi"}}}}})
	end, _ := proto.Marshal(&runnerv1.LaneFrame{Run: 1, Body: &runnerv1.LaneFrame_End{End: &runnerv1.LaneEnd{}}})
	f.Add(append(binary.BigEndian.AppendUint32(nil, uint32(len(ev))), ev...))                                                                                  //nolint:gosec // small
	f.Add(append(append(binary.BigEndian.AppendUint32(nil, uint32(len(ev))), ev...), append(binary.BigEndian.AppendUint32(nil, uint32(len(end))), end...)...)) //nolint:gosec // small
	f.Add([]byte{0, 0, 0, 2, 0x08})
	f.Fuzz(func(t *testing.T, data []byte) {
		hostEnd, runnerEnd := net.Pipe()
		l := newLane(hostEnd, hclog.NewNullLogger())
		l.mu.Lock()
		r := &laneRun{id: 1, events: make(chan *runnerv1.RunEvent, laneRunBuffer), gone: make(chan struct{})}
		l.runs[1] = r
		l.mu.Unlock()
		go func() {
			_, _ = runnerEnd.Write(data)
			_ = runnerEnd.Close()
		}()
		s := &laneStream{l: l, r: r, ctx: context.Background(), stopCancel: func() bool { return true }}
		for range laneRunBuffer * 4 {
			if _, err := s.Recv(); err != nil {
				break
			}
		}
		l.forget(r)
		l.fail(errors.New("fuzz over"))
	})
}

// awaitOne waits for s without a goroutine of its own, as the host's run does: Await,
// and when nothing is ready, the wake-up it asked for. It returns whether Await found
// something ready at once.
func awaitOne(t *testing.T, s *laneStream) (atOnce bool) {
	t.Helper()
	woke := make(chan struct{})
	if s.Await(func() { close(woke) }) {
		return true
	}
	select {
	case <-woke:
	case <-time.After(5 * time.Second):
		t.Fatal("Await never called back")
	}
	return false
}

// A run read without a goroutine parked in Recv: Await calls back when an event, the
// end, the context's end or the lane's break is there, after which Recv does not wait.
func TestLaneAwaitWakesForEventsEndCancelAndBreak(t *testing.T) {
	recvNow := func(t *testing.T, s *laneStream) (*runnerv1.RunEvent, error) {
		t.Helper()
		type res struct {
			ev  *runnerv1.RunEvent
			err error
		}
		got := make(chan res, 1)
		go func() { ev, err := s.Recv(); got <- res{ev, err} }()
		select {
		case r := <-got:
			return r.ev, r.err
		case <-time.After(5 * time.Second):
			t.Fatal("Recv waited after Await reported it ready")
			return nil, nil
		}
	}
	t.Run("events then end", func(t *testing.T) {
		l, p := newTestLane(t)
		s, id := startRun(t, context.Background(), l, p, "inv-1")
		woke := make(chan struct{})
		if s.Await(func() { close(woke) }) {
			t.Fatal("Await reported a run with no event sent yet")
		}
		go func() {
			p.text(id, "a")
			p.text(id, "b")
			time.Sleep(20 * time.Millisecond)
			p.end(id, "")
		}()
		<-woke
		var got []string
		for {
			ev, err := recvNow(t, s)
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("end: %v", err)
				}
				break
			}
			got = append(got, ev.GetTextDelta().GetText())
			awaitOne(t, s)
		}
		if strings.Join(got, ",") != "a,b" {
			t.Fatalf("events %q, want a,b", got)
		}
	})
	t.Run("context ends", func(t *testing.T) {
		l, p := newTestLane(t)
		ctx, cancel := context.WithCancel(context.Background())
		s, id := startRun(t, ctx, l, p, "inv-2")
		go func() { time.Sleep(20 * time.Millisecond); cancel() }()
		if awaitOne(t, s) {
			t.Fatal("Await reported a run with nothing ready")
		}
		if _, err := recvNow(t, s); status.Code(err) != codes.Canceled {
			t.Fatalf("Recv after the context ended: %v, want Canceled", err)
		}
		if f := p.readFrame(); f.GetRun() != id || f.GetCancel() == nil {
			t.Fatalf("runner got %v, want the run's cancel", f)
		}
	})
	t.Run("lane breaks", func(t *testing.T) {
		l, p := newTestLane(t)
		s, _ := startRun(t, context.Background(), l, p, "inv-3")
		go func() { time.Sleep(20 * time.Millisecond); _ = p.conn.Close() }()
		if awaitOne(t, s) {
			t.Fatal("Await reported a run with nothing ready")
		}
		if _, err := recvNow(t, s); status.Code(err) != codes.Unavailable {
			t.Fatalf("Recv after the lane broke: %v, want Unavailable", err)
		}
	})
}
