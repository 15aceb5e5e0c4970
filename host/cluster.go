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
// runtime (the postgres store opened as a replica implements it; see Config.Cluster). A run
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
	// until stop is called, and asks the replica executing the run to publish it again
	// from its start (OnFollow); deliver(nil) says some may have been lost (the follower
	// reads the store to catch up). deliver must not block for long.
	Follow(key session.Key, invocationID string, deliver func(msg []byte)) (stop func())
	// OnFollow sets the handler of follow requests from other replicas, for runs this
	// replica may execute: it publishes the run's journal from the start, then live.
	OnFollow(fn func(key session.Key, invocationID string))
}

// relayEvent is a journal event on the wire between replicas (Event's fields, named).
// Index is the event's index in the owner's journal; -1 marks an event read from the
// store (a survivor's closing events, or a compacted journal), placed by its seq only.
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
// fromStore marks every event as placed by seq (Index -1).
func encodeRelay(evs []Event, fromStore bool) (int, []byte) {
	out := []byte{'['}
	n := 0
	for _, e := range evs {
		re := relayEvent(e)
		if fromStore {
			re.Index = -1
		}
		b, err := json.Marshal(re)
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

// relays are the publishers of runs this replica executes that other replicas follow:
// at most one per run, started by the first follow request. A run nobody follows from
// elsewhere costs nothing: its journal is not even watched (so its coarse events keep
// being deferred into the run's later writes).
type relays struct {
	mu sync.Mutex
	m  map[runKey]*relayState
}

type relayState struct {
	restart chan struct{} // a new follower: publish again from the journal's start
}

// followRequested handles a follow request from another replica for a run this replica
// may execute: the run's journal is published from its first event, so the new
// follower gets the whole run so far (a message begun before it joined included), and
// then live. Followers drop what they already have by journal index.
func (rt *Runtime) followRequested(key session.Key, invocationID string) {
	rk := runKey{key, invocationID}
	rt.mu.Lock()
	r, ok := rt.runs[rk]
	rt.mu.Unlock()
	if !ok || r.cancel == nil {
		return // not executed here (a followed run has no cancel)
	}
	// From now on items are stored as they complete, as for a local follower; the
	// follower's cursor keeps the journal for the whole retention.
	r.j.Pin()
	rt.relays.mu.Lock()
	defer rt.relays.mu.Unlock()
	if st, ok := rt.relays.m[rk]; ok {
		select {
		case st.restart <- struct{}{}:
		default: // a restart is pending already
		}
		return
	}
	if rt.relays.m == nil {
		rt.relays.m = map[runKey]*relayState{}
	}
	st := &relayState{restart: make(chan struct{}, 1)}
	rt.relays.m[rk] = st
	rt.wg.Add(1)
	go rt.relay(r, st)
}

// relay publishes the journal of r from its first event until the journal is complete,
// starting over on a restart. It runs beside the run, so a slow store delays followers,
// never the run.
func (rt *Runtime) relay(r *Run, st *relayState) {
	defer rt.wg.Done()
	j := r.j
	next := 0
	for {
		select {
		case <-st.restart:
			next = 0
		default:
		}
		evs, compacted, closed, wake := j.Read(next)
		if len(evs) > 0 {
			next = evs[len(evs)-1].Index + 1
			rt.publish(r.Key, r.InvocationID, evs, compacted)
			continue
		}
		if closed {
			rt.relays.mu.Lock()
			select {
			case <-st.restart:
				rt.relays.mu.Unlock()
				next = 0
				continue
			default:
			}
			delete(rt.relays.m, runKey{r.Key, r.InvocationID})
			rt.relays.mu.Unlock()
			return
		}
		select {
		case <-wake:
		case <-st.restart:
			next = 0
		}
	}
}

func (rt *Runtime) publish(key session.Key, invocationID string, evs []Event, fromStore bool) {
	for len(evs) > 0 {
		n, msg := encodeRelay(evs, fromStore)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := rt.cluster.Publish(ctx, key, invocationID, msg); err != nil {
			rt.log.Warn("could not relay run events to other replicas", "invocation", invocationID, "error", err)
		}
		cancel()
		evs = evs[n:]
	}
}

// ownerSilence is how long a follower waits for the owner's answer to a follow request
// (the journal from its start, or the events missing after a gap) before it asks again:
// the owner may not have registered the run yet when the request came, or missed it
// (its own connection was down). Unanswered twice, the follower also reads the store:
// an owner that cannot publish still stored its events (not its live deltas). It asks
// every ownerSilence until it has no gap or the run ends.
const ownerSilence = 3 * time.Second

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
		rt.publish(r.Key, r.InvocationID, out, true)
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
	evs, err := rt.store.FinishRun(ctx, r.Key, r.InvocationID, session.StatusInterrupted, rt.orphanEnd(ctx, r.Key, r.InvocationID, data)...)
	if errors.Is(err, session.ErrInvalid) {
		return nil, nil // ended meanwhile (by its replica or another survivor)
	}
	return evs, err
}
