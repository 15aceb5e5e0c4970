package runnerproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/agentengine/agentengine/internal/runnerplugin"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// The run lane (DescribeResponse.run_lane): every run of one runner process travels as
// LaneFrames on one unix socket the host keeps open, instead of a gRPC call per run. A
// call costs a Python runner about 0.5 ms of grpc.aio's per-call work; a frame costs tens
// of microseconds. go-plugin still starts, checks and stops the process, and Describe and
// Summarize stay gRPC calls.

const (
	// maxLaneFrameBytes: a frame wraps one protocol message and a few bytes of its own.
	maxLaneFrameBytes = runnerplugin.MaxMessageBytes + runnerv1.LaneFrameOverhead
	// laneRunBuffer is how many events of one run wait for its reader before the lane's
	// reader waits too. The host reads a run's events as they come (it never waits for a
	// client), so this only absorbs bursts.
	laneRunBuffer = 64
)

// errRunNotSent marks a run the lane never handed to the runner (the lane had broken,
// or the start frame's write failed): it is safe to start it on a fresh process.
var errRunNotSent = errors.New("run not sent")

// lane is the host's end of one runner process's run lane. Safe for concurrent use.
type lane struct {
	conn net.Conn
	log  hclog.Logger

	wmu sync.Mutex // one frame written at a time
	// wbuf is the frame buffer, reused under wmu: a run request with a long history is
	// hundreds of kilobytes, and most turns send one.
	wbuf []byte

	mu   sync.Mutex
	runs map[uint64]*laneRun
	next uint64
	// err is why the lane broke; set once, before broken is closed.
	err    error
	broken chan struct{}
}

// laneRun is one run on the lane as its reader and the lane's reader share it.
type laneRun struct {
	id     uint64
	events chan *runnerv1.RunEvent // closed after end, with endErr set before
	endErr error
	// gone is closed when the run's reader has let go (ctx ended): the lane's reader
	// stops waiting to hand it events.
	gone     chan struct{}
	goneOnce sync.Once

	// mu guards ended and ready: ended is set once events is closed; ready is what a
	// reader waiting without a goroutine asked to be called with (laneStream.Await).
	mu    sync.Mutex
	ended bool
	ready func()
}

// wake calls the function the run's reader left with Await, if any: something it waits
// for is there (an event, the end, its context's end, the lane's break).
func (r *laneRun) wake() {
	r.mu.Lock()
	f := r.ready
	r.ready = nil
	r.mu.Unlock()
	if f != nil {
		f()
	}
}

// maxKeptFrameBuffer bounds the frame buffer a lane keeps for reuse: a larger one (a
// run request with a large input) is let go after its write.
const maxKeptFrameBuffer = 1 << 20

// dialLane connects to the run lane a runner announced. The path must be in the socket
// directory the host made for this process: a runner names a socket, not any file.
func dialLane(ctx context.Context, path, sockDir string, log hclog.Logger) (*lane, error) {
	if !filepath.IsAbs(path) || filepath.Dir(filepath.Clean(path)) != filepath.Clean(sockDir) {
		return nil, fmt.Errorf("run lane %q is not in the runner's socket directory %s", path, sockDir)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("dial run lane: %w", err)
	}
	return newLane(conn, log), nil
}

func newLane(conn net.Conn, log hclog.Logger) *lane {
	l := &lane{conn: conn, log: log, runs: map[uint64]*laneRun{}, broken: make(chan struct{})}
	go l.read()
	return l
}

// fail marks the lane broken (once) and closes the connection: runs still on it fail as
// a broken Run call would.
func (l *lane) fail(cause error) {
	l.mu.Lock()
	if l.err != nil {
		l.mu.Unlock()
		return
	}
	l.err = status.Errorf(codes.Unavailable, "run lane: %v", cause)
	runs := l.runs
	l.runs = nil
	close(l.broken)
	l.mu.Unlock()
	_ = l.conn.Close()
	for _, r := range runs {
		r.wake() // their Recv returns the break now
	}
}

// brokenErr is why the lane broke; only valid once broken is closed.
func (l *lane) brokenErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// run starts in on the lane. Cancelling ctx cancels the run in the runner.
func (l *lane) run(ctx context.Context, in *runnerv1.RunRequest) (*laneStream, error) {
	frame := &runnerv1.LaneFrame{Body: &runnerv1.LaneFrame_Start{Start: in}}
	r := &laneRun{events: make(chan *runnerv1.RunEvent, laneRunBuffer), gone: make(chan struct{})}
	l.mu.Lock()
	if l.err != nil {
		err := l.err
		l.mu.Unlock()
		return nil, fmt.Errorf("%w: %w", errRunNotSent, err)
	}
	l.next++
	r.id = l.next
	l.runs[r.id] = r
	l.mu.Unlock()

	frame.Run = r.id
	if err := l.write(frame); err != nil {
		l.forget(r)
		if status.Code(err) == codes.Unavailable { // the connection broke: nothing arrived
			err = fmt.Errorf("%w: %w", errRunNotSent, err)
		}
		return nil, err
	}
	s := &laneStream{l: l, r: r, ctx: ctx}
	s.stopCancel = context.AfterFunc(ctx, func() {
		l.cancel(r)
		r.wake()
	})
	return s, nil
}

