package pluginsdk

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// laneTestRunner: input "block" waits for its ctx and reports the end on ended; "big"
// emits a text over the test's frame limit; anything else is echoed.
type laneTestRunner struct{ ended chan string }

func (laneTestRunner) Info() Info { return Info{Name: "lane-test"} }

func (r laneTestRunner) Run(ctx context.Context, req *Request, emit *Emitter) error {
	switch in := req.InputText(); in {
	case "block":
		if err := emit.Text("blocking"); err != nil {
			return err
		}
		<-ctx.Done()
		r.ended <- "cancelled"
		return ctx.Err()
	case "big":
		return emit.Text(strings.Repeat("x", 4096))
	default:
		return emit.Text("echo: " + in)
	}
}

type laneClient struct {
	t  *testing.T
	c  net.Conn
	lr *runnerv1.LaneReader
}

func startTestLane(t *testing.T) (*laneServer, laneTestRunner) {
	t.Helper()
	dir, err := os.MkdirTemp("", "ael") // short: unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	r := laneTestRunner{ended: make(chan string, 4)}
	l, err := listenLane(newRunnerServer(r, nil), dir, 1024, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.close)
	return l, r
}

func dialTestLane(t *testing.T, l *laneServer) *laneClient {
	t.Helper()
	c, err := net.Dial("unix", l.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &laneClient{t: t, c: c, lr: runnerv1.NewLaneReader(c, maxLaneFrameBytes)}
}

func (c *laneClient) send(f *runnerv1.LaneFrame) {
	c.t.Helper()
	b, err := runnerv1.EncodeLaneFrame(f, maxLaneFrameBytes)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.c.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *laneClient) start(id uint64, input string) {
	c.t.Helper()
	c.send(&runnerv1.LaneFrame{Run: id, Body: &runnerv1.LaneFrame_Start{Start: &runnerv1.RunRequest{
		InvocationId: "i", PayloadJson: []byte(`{"input":` + `"` + input + `"}`)}}})
}

// read returns the next frame, or nil once the runner has closed the lane.
func (c *laneClient) read() *runnerv1.LaneFrame {
	c.t.Helper()
	_ = c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	f, err := c.lr.Next()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		c.t.Fatal(err)
	}
	return f
}

// texts reads run id's frames to its end: its texts and the end's error.
func (c *laneClient) texts(id uint64) ([]string, string) {
	c.t.Helper()
	var out []string
	for {
		f := c.read()
		if f == nil {
			c.t.Fatal("lane closed before the run's end")
		}
		if f.Run != id {
			continue
		}
		if end := f.GetEnd(); end != nil {
			return out, end.GetError()
		}
		for _, ev := range f.GetEvent().Events() {
			out = append(out, ev.GetTextDelta().GetText())
		}
	}
}

func TestLaneServesRunsAndDescribeNamesIt(t *testing.T) {
	l, _ := startTestLane(t)
	c := dialTestLane(t, l)
	c.start(3, "hi")
	c.start(4, "there")
	got := map[uint64]string{}
	for ended := 0; ended < 2; {
		f := c.read()
		if f == nil {
			t.Fatal("lane closed")
		}
		if end := f.GetEnd(); end != nil {
			if end.GetError() != "" {
				t.Fatalf("run %d ended with %q", f.Run, end.GetError())
			}
			ended++
			continue
		}
		got[f.Run] += f.GetEvent().GetTextDelta().GetText()
	}
	if got[3] != "echo: hi" || got[4] != "echo: there" {
		t.Fatalf("runs got %v", got)
	}
	l.srv.runLane = l.path
	d, _ := l.srv.Describe(context.Background(), &runnerv1.DescribeRequest{})
	if d.GetRunLane() != l.path {
		t.Fatalf("Describe names run lane %q, want %q", d.GetRunLane(), l.path)
	}
}

func TestLaneCancelFrameCancelsTheRun(t *testing.T) {
	l, r := startTestLane(t)
	c := dialTestLane(t, l)
	c.start(1, "block")
	if f := c.read(); f.GetEvent().GetTextDelta().GetText() != "blocking" {
		t.Fatalf("first frame %v", f)
	}
	c.send(&runnerv1.LaneFrame{Run: 1, Body: &runnerv1.LaneFrame_Cancel{Cancel: &runnerv1.LaneCancel{}}})
	select {
	case <-r.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled run is still running")
	}
	c.start(2, "next")
	if got, _ := c.texts(2); strings.Join(got, "") != "echo: next" {
		t.Fatalf("run after the cancel: %q", got)
	}
}

func TestLaneClosedConnectionCancelsItsRuns(t *testing.T) {
	l, r := startTestLane(t)
	c := dialTestLane(t, l)
	c.start(1, "block")
	c.read()
	_ = c.c.Close()
	select {
	case <-r.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("a run outlived its lane")
	}
}

// An event over the frame limit fails that run (with an Error event, as a gRPC message
// over its limit breaks the call), not the lane.
func TestLaneOversizedEventFailsOnlyItsRun(t *testing.T) {
	l, _ := startTestLane(t)
	c := dialTestLane(t, l)
	c.start(1, "big")
	for {
		f := c.read()
		if f == nil {
			t.Fatal("lane closed")
		}
		if f.GetEnd() != nil {
			t.Fatal("the run ended without an Error event")
		}
		if e := f.GetEvent().GetError(); e != nil {
			if !strings.Contains(e.GetMessage(), "the limit is 1024") {
				t.Fatalf("error event %v does not name the limit", e)
			}
			break
		}
	}
	c.start(2, "fine")
	if got, _ := c.texts(2); strings.Join(got, "") != "echo: fine" {
		t.Fatalf("run after the oversized one: %q", got)
	}
}

func TestLaneBadFramesCloseTheConnection(t *testing.T) {
	for name, raw := range map[string][]byte{
		"oversized": binary.BigEndian.AppendUint32(nil, 1<<20),
		"garbage":   append(binary.BigEndian.AppendUint32(nil, 3), 0xff, 0xff, 0xff),
	} {
		t.Run(name, func(t *testing.T) {
			l, _ := startTestLane(t)
			c := dialTestLane(t, l)
			if _, err := c.c.Write(raw); err != nil {
				t.Fatal(err)
			}
			if f := c.read(); f != nil {
				t.Fatalf("got %v, want the lane closed", f)
			}
			c2 := dialTestLane(t, l)
			c2.start(1, "still")
			if got, _ := c2.texts(1); strings.Join(got, "") != "echo: still" {
				t.Fatalf("another connection after a bad one: %q", got)
			}
		})
	}
}
