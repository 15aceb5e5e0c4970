package pluginsdk

import (
	"errors"
	"fmt"
	"net"
	"sync"
)

// laneWriter sends a lane connection's frames from one goroutine of its own. A run's
// send queues its frame and returns; the writer sends everything queued since its last
// write in one write (writev). An agent emits a turn's events one after another, each a
// few microseconds apart, while a write to the socket takes longer than that: a turn's
// ten events went out as ten writes (and the host read them with ten reads); queued, they
// go out in two or three. Frames are sent in the order they were queued, whole.
type laneWriter struct {
	c    net.Conn
	kick chan struct{} // a frame was queued on an empty queue
	done chan struct{} // closed by close: the writer exits

	mu      sync.Mutex
	drained *sync.Cond // the writer took the queue (or failed)
	queue   net.Buffers
	spare   net.Buffers
	queued  int   // bytes in queue
	err     error // why the connection takes no more frames; sticky
}

// maxQueuedBytes bounds what a lane's runs may queue before a send waits for the socket:
// a host that reads slowly slows its runs down instead of growing the runner's memory.
// One frame over it is queued alone.
const maxQueuedBytes = 4 << 20

// errLaneClosed fails sends after the connection ended.
var errLaneClosed = errors.New("run lane: connection closed")

func newLaneWriter(c net.Conn) *laneWriter {
	w := &laneWriter{c: c, kick: make(chan struct{}, 1), done: make(chan struct{})}
	w.drained = sync.NewCond(&w.mu)
	go w.run()
	return w
}

// send queues one encoded frame. It fails once the connection has failed or closed.
func (w *laneWriter) send(frame []byte) error {
	w.mu.Lock()
	for w.err == nil && w.queued > 0 && w.queued+len(frame) > maxQueuedBytes {
		w.drained.Wait()
	}
	if err := w.err; err != nil {
		w.mu.Unlock()
		return err
	}
	first := len(w.queue) == 0
	w.queue = append(w.queue, frame)
	w.queued += len(frame)
	w.mu.Unlock()
	if first {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// close ends the writer; frames still queued are dropped with the connection.
func (w *laneWriter) close() {
	w.mu.Lock()
	if w.err == nil {
		w.err = errLaneClosed
		close(w.done)
	}
	w.mu.Unlock()
	w.drained.Broadcast()
}

func (w *laneWriter) run() {
	for {
		select {
		case <-w.kick:
		case <-w.done:
			return
		}
		w.mu.Lock()
		out := w.queue
		w.queue, w.spare = w.spare[:0], nil
		w.queued = 0
		w.mu.Unlock()
		if len(out) == 0 {
			continue // a kick for frames an earlier round took
		}
		w.drained.Broadcast()
		sent := out // WriteTo consumes its receiver
		_, err := sent.WriteTo(w.c)
		clear(out) // let go of the frames
		w.mu.Lock()
		w.spare = out[:0]
		if err != nil && w.err == nil {
			w.err = fmt.Errorf("run lane: %w", err)
			close(w.done)
		}
		w.mu.Unlock()
		if err != nil {
			w.drained.Broadcast()
			return
		}
	}
}
