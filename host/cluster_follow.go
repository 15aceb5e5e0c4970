package host

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/agentengine/agentengine/session"
)

// follow returns a run another replica executes, fed by its relay: the owner publishes
// the run's journal from its first event on request, then live. ok is false when the
// run is not in progress (the caller serves it from the store).
func (rt *Runtime) follow(ctx context.Context, key session.Key, invocationID string) (*Run, bool, error) {
	rec, err := rt.store.GetRun(ctx, key, invocationID)
	if err != nil || rec.Status != session.StatusInProgress {
		return nil, false, nil
	}
	r := &Run{Key: key, InvocationID: invocationID, ResponseID: rec.ResponseID, Agent: key.App,
		CreatedAt: rec.CreatedAt, Meta: rec.Meta, status: rec.Status, j: newJournal(), done: make(chan struct{})}
	rk := runKey{key, invocationID}
	rt.mu.Lock()
	if other, ok := rt.runs[rk]; ok {
		rt.mu.Unlock()
		return other, true, nil
	}
	rt.runs[rk] = r
	rt.mu.Unlock()
	f := &follower{rt: rt, r: r, pend: map[int]Event{}}
	// Following starts with the request to the owner: everything it publishes in answer
	// is received.
	f.mu.Lock()
	f.stop = rt.cluster.Follow(key, invocationID, f.deliver)
	f.silence = time.AfterFunc(ownerSilence, f.check)
	f.mu.Unlock()
	// The run may have ended between the status read and the request: then nobody
	// publishes its end, and the store has it.
	if rec2, err := rt.store.GetRun(ctx, key, invocationID); err == nil && rec2.Status != session.StatusInProgress {
		f.mu.Lock()
		f.catchUp()
		f.mu.Unlock()
	}
	return r, true, nil
}

// follower feeds a followed run's journal from relay messages, in the owner's journal
// order: an event is journaled once every earlier one is (by the owner's index), so the
// journal here is the owner's, event for event, and surfaces number their stream events
// alike on every replica.
type follower struct {
	rt      *Runtime
	r       *Run
	stop    func()      // of the latest follow request
	silence *time.Timer // runs check
	mu      sync.Mutex
	next    int           // the owner's journal index of the next event to journal
	pend    map[int]Event // events that arrived ahead of next, by index
	lastSeq int64
	ended   bool
	waits   int // checks in a row that found the follower waiting for the owner
}

func (f *follower) deliver(msg []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if msg == nil {
		// Messages may have been lost: ask for the run again (what arrives fills the
		// gap; the rest is dropped by index), and read the store if nothing comes.
		f.requestReplay()
		f.silence.Reset(ownerSilence)
		return
	}
	var evs []relayEvent
	if json.Unmarshal(msg, &evs) != nil {
		return
	}
	for _, re := range evs {
		e := Event(re)
		if e.Kind == KindStored && e.Stored == nil {
			continue
		}
		switch {
		case e.Index < 0: // from the store: placed by seq, after what the store holds before it
			if e.Kind == KindStored && e.Stored.Seq > f.lastSeq+1 {
				f.catchUp()
			}
			f.add(e)
		case e.Index < f.next:
			// journaled already
		case e.Index > f.next:
			f.pend[e.Index] = e
		default:
			f.add(e)
			f.next++
			for {
				p, ok := f.pend[f.next]
				if !ok {
					break
				}
				delete(f.pend, f.next)
				f.add(p)
				f.next++
			}
		}
	}
}

// check runs ownerSilence after a follow request: a follower still waiting for the
// owner (nothing yet, or a gap in the owner's indexes) asks again, and from the second
// time on first takes what the store holds (the run may have ended).
func (f *follower) check() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended || (f.next > 0 && len(f.pend) == 0) {
		f.waits = 0
		return
	}
	if f.waits++; f.waits >= 2 {
		f.catchUp()
		if f.ended {
			return
		}
	}
	f.requestReplay()
	f.silence.Reset(ownerSilence)
}

// requestReplay follows the run again, which asks its owner to publish it from the
// start; the previous registration ends once the new one is in place (copies in between
// are dropped by index). The caller holds mu.
func (f *follower) requestReplay() {
	if f.ended {
		return
	}
	old := f.stop
	f.stop = f.rt.cluster.Follow(f.r.Key, f.r.InvocationID, f.deliver)
	go old() // not from the listener's delivery
}

// catchUp adds what the store holds after the last journaled stored event: messages
// were lost (the listener reconnected), or the owner is silent. Live deltas lost with
// them are not stored, and stay lost. The caller holds mu.
func (f *follower) catchUp() {
	if f.ended {
		return
	}
	r := f.r
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	evs, err := f.rt.store.Events(ctx, r.Key, session.EventQuery{InvocationID: r.InvocationID, AfterSeq: f.lastSeq})
	if err != nil {
		f.rt.log.Warn("could not catch up with a followed run", "invocation", r.InvocationID, "error", err)
		return
	}
	for i := range evs {
		f.add(Event{Kind: KindStored, Stored: &evs[i]})
	}
}

// add journals e unless the run has ended or e is a stored event already journaled; the
// terminal event ends the run. The caller holds mu.
func (f *follower) add(e Event) {
	if f.ended {
		return
	}
	if e.Kind == KindStored {
		if e.Stored.Seq <= f.lastSeq {
			return
		}
		f.lastSeq = e.Stored.Seq
	}
	r := f.r
	r.j.Add(e) // numbered by this journal, which matches the owner's while in order
	if !e.Terminal() {
		return
	}
	f.ended = true
	f.pend = nil
	f.silence.Stop()
	r.mu.Lock()
	r.status = RunStatusOf(e.Stored)
	r.mu.Unlock()
	r.j.Close()
	close(r.done)
	go f.stop() // not from the listener's delivery
	rt := f.rt
	time.AfterFunc(rt.retention, func() {
		rt.mu.Lock()
		if k := (runKey{r.Key, r.InvocationID}); rt.runs[k] == r {
			delete(rt.runs, k)
		}
		rt.mu.Unlock()
	})
}
