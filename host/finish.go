// Stage 3 of a turn, finish: the terminal event is recorded (finish_held.go when the
// store cannot take it), the journal closes, the run is retained in memory for a while;
// afterwards the worker checks whether the session needs compacting (finish_compact.go).

package host

import (
	"context"
	"errors"
	"time"
	"weak"

	"github.com/agentengine/agentengine/session"
)

// finish ends the run, in the order its readers rely on: the terminal event is recorded
// (or held, when the store fails), the journal gets what was stored and closes, and the
// run stays in memory for its retention. A store failure here is logged and the terminal
// event is still journaled so no subscriber waits forever.
func (ts *turnState) finish(ctx context.Context, status string, data session.RunStatusData) {
	ts.ended = true
	ne := ts.endEvent(data)
	evs := ts.recordEnd(ctx, status, ne)
	// The turn's span ends before its end is published: a client that reads the
	// session's traces as soon as its stream ends (ADK's dev UI does) finds the turn.
	ts.endTurnSpan(data)
	ts.journalEnd(status, evs)
	ts.rt.retain(ts.r)
	close(ts.r.done)
}

// endEvent is the run's terminal run_status. The run's checkpoints are saved in the
// transaction that ends it: an interrupted run is resumable exactly when it is recorded
// as interrupted.
func (ts *turnState) endEvent(data session.RunStatusData) session.NewEvent {
	r := ts.r
	return session.NewEvent{InvocationID: r.InvocationID, Type: session.TypeRunStatus, Author: r.Agent, Data: session.MustJSON(data),
		Checkpoints: ts.checkpoints.save()}
}

// recordEnd writes the deferred items and the terminal event ne in one store write and
// returns the stored events the journal still lacks (the deferred items' places are
// filled here).
func (ts *turnState) recordEnd(ctx context.Context, status string, ne session.NewEvent) []session.Event {
	r := ts.r
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	sw := ts.rt.storeWrite(ctx, "finish_run")
	evs, err := ts.rt.recordEnd(ctx, r.Key, r.InvocationID, status, append(ts.deferred, ne)...)
	sw.end(err)
	if err != nil {
		ts.logger().Error("could not record run end", "invocation", r.InvocationID, "status", status, "error", err)
		evs = ts.holdEnd(ctx, status, ne)
	}
	evs = ts.releaseHeld(evs)
	ts.deferred = nil // recorded (or held by the runtime): the copies here are done with
	return evs
}

// holdEnd is recordEnd's path when the store could not record the end: what the run
// produced is stored if it can be, the end is held by the runtime (and written when the
// store recovers), and the journal gets the unrecorded end after the deferred items'
// places, filled with what the run produced when not stored.
func (ts *turnState) holdEnd(ctx context.Context, status string, ne session.NewEvent) []session.Event {
	r := ts.r
	var (
		evs []session.Event
		err error
	)
	held := []session.NewEvent{ne}
	if len(ts.deferred) > 0 {
		// What the run produced is still recorded when only its end cannot be.
		if evs, err = ts.rt.store.Append(ctx, r.Key, ts.deferred...); err != nil {
			ts.logger().Error("could not record the run's items", "invocation", r.InvocationID, "error", err)
			held = append(append([]session.NewEvent(nil), ts.deferred...), ne)
		}
	}
	if !errors.Is(err, session.ErrNotFound) {
		// Never a session stuck in progress: the end counts from now and is
		// written when the store recovers.
		ts.rt.holdEnd(r.Key, r.InvocationID, status, held)
	}
	return append(ts.releaseHeld(evs), session.Event{SessionID: r.Key.ID, InvocationID: r.InvocationID, Type: ne.Type, Author: ne.Author, Data: ne.Data, Time: time.Now().UTC()})
}

// journalEnd gives the run its status, journals the end's events, brings the history
// cache up to date and closes the journal.
func (ts *turnState) journalEnd(status string, evs []session.Event) {
	r, rt := ts.r, ts.rt
	r.mu.Lock()
	r.status = status
	r.mu.Unlock()
	for i := range evs {
		r.j.Add(Event{Kind: KindStored, Stored: &evs[i]})
	}
	// Before done: a client's next turn, sent as soon as this one ends, then finds the
	// history up to date and reads nothing of it.
	r.hist = rt.hist.Extend(r.Key, storedEvents(r.j))
	r.j.Close()
	rt.metrics.RunEnded(r.Agent, r.surface, status, time.Since(r.CreatedAt))
}

// retain keeps a finished run in memory for late subscribers: until its retention ends,
// or earlier, once its journal has been compacted and nobody reads it any more.
//
// What outlives the run refers to rt and r only, not to its turnState: the turn's
// buffers (the message text, deferred items, checkpoints) go with the run's end, not with
// its retention. The timers refer to r weakly: a stopped timer can stay in the runtime's
// timer heap until its time would have come, and with it what its function refers to, a
// whole run let go minutes earlier. While the run is retained, rt.runs holds it.
func (rt *Runtime) retain(r *Run) {
	wr := weak.Make(r)
	retained := time.AfterFunc(rt.retention, func() {
		if r := wr.Value(); r != nil {
			rt.forget(r)
		}
	})
	timers := []*time.Timer{retained}
	if rt.compactAfter < rt.retention {
		timers = append(timers, time.AfterFunc(rt.compactAfter, func() {
			r := wr.Value()
			if r == nil {
				return // let go already
			}
			// Once nobody follows it, or everyone who did has read it to its end, no
			// client comes back with a cursor into its journal: Open serves it from
			// the store from then on, as it would after retention.
			rt.memoryFreed(r.j.CompactThenSettle(func() {
				rt.forget(r)
				retained.Stop() // nothing left for it to do
				rt.memoryFreed(ForgottenRunWeight)
			}))
		}))
	}
	r.mu.Lock()
	r.timers = timers
	r.mu.Unlock()
}
