// Package sse writes Server-Sent Events for every HTTP surface, and follows a run's
// journal onto such a stream.
package sse

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/host"
)

// Writer writes events through a buffer that is flushed at catch-up points, so a burst of
// ready events costs one flush while a live stream still sees every event at once.
//
// The buffer is borrowed from bufPool for a burst and handed back at its flush: an open
// stream waiting for its run's next event holds none (thousands of open streams would
// otherwise keep 8 KiB each for nothing).
type Writer struct {
	w   gin.ResponseWriter
	buf *bufio.Writer // nil between bursts
}

// bufPool holds idle write buffers (a cache, like net/http's own bufio pools).
var bufPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 8<<10) }}

// b returns the burst's buffer, borrowing one if the stream holds none.
func (s *Writer) b() *bufio.Writer {
	if s.buf == nil {
		s.buf = bufPool.Get().(*bufio.Writer)
		s.buf.Reset(s.w)
	}
	return s.buf
}

// ObserverKey is the gin context key under which a router may put an Observer.
const ObserverKey = "agentengine.sse.observer"

// doneKey holds what the Observer returned, for Ended.
const doneKey = "agentengine.sse.done"

// Observer is told when a request's stream starts (metrics count the streams open); the
// function it returns is called by Ended when the request is over.
type Observer func() (done func())

// Ended tells the request's Observer that its stream, if it started one, is over.
func Ended(c *gin.Context) {
	if d, ok := c.Get(doneKey); ok {
		if done, ok := d.(func()); ok {
			done()
		}
	}
}

// Start sends the stream's headers. Errors found after this point can only be reported
// in-band.
func Start(c *gin.Context) *Writer {
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // tell reverse proxies not to buffer
	c.Writer.WriteHeader(http.StatusOK)
	c.Writer.WriteHeaderNow()
	if o, ok := c.Get(ObserverKey); ok {
		if observe, ok := o.(Observer); ok {
			c.Set(doneKey, observe())
		}
	}
	return &Writer{w: c.Writer}
}

// Event writes one event: an "id:" line when id is set, an "event:" line when name is
// set, and data as one "data:" line (callers pass single-line JSON).
func (s *Writer) Event(id, name string, data []byte) error {
	s.head(id, name)
	b := s.b()
	b.Write(data)
	_, err := b.WriteString("\n\n")
	return err
}

// EventFrom is Event with the data written by data (one line, as for Event), for data
// that is not in memory as one piece.
func (s *Writer) EventFrom(id, name string, data func(io.Writer) error) error {
	s.head(id, name)
	b := s.b()
	if err := data(b); err != nil {
		return err
	}
	_, err := b.WriteString("\n\n")
	return err
}

// head writes an event's "id:" and "event:" lines and the start of its "data:" line.
func (s *Writer) head(id, name string) {
	b := s.b()
	if id != "" {
		b.WriteString("id: ")
		b.WriteString(id)
		b.WriteByte('\n')
	}
	if name != "" {
		b.WriteString("event: ")
		b.WriteString(name)
		b.WriteByte('\n')
	}
	b.WriteString("data: ")
}

// Comment writes an SSE comment, which every client parser drops (keep-alive).
func (s *Writer) Comment(text string) error {
	_, err := s.b().WriteString(": " + text + "\n\n")
	return err
}

// Flush sends everything buffered to the client.
func (s *Writer) Flush() error {
	if b := s.buf; b != nil {
		if err := b.Flush(); err != nil {
			return err // the stream is broken: its buffer is left to the collector
		}
		b.Reset(nil) // no reference to this response from the pool
		bufPool.Put(b)
		s.buf = nil
	}
	s.w.Flush()
	return nil
}

// Follow feeds the events of sub to handle until the run's journal ends, the client goes
// away (ctx) or a write fails. Events already journaled are written in one go and
// flushed when the stream catches up with the run. While the run is idle, a comment
// (keepAlive text) goes out every interval.
func Follow(ctx context.Context, sub *host.Subscription, s *Writer, interval time.Duration, keepAlive string, handle func(host.Event) error) error {
	ready, cancel := context.WithCancel(ctx)
	cancel() // a done context makes Next return only what is already journaled
	for {
		ev, err := sub.Next(ready)
		if err == nil {
			if err := handle(ev); err != nil {
				return err
			}
			continue
		}
		if errors.Is(err, io.EOF) {
			return s.Flush()
		}
		if err := s.Flush(); err != nil {
			return err
		}
		wait, stop := context.WithTimeout(ctx, interval)
		ev, err = sub.Next(wait)
		stop()
		switch {
		case err == nil:
			if err := handle(ev); err != nil {
				return err
			}
		case errors.Is(err, io.EOF):
			return s.Flush()
		case ctx.Err() != nil:
			return ctx.Err()
		default: // idle for the interval
			if err := s.Comment(keepAlive); err != nil {
				return err
			}
		}
	}
}
