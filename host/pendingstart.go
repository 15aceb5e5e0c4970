package host

import (
	"context"
	"fmt"

	"github.com/agentengine/agentengine/session"
)

// A turn's start is recorded as it begins, so that its session is busy (a second run is
// refused, on every replica) and whoever holds its ids can follow it. A turn nobody can
// know of before it ends has neither need: a non-stream, foreground request (its client
// learns the ids from the answer) in a session the runtime names for it. Its start is
// recorded with its end, start, events and end in one transaction instead of two: the
// store's costliest part of a turn. A write the run needs before its end (a state
// change, a stream snapshot, a follower) records the start first.

// pendingStart is a run's start not recorded yet: the run record and its opening events,
// which the run's journal already holds with the seqs the store will give them (the
// session is new, so its events count from 1).
type pendingStart struct {
	run     session.Run
	opening []session.NewEvent
}

// startsLater reports whether a turn's start may wait for its end.
func startsLater(req TurnRequest, resumes []pendingApproval) bool {
	return req.Unannounced && req.SessionID == "" && len(resumes) == 0 && len(req.StateDelta) == 0 && req.ContinueFrom == nil
}

// newPendingStart holds run's start and returns its opening events as the store will
// record them: stamped with the run's start time, numbered from 1.
func newPendingStart(run session.Run, opening []session.NewEvent) (*pendingStart, []session.Event) {
	evs := make([]session.Event, len(opening))
	for i := range opening {
		opening[i].Time = run.CreatedAt
		opening[i].InvocationID = run.InvocationID
		ne := &opening[i]
		evs[i] = session.Event{Seq: int64(i) + 1, SessionID: run.Key.ID, InvocationID: ne.InvocationID, ItemID: ne.ItemID,
			Type: ne.Type, Author: ne.Author, Data: ne.Data, StateDelta: ne.StateDelta, Time: ne.Time}
	}
	return &pendingStart{run: run, opening: opening}, evs
}

// whole returns what a run's end writes: for a run whose start is pending, its record
// and the opening events before closing; else no record and closing alone.
func (p *pendingStart) whole(closing []session.NewEvent) (*session.Run, []session.NewEvent) {
	if p == nil {
		return nil, closing
	}
	run := p.run // recordEnd gives it status
	return &run, append(append(make([]session.NewEvent, 0, len(p.opening)+len(closing)), p.opening...), closing...)
}

// recordStart records the run's pending start, if any, before a write that needs it.
func (ts *turnState) recordStart(ctx context.Context) error {
	p := ts.r.pending
	if p == nil {
		return nil
	}
	if _, err := ts.rt.store.StartRun(ctx, p.run, p.opening...); err != nil {
		return fmt.Errorf("record run start: %w", err)
	}
	ts.r.pending = nil
	return nil
}

// skipFirstTurnHistory leaves the history of a private run's session (its first turn, in
// a session nobody else knows) out of the history cache, and reports whether it did. Most
// such sessions are a stateless client's and get no second turn: projecting and encoding
// their history at every run's end was a few percent of a busy host's CPU for nothing. A
// second turn reads the history from the store. Compaction's check after the run gets an
// upper bound of the history's size instead (a message per event; a token per byte of
// data), used only when it is under the policy's limits, so the check still concludes
// without reading anything.
func (rt *Runtime) skipFirstTurnHistory(r *Run, stored []session.Event) bool {
	p := rt.compaction
	if !r.private || r.transcript || len(stored) == 0 || len(stored) > p.MaxMessages {
		return false
	}
	last := stored[len(stored)-1].Seq
	bytes := 0
	for i := range stored {
		bytes += len(stored[i].Data)
	}
	if last != int64(len(stored)) || bytes > p.MaxTokens {
		return false // not the session's only run as recorded, or maybe too long
	}
	rt.hist.take(r.Key) // the entry the run's start made, empty
	r.hist = histSize{through: last, msgs: len(stored), tokens: bytes}
	return true
}
