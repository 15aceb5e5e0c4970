package openai

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/host"
)

// sseWriter writes Server-Sent Events to a gin response.
type sseWriter struct {
	w   gin.ResponseWriter
	buf *bufio.Writer
}

// startSSE sends the stream's headers. Errors found after this point can only be
// reported in-band.
func startSSE(c *gin.Context) *sseWriter {
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // tell reverse proxies not to buffer
	c.Writer.WriteHeader(http.StatusOK)
	c.Writer.WriteHeaderNow()
	return &sseWriter{w: c.Writer, buf: bufio.NewWriterSize(c.Writer, 8<<10)}
}

// event writes a named event; data is one line of JSON.
func (s *sseWriter) event(name string, data []byte) error {
	if name != "" {
		s.buf.WriteString("event: ")
		s.buf.WriteString(name)
		s.buf.WriteByte('\n')
	}
	s.buf.WriteString("data: ")
	s.buf.Write(data)
	_, err := s.buf.WriteString("\n\n")
	return err
}

// comment writes an SSE comment, which every client parser drops (keep-alive).
func (s *sseWriter) comment(text string) error {
	_, err := s.buf.WriteString(": " + text + "\n\n")
	return err
}

func (s *sseWriter) flush() error {
	if err := s.buf.Flush(); err != nil {
		return err
	}
	s.w.Flush()
	return nil
}

// follow feeds the events of sub to handle until the run's journal ends, the client
// goes away (ctx) or a write fails. Events that are already available are written in
// one go and flushed together as soon as the stream catches up with the run, so a
// burst costs one flush while a live stream still flushes every event as it arrives.
// While the run is idle, a ": ping" comment goes out every keepAlive.
func follow(ctx context.Context, sub *host.Subscription, s *sseWriter, keepAlive time.Duration, handle func(host.Event) error) error {
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
			return s.flush()
		}
		if err := s.flush(); err != nil {
			return err
		}
		wait, stop := context.WithTimeout(ctx, keepAlive)
		ev, err = sub.Next(wait)
		stop()
		switch {
		case err == nil:
			if err := handle(ev); err != nil {
				return err
			}
		case errors.Is(err, io.EOF):
			return s.flush()
		case ctx.Err() != nil:
			return ctx.Err()
		default: // idle for keepAlive
			if err := s.comment("ping"); err != nil {
				return err
			}
		}
	}
}

// available returns the events journaled so far, without waiting.
func available(sub *host.Subscription) []host.Event {
	ready, cancel := context.WithCancel(context.Background())
	cancel()
	var out []host.Event
	for {
		ev, err := sub.Next(ready)
		if err != nil {
			return out
		}
		out = append(out, ev)
	}
}
