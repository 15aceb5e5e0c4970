package host

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/agentengine/agentengine/session"
)

// Cluster is what a session store shared by several agentengine replicas offers the
// runtime (the postgres store implements it; New uses it when the store does). A run
// executes on the replica that accepted it; that replica relays the run's journal
// through the store so that any replica can stream it, forwards cancel requests to it,
// and a survivor ends the runs of a replica that died.
type Cluster interface {
	// Orphaned lists in-progress runs no live replica executes, and this replica's
	// older ones (the host skips those it still executes).
	Orphaned(ctx context.Context) ([]session.Run, error)
	// OnOrphans sets the handler of orphaned runs, called from time to time (several
	// replicas may be handed the same run).
	OnOrphans(fn func(ctx context.Context, runs []session.Run))
	// RequestCancel asks the replica executing the run to cancel it; false when the run
	// is not in progress.
	RequestCancel(ctx context.Context, key session.Key, invocationID string) (bool, error)
	// OnCancel sets the handler of cancel requests for runs this replica executes.
	OnCancel(fn func(key session.Key, invocationID string))
	// Publish sends msg to the run's followers on every replica, in call order.
	Publish(ctx context.Context, key session.Key, invocationID string, msg []byte) error
	// Follow calls deliver with the run's messages published from now on, in order,
	// until stop is called; deliver(nil) says some may have been lost (the follower
	// reads the store to catch up). deliver must not block for long.
	Follow(key session.Key, invocationID string, deliver func(msg []byte)) (stop func())
}

// relayEvent is a journal event on the wire between replicas (Event's fields, named).
type relayEvent struct {
	Index  int            `json:"i"`
	Kind   EventKind      `json:"k"`
	Stored *session.Event `json:"s,omitempty"`
	ItemID string         `json:"item,omitempty"`
	CallID string         `json:"call,omitempty"`
	Name   string         `json:"name,omitempty"`
	Text   string         `json:"text,omitempty"`
}

// relayBatchBytes bounds a relay message of several events (a store carries a larger
// one differently, so a single event may exceed it).
const relayBatchBytes = 7000

// encodeRelay encodes a prefix of evs (at least one event) and returns its length.
func encodeRelay(evs []Event) (int, []byte) {
	out := []byte{'['}
	n := 0
	for _, e := range evs {
		b, err := json.Marshal(relayEvent(e))
		if err != nil {
			n++ // cannot happen for journal events; skip rather than stall the relay
			continue
		}
		if n > 0 && len(out)+len(b) > relayBatchBytes {
			break
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, b...)
		n++
	}
	return n, append(out, ']')
}

// relay publishes a run this replica executes, event by event, until its journal ends.
// It runs beside the run, so a slow store delays followers, never the run.
func (rt *Runtime) relay(r *Run) {
	defer rt.wg.Done()
	sub := r.Subscribe(0)
	for {
		e, err := sub.Next(context.Background())
		if err != nil {
			return // the journal is complete
		}
		rt.publish(r.Key, r.InvocationID, append([]Event{e}, sub.Ready()...))
	}
}

func (rt *Runtime) publish(key session.Key, invocationID string, evs []Event) {
	for len(evs) > 0 {
		n, msg := encodeRelay(evs)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := rt.cluster.Publish(ctx, key, invocationID, msg); err != nil {
			rt.log.Warn("could not relay run events to other replicas", "invocation", invocationID, "error", err)
		}
		cancel()
		evs = evs[n:]
	}
}

// follow returns a run another replica executes, fed by its relay: the stored events so
// far, then what the owner publishes. ok is false when the run is not in progress
// (the caller serves it from the store).
func (rt *Runtime) follow(ctx context.Context, key session.Key, invocationID string) (*Run, bool, error) {
	f := &follower{rt: rt}
	// Following starts before the store is read: nothing published after the read is
	// missed, and what the read already holds is recognised by its seq.
	f.stop = rt.cluster.Follow(key, invocationID, f.deliver)
	rec, err := rt.store.GetRun(ctx, key, invocationID)
	if err != nil || rec.Status != session.StatusInProgress {
		f.stop()
		return nil, false, nil
	}
	evs, err := rt.store.Events(ctx, key, session.EventQuery{InvocationID: invocationID})
	if err != nil {
		f.stop()
		return nil, false, err
	}
	r := &Run{Key: key, InvocationID: invocationID, ResponseID: rec.ResponseID, Agent: key.App,
		CreatedAt: rec.CreatedAt, Meta: rec.Meta, status: rec.Status, j: newJournal(), done: make(chan struct{})}
	rk := runKey{key, invocationID}
	rt.mu.Lock()
	if other, ok := rt.runs[rk]; ok {
		rt.mu.Unlock()
		f.stop()
		return other, true, nil
	}
	rt.runs[rk] = r
	rt.mu.Unlock()
	f.mu.Lock()
	f.r = r
	for i := range evs {
		f.add(Event{Kind: KindStored, Stored: &evs[i]})
	}
	for _, msg := range f.pending {
		if msg == nil {
			f.catchUp()
			continue
		}
		f.apply(msg)
	}
	f.pending = nil
	f.mu.Unlock()
	return r, true, nil
}