// write sends one frame; a failed write breaks the lane, a frame over the limit does not.
func (l *lane) write(frame *runnerv1.LaneFrame) error {
	l.wmu.Lock()
	buf, err := runnerv1.AppendLaneFrame(l.wbuf[:0], frame, maxLaneFrameBytes)
	if err != nil {
		l.wmu.Unlock()
		if errors.Is(err, runnerv1.ErrLaneFrameTooLarge) {
			return status.Errorf(codes.ResourceExhausted, "run request too large for the runner protocol: %v", err)
		}
		return status.Error(codes.Internal, err.Error())
	}
	_, err = l.conn.Write(buf)
	if cap(buf) <= maxKeptFrameBuffer {
		l.wbuf = buf
	}
	l.wmu.Unlock()
	if err != nil {
		l.fail(fmt.Errorf("write: %w", err))
		return l.brokenErr()
	}
	return nil
}

// forget takes r off the lane; it reports whether r was still on it (not ended).
func (l *lane) forget(r *laneRun) bool {
	r.goneOnce.Do(func() { close(r.gone) })
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.runs[r.id] != r {
		return false
	}
	delete(l.runs, r.id)
	return true
}

// cancel lets go of r and, if it has not ended, tells the runner to cancel it.
func (l *lane) cancel(r *laneRun) {
	if !l.forget(r) {
		return
	}
	// On its own goroutine: the caller may hold locks, and a write can wait for the runner.
	go func() {
		_ = l.write(&runnerv1.LaneFrame{Run: r.id, Body: &runnerv1.LaneFrame_Cancel{Cancel: &runnerv1.LaneCancel{}}})
	}()
}

// read hands each frame from the runner to its run until the connection ends.
func (l *lane) read() {
	lr := runnerv1.NewLaneReader(l.conn, maxLaneFrameBytes)
	for {
		frame, err := lr.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				l.log.Error("run lane broken; closing it", "error", err)
			}
			l.fail(fmt.Errorf("read: %w", err))
			return
		}
		l.deliver(frame)
	}
}

func (l *lane) deliver(frame *runnerv1.LaneFrame) {
	l.mu.Lock()
	r := l.runs[frame.GetRun()]
	switch frame.GetBody().(type) {
	case *runnerv1.LaneFrame_End:
		if r != nil {
			delete(l.runs, r.id)
		}
	case *runnerv1.LaneFrame_Event:
	default:
		l.mu.Unlock()
		l.log.Warn("unexpected run lane frame from the runner; ignored", "run", frame.GetRun())
		return
	}
	l.mu.Unlock()
	if r == nil {
		return // a run the host let go of: its late frames have nobody to go to
	}
	if end := frame.GetEnd(); end != nil {
		if msg := end.GetError(); msg != "" {
			r.endErr = status.Error(codes.Unknown, msg)
		}
		close(r.events)
		r.mu.Lock()
		r.ended = true
		r.mu.Unlock()
		r.wake()
		return
	}
	select {
	case r.events <- frame.GetEvent():
		r.wake()
	case <-r.gone:
	}
}

// laneStream is one run's events, read like a Run call's stream.
type laneStream struct {
	l          *lane
	r          *laneRun
	ctx        context.Context
	stopCancel func() bool
}

var _ grpc.ServerStreamingClient[runnerv1.RunEvent] = (*laneStream)(nil)

// Recv returns the run's next event, io.EOF after its end, or why it cannot.
func (s *laneStream) Recv() (*runnerv1.RunEvent, error) {
	select {
	case ev, ok := <-s.r.events:
		return s.got(ev, ok)
	default:
	}
	select {
	case ev, ok := <-s.r.events:
		return s.got(ev, ok)
	case <-s.ctx.Done():
		s.l.cancel(s.r)
		return nil, status.FromContextError(s.ctx.Err()).Err()
	case <-s.l.broken:
		// What arrived before the break is still the run's (its end, maybe).
		select {
		case ev, ok := <-s.r.events:
			return s.got(ev, ok)
		default:
		}
		s.l.forget(s.r)
		return nil, s.l.brokenErr()
	}
}

// Await reports whether Recv would return at once (an event or the end is there, the
// run's context has ended, the lane has broken); if not, it returns false and ready is
// called once, from the lane's reader or the goroutine that ends the context, when Recv
// would. ready must not block: it hands the reading on.
func (s *laneStream) Await(ready func()) bool {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) > 0 || r.ended || s.ctx.Err() != nil {
		return true
	}
	select {
	case <-s.l.broken:
		return true
	default:
	}
	r.ready = ready
	return false
}

func (s *laneStream) got(ev *runnerv1.RunEvent, ok bool) (*runnerv1.RunEvent, error) {
	if ok {
		return ev, nil
	}
	s.stopCancel()
	s.l.forget(s.r)
	if s.r.endErr != nil {
		return nil, s.r.endErr
	}
	return nil, io.EOF
}

// The rest of grpc.ClientStream: a lane run has no headers, trailers or requests to send.

func (s *laneStream) Header() (metadata.MD, error) { return nil, nil }
func (s *laneStream) Trailer() metadata.MD         { return nil }
func (s *laneStream) CloseSend() error             { return nil }
func (s *laneStream) Context() context.Context     { return s.ctx }
func (s *laneStream) SendMsg(any) error {
	return errors.New("run lane: a run takes no further messages")
}
func (s *laneStream) RecvMsg(m any) error {
	out, ok := m.(*runnerv1.RunEvent)
	if !ok {
		return fmt.Errorf("run lane: RecvMsg wants *RunEvent, got %T", m)
	}
	ev, err := s.Recv()
	if err != nil {
		return err
	}
	proto.Merge(out, ev)
	return nil
}
