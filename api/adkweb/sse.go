package adkweb

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

// sseWriter writes ADK's stream framing: one "data: <Event JSON>" line per event and a
// blank line, no event names or ids.
type sseWriter struct {
	w   gin.ResponseWriter
	buf *bufio.Writer
}

// startSSE sends the stream's headers; later errors can only go in-band.
func startSSE(c *gin.Context) *sseWriter {
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // tell reverse proxies not to buffer
	c.Writer.WriteHeader(http.StatusOK)
	c.Writer.WriteHeaderNow()
	return &sseWriter{w: c.Writer, buf: bufio.NewWriterSize(c.Writer, 8<<10)}
}

func (s *sseWriter) data(b []byte) error {
	s.buf.WriteString("data: ")
	s.buf.Write(b)
	_, err := s.buf.WriteString("\n\n")
	return err
}

// comment writes an SSE comment; ADK web's reader keeps only data: lines.
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

// follow feeds the run's events to handle until its journal ends, the client goes away
// or a write fails. Events already journaled go out in one write; the stream is flushed
// whenever it catches up with the run, and a comment keeps idle streams open.
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