// follower feeds a followed run's journal from relay messages.
type follower struct {
	rt      *Runtime
	stop    func()
	mu      sync.Mutex
	r       *Run     // nil until the stored events are loaded
	pending [][]byte // messages that arrived before
	lastSeq int64
	ended   bool
}

func (f *follower) deliver(msg []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.r == nil {
		f.pending = append(f.pending, msg)
		return
	}
	if msg == nil {
		f.catchUp()
		return
	}
	f.apply(msg)
}

// catchUp adds what the store holds after the last journaled event (live deltas lost
// with the relay's messages are not stored, and stay lost). It reads the store before
// the next message is applied, so stored events stay in seq order. The caller holds mu.
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

// apply adds a message's events; the caller holds mu.
func (f *follower) apply(msg []byte) {
	var evs []relayEvent
	if json.Unmarshal(msg, &evs) != nil {
		return
	}
	for _, e := range evs {
		if e.Kind == KindStored && e.Stored == nil {
			continue
		}
		f.add(Event(e)) // add renumbers it in this replica's journal
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
	r.j.add(e)
	if !e.Terminal() {
		return
	}
	f.ended = true
	r.mu.Lock()
	r.status = RunStatusOf(e.Stored)
	r.mu.Unlock()
	r.j.close()
	close(r.done)
	go f.stop() // not from the listener's delivery, which holds the store's follow lock
	rt := f.rt
	time.AfterFunc(rt.retention, func() {
		rt.mu.Lock()
		if k := (runKey{r.Key, r.InvocationID}); rt.runs[k] == r {
			delete(rt.runs, k)
		}
		rt.mu.Unlock()
	})
}

// cancelLocal cancels a run this replica executes, at another replica's request.
func (rt *Runtime) cancelLocal(key session.Key, invocationID string) {
	rt.mu.Lock()
	r, ok := rt.runs[runKey{key, invocationID}]
	rt.mu.Unlock()
	if ok && r.cancel != nil {
		r.cancel(errCancelled)
	}
}

// interruptOrphans ends runs whose replica died; their followers learn it from the relay.
func (rt *Runtime) interruptOrphans(ctx context.Context, runs []session.Run) {
	for _, r := range runs {
		evs, err := rt.interrupt(ctx, r, "replica_lost", "the agentengine replica running this run stopped or lost its database")
		if err != nil {
			rt.log.Error("could not interrupt the run of a stopped replica", "invocation", r.InvocationID, "error", err)
			continue
		}
		if len(evs) == 0 {
			continue
		}
		rt.log.Info("marked the run of a stopped replica interrupted", "invocation", r.InvocationID, "session", r.Key.ID)
		out := make([]Event, len(evs))
		for i := range evs {
			out[i] = Event{Kind: KindStored, Stored: &evs[i]}
		}
		rt.publish(r.Key, r.InvocationID, out)
	}
}

// interrupt ends an orphaned run as interrupted unless it executes here; it returns the
// stored closing events (none when it was live or already ended).
func (rt *Runtime) interrupt(ctx context.Context, r session.Run, code, msg string) ([]session.Event, error) {
	rt.mu.Lock()
	local, ok := rt.runs[runKey{r.Key, r.InvocationID}]
	rt.mu.Unlock()
	if ok && local.cancel != nil {
		select {
		case <-local.done: // ended here, but the end could not be recorded
		default:
			return nil, nil // executing here (a followed run has no cancel)
		}
	}
	if h := rt.held.get(r.Key); h != nil && h.invocationID == r.InvocationID {
		return nil, nil // its end is held here and will be written with its real status
	}
	data := session.RunStatusData{Status: session.StatusInterrupted, Error: &session.RunError{Code: code, Message: msg}}
	evs, err := rt.store.FinishRun(ctx, r.Key, r.InvocationID, session.StatusInterrupted, session.NewEvent{
		InvocationID: r.InvocationID, Type: session.TypeRunStatus, Author: r.Key.App, Data: session.MustJSON(data),
	})
	if errors.Is(err, session.ErrInvalid) {
		return nil, nil // ended meanwhile (by its replica or another survivor)
	}
	return evs, err
}
