package pluginsdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/internal/gopool"
	"github.com/agentengine/agentengine/internal/runnerplugin"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// maxLaneFrameBytes: a frame wraps one protocol message and a few bytes of its own.
const maxLaneFrameBytes = runnerplugin.MaxMessageBytes + runnerv1.LaneFrameOverhead

// laneEnabled reports whether the environment leaves the run lane on.
func laneEnabled() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(runnerplugin.RunLaneEnv))) {
	case "off", "0", "false":
		return false
	}
	return true
}

// laneServer serves runs on the run lane (runner.proto, LaneFrame): one unix socket on
// which the host sends every run of this process, instead of a gRPC call per run.
type laneServer struct {
	srv      *runnerServer
	ln       net.Listener
	path     string
	log      hclog.Logger
	maxFrame int
	workers  *gopool.Pool // runs' goroutines, kept with their grown stacks
}

// listenLane opens the lane's socket in dir, the directory the host gave the runner for
// its go-plugin socket (only there does the host accept it). maxFrame bounds a frame
// either way (maxLaneFrameBytes).
func listenLane(srv *runnerServer, dir string, maxFrame int, log hclog.Logger) (*laneServer, error) {
	path := filepath.Join(dir, fmt.Sprintf("r%d.lane", os.Getpid()))
	_ = os.Remove(path) // a dead process's socket with our pid
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("run lane: %w", err)
	}
	l := &laneServer{srv: srv, ln: ln, path: path, log: log, maxFrame: maxFrame, workers: gopool.New(gopool.RunIdle)}
	go l.accept()
	return l, nil
}

func (l *laneServer) close() { _ = l.ln.Close() }

func (l *laneServer) accept() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return // closed
		}
		go l.serve(c)
	}
}

// laneConn is one host connection and the runs on it.
type laneConn struct {
	c        net.Conn
	maxFrame int
	w        *laneWriter
	mu       sync.Mutex
	// runs maps a run id to its cancel; closing the connection cancels them all.
	runs map[uint64]context.CancelFunc
}

func (l *laneServer) serve(c net.Conn) {
	ctx, cancelAll := context.WithCancel(context.Background())
	lc := &laneConn{c: c, maxFrame: l.maxFrame, w: newLaneWriter(c), runs: map[uint64]context.CancelFunc{}}
	defer func() {
		cancelAll()
		lc.w.close()
		_ = c.Close()
	}()
	lr := runnerv1.NewLaneReader(c, l.maxFrame)
	for {
		f, err := lr.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				l.log.Error("run lane broken; closing it", "error", err)
			}
			return // the host closed the lane, or it is out of step
		}
		switch body := f.GetBody().(type) {
		case *runnerv1.LaneFrame_Start:
			if !l.start(ctx, lc, f.Run, body.Start) {
				l.log.Warn("run lane: run id already running; ignored", "run", f.Run)
			}
		case *runnerv1.LaneFrame_Cancel:
			lc.mu.Lock()
			cancel := lc.runs[f.Run]
			delete(lc.runs, f.Run)
			lc.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		default:
			l.log.Warn("unexpected run lane frame from the host; ignored", "run", f.Run)
		}
	}
}

// start registers a run (so that a cancel frame right behind it finds it) and starts it;
// false if the id is taken.
func (l *laneServer) start(ctx context.Context, lc *laneConn, id uint64, in *runnerv1.RunRequest) bool {
	runCtx, cancel := context.WithCancel(ctx)
	lc.mu.Lock()
	if _, dup := lc.runs[id]; dup {
		lc.mu.Unlock()
		cancel()
		return false
	}
	lc.runs[id] = cancel
	lc.mu.Unlock()
	l.workers.Go(func() {
		req := in
		in = nil // the closure lets go of the request: run holds it while it needs it
		l.run(runCtx, lc, id, req)
	})
	return true
}

// run serves one run and ends it with an end frame, unless the host cancelled it.
func (l *laneServer) run(ctx context.Context, lc *laneConn, id uint64, in *runnerv1.RunRequest) {
	err := l.srv.serveRun(ctx, in, func(ev *runnerv1.RunEvent) error {
		return lc.write(&runnerv1.LaneFrame{Run: id, Body: &runnerv1.LaneFrame_Event{Event: ev}})
	})
	lc.mu.Lock()
	cancel, live := lc.runs[id]
	delete(lc.runs, id)
	lc.mu.Unlock()
	if !live {
		return // cancelled: the host has let go of it
	}
	cancel()
	end := &runnerv1.LaneEnd{}
	if err != nil {
		end.Error = err.Error()
	}
	_ = lc.write(&runnerv1.LaneFrame{Run: id, Body: &runnerv1.LaneFrame_End{End: end}})
}

// write queues one frame for the lane's writer, which sends it whole: frames of
// concurrent runs never interleave. A frame over the limit is not sent: the host would
// refuse it and close the lane with every run on it; this fails only this run's send, as
// gRPC fails a message over its limit.
func (lc *laneConn) write(f *runnerv1.LaneFrame) error {
	buf, err := runnerv1.EncodeLaneFrame(f, lc.maxFrame)
	if err != nil {
		return err
	}
	return lc.w.send(buf)
}
