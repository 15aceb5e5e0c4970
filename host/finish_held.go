package host

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agentengine/agentengine/session"
)

// A run whose end the store cannot record (disk full, database gone) must not strand
// its session as "in progress" for good: the end is retried a few times at once, then
// held in memory. A held end counts as the run's end for the runtime (the session is
// not busy, Cancel finds it ended) and is written when the store takes writes again: in
// the background, before the session's next turn and on Cancel.

// Retries of a run's end before it is held, and of a held end in the background.
const (
	endAttempts      = 3
	endRetryDelay    = 200 * time.Millisecond
	heldRetryFirst   = 250 * time.Millisecond
	heldRetryMaximum = 10 * time.Second
)

// heldEnd is a run's end (its terminal run_status and what the run produced that was
// not stored) waiting for the store.
type heldEnd struct {
	invocationID, status string
	events               []session.NewEvent

	mu   sync.Mutex // serialises writes of this end
	done bool
}

// heldEnds are the held run ends by session.
type heldEnds struct {
	mu sync.Mutex
	m  map[session.Key]*heldEnd
}

func (h *heldEnds) get(key session.Key) *heldEnd {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.m[key]
}

func (h *heldEnds) put(key session.Key, e *heldEnd) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[session.Key]*heldEnd{}
	}
	h.m[key] = e
}

func (h *heldEnds) drop(key session.Key, e *heldEnd) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m[key] == e {
		delete(h.m, key)
	}
}

// recordEnd writes a run's end, retrying briefly when the store fails.
func (rt *Runtime) recordEnd(ctx context.Context, key session.Key, invocationID, status string, evs ...session.NewEvent) ([]session.Event, error) {
	var err error
	for attempt := range endAttempts {
		if attempt > 0 {
			select {
			case <-time.After(endRetryDelay << (attempt - 1)):
			case <-ctx.Done():
				return nil, err
			}
		}
		var out []session.Event
		if out, err = rt.store.FinishRun(ctx, key, invocationID, status, evs...); err == nil {
			return out, nil
		}
		if errors.Is(err, session.ErrNotFound) || errors.Is(err, session.ErrInvalid) {
			// The session is gone or the run already ended: no retry helps.
			return nil, err
		}
	}
	return nil, err
}

// holdEnd keeps a run's end that could not be recorded and
// retries it in the background until it is written or the runtime closes.
func (rt *Runtime) holdEnd(key session.Key, invocationID, status string, evs []session.NewEvent) {
	e := &heldEnd{invocationID: invocationID, status: status, events: evs}
	rt.held.put(key, e)
	rt.log.Warn("run end held in memory until the session store takes writes again", "invocation", invocationID, "session", key.ID, "status", status)
	rt.wg.Add(1)
	go func() {
		defer rt.wg.Done()
		wait := heldRetryFirst
		for {
			select {
			case <-time.After(wait):
			case <-rt.baseCtx.Done():
				// A last try; if it fails, Recover marks the run interrupted at the next start.
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_ = rt.writeHeld(ctx, key, e)
				cancel()
				return
			}
			if rt.writeHeld(rt.baseCtx, key, e) == nil {
				return
			}
			wait = min(2*wait, heldRetryMaximum)
		}
	}()
}

// flushHeld writes the session's held run end, if any.
func (rt *Runtime) flushHeld(ctx context.Context, key session.Key) error {
	e := rt.held.get(key)
	if e == nil {
		return nil
	}
	return rt.writeHeld(ctx, key, e)
}

func (rt *Runtime) writeHeld(ctx context.Context, key session.Key, e *heldEnd) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return nil
	}
	_, err := rt.store.FinishRun(ctx, key, e.invocationID, e.status, e.events...)
	if err != nil && !errors.Is(err, session.ErrNotFound) && !errors.Is(err, session.ErrInvalid) {
		return err
	}
	e.done = true
	rt.held.drop(key, e)
	if err == nil {
		rt.log.Info("recorded a held run end", "invocation", e.invocationID, "session", key.ID, "status", e.status)
	}
	return nil
}

// withHeldEnd shows a session whose active run's end is held as that run having ended.
func (rt *Runtime) withHeldEnd(s session.Session) session.Session {
	if s.ActiveRunStatus != session.StatusInProgress {
		return s
	}
	if e := rt.held.get(s.Key); e != nil && e.invocationID == s.ActiveInvocationID {
		s.ActiveRunStatus = e.status
	}
	return s
}

// endStuckRun ends a run the store has in progress that no runtime executes (its end
// was lost): with its held end when there is one, else as cancelled.
func (rt *Runtime) endStuckRun(ctx context.Context, key session.Key, invocationID string) error {
	if e := rt.held.get(key); e != nil && e.invocationID == invocationID {
		if err := rt.writeHeld(ctx, key, e); err != nil {
			rt.log.Warn("held run end still not recorded", "invocation", invocationID, "error", err)
		}
		return nil // ended, in memory at least
	}
	data := session.RunStatusData{Status: session.StatusCancelled}
	_, err := rt.recordEnd(ctx, key, invocationID, session.StatusCancelled, rt.orphanEnd(ctx, key, invocationID, data)...)
	if errors.Is(err, session.ErrInvalid) {
		return nil // it ended meanwhile
	}
	return err
}
