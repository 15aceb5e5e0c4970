package actions

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/sse"
	"github.com/agentengine/agentengine/host"
)

// subscribe serves GET SubscribeRunEvents?SessionId=&InvocationId=&AfterSeqId=: the
// run's stored events after the cursor (Last-Event-ID wins over AfterSeqId), then its
// live ones as they happen, ending with [DONE] after the terminal run_status. A run
// that already ended is served from the store and the stream closes at once.
func (s *Surface) subscribe(c *gin.Context) {
	const action = "SubscribeRunEvents"
	requestID(c)
	run, after, e := s.openSubscription(c)
	if e != nil {
		fail(c, action, e)
		return
	}
	w := startSSE(c)
	if err := s.follow(c.Request.Context(), run, after, w); err != nil && !errors.Is(err, context.Canceled) {
		s.log.Debug("run event stream ended early", "invocation", run.InvocationID, "error", err)
	}
}

func (s *Surface) openSubscription(c *gin.Context) (*host.Run, int64, *actionError) {
	sessionID, inv := c.Query("SessionId"), c.Query("InvocationId")
	if e := requireID("InvocationId", inv); e != nil {
		return nil, 0, e
	}
	key, e := s.sessionKey(c, scoped{AgentID: c.Query("AgentId"), UserID: c.Query("UserId")}, sessionID)
	if e != nil {
		return nil, 0, e
	}
	cursor, e := queryInt64(c, "AfterSeqId")
	if e != nil {
		return nil, 0, e
	}
	var after int64
	if cursor != nil {
		after = *cursor
	}
	// A browser EventSource reconnects with the id of the last frame it got.
	if v := strings.TrimSpace(c.GetHeader("Last-Event-ID")); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, 0, invalid("the Last-Event-ID header must be a SeqId, not %q", v)
		}
		after = n
	}
	ctx := c.Request.Context()
	if _, e := s.existing(ctx, "SubscribeRunEvents", key); e != nil {
		return nil, 0, e
	}
	run, err := s.rt.Open(ctx, key, inv)
	if errors.Is(err, host.ErrNotFound) {
		return nil, 0, conflict("InvocationId %q does not belong to SessionId %q", inv, key.ID)
	}
	if err != nil {
		return nil, 0, s.fromHost("SubscribeRunEvents", err)
	}
	return run, after, nil
}

// follow writes the run's frames until it ends, the client goes away or a write
// fails. It blocks on the journal (no polling): what is already journaled goes out in
// one flush; then it waits for the next event, for the live-text interval when text
// is pending, or for the keep-alive interval, after which it sends ": heartbeat".
func (s *Surface) follow(ctx context.Context, run *host.Run, after int64, w sseWriter) error {
	f := newFollower(run, after)
	sub := run.Subscribe(0)
	ready, cancel := context.WithCancel(ctx)
	cancel() // a done context makes Next return only what is already journaled
	var lastLive time.Time
	for {
		ev, err := sub.Next(ready)
		if err == nil {
			if err := w.frames(f.add(ev)); err != nil || f.ended {
				return errors.Join(err, w.flush())
			}
			continue
		}
		if errors.Is(err, io.EOF) {
			// The journal ended without a terminal status (a run that left memory
			// unfinished): nothing more will come.
			return errors.Join(w.frames(f.flushLive(time.Now())), w.frames([]frame{doneFrame()}), w.flush())
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait := s.cfg.KeepAlive
		if f.pending() {
			if since := time.Since(lastLive); since >= s.cfg.LiveInterval {
				lastLive = time.Now()
				if err := w.frames(f.flushLive(lastLive)); err != nil {
					return err
				}
			} else {
				wait = s.cfg.LiveInterval - since
			}
		}
		if err := w.flush(); err != nil {
			return err
		}
		waitCtx, stop := context.WithTimeout(ctx, wait)
		ev, err = sub.Next(waitCtx)
		stop()
		switch {
		case err == nil:
			if err := w.frames(f.add(ev)); err != nil || f.ended {
				return errors.Join(err, w.flush())
			}
		case errors.Is(err, io.EOF):
		case ctx.Err() != nil:
			return ctx.Err()
		case !f.pending():
			if err := w.comment("heartbeat"); err != nil {
				return err
			}
		}
	}
}

// sseWriter frames the subscription's frames on the shared SSE writer.
type sseWriter struct{ *sse.Writer }

func startSSE(c *gin.Context) sseWriter { return sseWriter{sse.Start(c)} }

func (s sseWriter) frames(fs []frame) error {
	for _, f := range fs {
		if err := s.Event(f.id, f.event, f.data); err != nil {
			return err
		}
	}
	return nil
}

// comment writes an SSE comment and flushes it (KsADK's UI treats a comment-only frame
// as a ping).
func (s sseWriter) comment(text string) error {
	if err := s.Comment(text); err != nil {
		return err
	}
	return s.Flush()
}

func (s sseWriter) flush() error { return s.Flush() }
