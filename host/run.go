package host

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/agentengine/agentengine/host/internal/history"
	"github.com/agentengine/agentengine/host/internal/journal"
	"github.com/agentengine/agentengine/session"
)

// Run is one turn: its identity and its journal of events.
type Run struct {
	Key          session.Key
	InvocationID string
	ResponseID   string
	Agent        string
	CreatedAt    time.Time
	Meta         json.RawMessage

	j      *journal.Log[Event]
	done   chan struct{}
	cancel context.CancelCauseFunc
	// hist is the session's history size once the run has ended, as the history cache
	// knew it (zero when it did not); set before done is closed.
	hist history.Size

	mu     sync.Mutex
	status string
	// timers keep a finished run in memory (its retention and its journal's compaction);
	// set before done is closed, stopped by release.
	timers []*time.Timer
	// rt is the runtime that runs it (nil for a run read back from the store).
	rt *Runtime
	// private is set when nobody but the client that started the run can know of it
	// before it ends: an unannounced turn in a session the runtime named for it.
	private bool
	// surface is TurnRequest.Surface.
	surface string
}

// Subscribe returns a cursor over the run's events, starting at journal index from.
func (r *Run) Subscribe(from int) *Subscription {
	if from < 0 {
		from = 0
	}
	r.j.Watch()
	return &Subscription{c: r.j.Cursor(from)}
}

// Done is closed when the run has ended and its terminal event is journaled.
func (r *Run) Done() <-chan struct{} { return r.done }

// Status is the run's current status.
func (r *Run) Status() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// Wait blocks until the run ends and returns all its events. A run nobody has subscribed
// to leaves the runtime's memory then: later requests for it read the store.
func (r *Run) Wait(ctx context.Context) ([]Event, error) {
	select {
	case <-r.done:
		evs := r.j.Snapshot()
		if r.rt != nil {
			r.rt.release(r) // read whole: unless someone streams it, it may go
		}
		return evs, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// forget takes r out of the runs in memory: Open and the lookups read it from the store
// from then on.
func (rt *Runtime) forget(r *Run) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if k := (runKey{r.Key, r.InvocationID}); rt.runs[k] == r {
		delete(rt.runs, k)
	}
}

// release lets a finished run that Wait's caller has read whole leave memory now instead
// of at its compaction, unless someone has subscribed to it, here or from another
// replica (a non-stream request's run): no client has a cursor into its journal to come
// back with, and the store has everything a later request reads. Held until
// compaction, the runs of a busy host were most of its live heap, which every
// collection marks. The caller's r stays whole.
//
// With replicas, a follower elsewhere may have found the run in progress in the store
// and asked for its journal, and the request may still be on its way: such a run stays
// until its compaction, as any other, unless nobody could know of it (an unannounced
// run in a session the runtime named for it).
func (rt *Runtime) release(r *Run) {
	if !r.j.Unwatched() || (rt.cluster != nil && !r.private) {
		return
	}
	r.mu.Lock()
	timers := r.timers // set before done, which Wait has seen closed
	r.timers = nil
	r.mu.Unlock()
	if timers == nil {
		return // released by an earlier Wait
	}
	for _, t := range timers {
		t.Stop()
	}
	rt.forget(r)
	rt.memoryFreed(ForgottenRunWeight)
}
