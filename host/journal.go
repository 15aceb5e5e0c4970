package host

import (
	"context"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/agentengine/agentengine/session"
)

// journalCompactAfter is how long a finished run's journal keeps its deltas: a client
// whose stream dropped right at the end can still replay it exactly; later ones get the
// stored events, as from the store.
const journalCompactAfter = 10 * time.Second

// journal is a run's ordered event log in memory: stored events and live deltas in one
// sequence. Subscribers keep a cursor into it; appends wake them all at once by closing a
// channel, so there are no per-subscriber queues to fill up and nothing is polled.
type journal struct {
	mu     sync.Mutex
	events []Event
	closed bool
	// wake is closed by the next change; made by the first reader that waits for one
	// (most runs have none: a channel per event would be most of a short run's garbage).
	wake chan struct{}
	// watched is set once anyone subscribes: from then on the run stores each item as
	// it completes instead of deferring it to a later write.
	watched bool
	// onWatch runs (in a goroutine of its own) when the journal is first watched while it
	// holds deferred items: the run then stores them, so a follower that joins while the runner is
	// quiet (a long tool call) sees them at once.
	onWatch func()
	// While holding, events from heldFrom on are not visible to readers: the first is
	// a stored event whose write the run deferred (its content is filled in later).
	holding  bool
	heldFrom int
	// compacted: the journal keeps only its stored events (see compact). Events keep
	// their Index, so positions and indexes differ from then on.
	compacted bool
	// following counts subscriptions that have read with Next and not yet reached the
	// end: a client whose stream broke off may come back with its cursor. One that read
	// to the end will not.
	following int
	// pinned: followed from another replica, whose cursors this journal cannot see.
	pinned bool
	// onSettled runs once the last local follower reaches the end of a journal that was
	// compacted while followers were still reading it (see compactThenSettle).
	onSettled func()
}

// compact drops a finished run's live events (deltas, native events), keeping its
// stored events: they say everything the deltas did, as the run's replay from the store
// does. A finished run's deltas are most of a busy host's memory.
func (j *journal) compact() (dropped int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.compactLocked()
}

// compactThenSettle compacts the journal and runs settled when no cursor is out any more:
// at once if none is, else when the last local follower reaches the end (never, if one
// broke off or the journal is followed from another replica). Both under one lock: a
// follower that reaches the end just after the compaction still finds settled waiting.
// A follower still reading when the run was compacted would otherwise keep it in memory
// for its whole retention.
func (j *journal) compactThenSettle(settled func()) (dropped int) {
	j.mu.Lock()
	dropped = j.compactLocked()
	if j.pinned || j.following > 0 {
		j.onSettled, settled = settled, nil
	}
	j.mu.Unlock()
	if settled != nil {
		settled()
	}
	return dropped
}

// compactLocked is compact with j.mu held.
func (j *journal) compactLocked() (dropped int) {
	if !j.closed || j.holding || j.compacted {
		return 0
	}
	kept := make([]Event, 0, 8)
	for _, e := range j.events {
		if e.Kind == KindStored {
			kept = append(kept, e)
		}
	}
	dropped = len(j.events) - len(kept)
	j.events = kept[:len(kept):len(kept)]
	j.compacted = true
	return dropped
}

// ForgottenRunWeight is what a finished run let go of whole counts for in
// Config.MemoryFreed's units (dropped live events).
const ForgottenRunWeight = 50

// pos is the position of the first event whose Index is at least index; j.mu is held.
func (j *journal) pos(index int) int {
	if !j.compacted {
		return index
	}
	return sort.Search(len(j.events), func(i int) bool { return j.events[i].Index >= index })
}

func newJournal() *journal {
	// Room for a short turn's events (opening, a few deltas, items, end) without regrowing.
	return &journal{events: make([]Event, 0, 16)}
}

// add appends e (setting its Index) and wakes every waiting subscriber.
func (j *journal) add(e Event) Event {
	j.mu.Lock()
	e.Index = len(j.events)
	j.events = append(j.events, e)
	j.wakeAll()
	j.mu.Unlock()
	return e
}

// hold appends a placeholder for a deferred stored event; it and everything after it
// stay invisible until release. A watched journal defers nothing: hold reports false
// and appends nothing (deciding under j.mu, so that a follower who just arrived never
// waits for an item deferred after it came).
func (j *journal) hold(e Event) bool {
	j.mu.Lock()
	if j.watched {
		j.mu.Unlock()
		return false
	}
	e.Index = len(j.events)
	if !j.holding {
		j.holding, j.heldFrom = true, len(j.events)
	}
	j.events = append(j.events, e)
	j.mu.Unlock()
	return true
}

// release runs fill (which completes the held placeholders) under the journal's lock,
// then shows every event and wakes the subscribers.
func (j *journal) release(fill func()) {
	j.mu.Lock()
	fill()
	j.holding = false
	j.wakeAll()
	j.mu.Unlock()
}

// wakeAll wakes the readers waiting for a change; j.mu is held.
func (j *journal) wakeAll() {
	if j.wake != nil {
		close(j.wake)
		j.wake = nil
	}
}

// changed returns a channel closed at the next change; j.mu is held.
func (j *journal) changed() <-chan struct{} {
	if j.wake == nil {
		j.wake = make(chan struct{})
	}
	return j.wake
}

// visible is how many events readers may see; j.mu is held.
func (j *journal) visible() int {
	if j.holding {
		return j.heldFrom
	}
	return len(j.events)
}

func (j *journal) watch() {
	j.mu.Lock()
	flush := !j.watched && j.holding && j.onWatch != nil
	j.watched = true
	f := j.onWatch
	j.mu.Unlock()
	if flush {
		go f()
	}
}

// setOnWatch sets the function watch runs when the journal is first watched.
func (j *journal) setOnWatch(f func()) {
	j.mu.Lock()
	j.onWatch = f
	j.mu.Unlock()
}

// pin marks the journal followed from another replica (and watched).
func (j *journal) pin() {
	j.mu.Lock()
	j.pinned = true
	j.mu.Unlock()
	j.watch()
}

// unwatched reports whether nobody has subscribed to the journal, here or from another
// replica (pin watches it too).
func (j *journal) unwatched() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return !j.watched
}

// close marks the journal complete: subscribers that reach its end get io.EOF.
func (j *journal) close() {
	j.mu.Lock()
	if !j.closed {
		j.closed = true
		j.wakeAll()
	}
	if !j.holding {
		j.onWatch = nil // nothing left to release; it refers to the run's whole state
	}
	j.mu.Unlock()
}

// stored returns the run's stored events seen so far, in order.
func (j *journal) stored() []session.Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	evs := j.events[:j.visible()]
	n := 0
	for _, e := range evs {
		if e.Kind == KindStored && e.Stored != nil {
			n++
		}
	}
	out := make([]session.Event, 0, n)
	for _, e := range evs {
		if e.Kind == KindStored && e.Stored != nil {
			out = append(out, *e.Stored)
		}
	}
	return out
}

func (j *journal) snapshot() []Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Event(nil), j.events[:j.visible()]...)
}

// Subscription is a cursor over a run's journal.
type Subscription struct {
	j    *journal
	next int // Index of the next event wanted
	// following: counted in j.following (from its first Next until it reaches the end).
	following, finished bool
}

// Next returns the next event, waiting for it if needed. It returns io.EOF after the
// run's last event, and ctx's error if ctx ends first.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		s.j.mu.Lock()
		if !s.following && !s.finished {
			s.following = true
			s.j.following++
		}
		if p := s.j.pos(s.next); p < s.j.visible() {
			e := s.j.events[p]
			s.j.mu.Unlock()
			s.next = e.Index + 1
			return e, nil
		}
		closed, wake := s.j.closed && !s.j.holding, s.j.changed()
		var settled func()
		if closed && s.following {
			s.following, s.finished = false, true
			s.j.following--
			if s.j.following == 0 && !s.j.pinned {
				settled, s.j.onSettled = s.j.onSettled, nil
			}
		}
		s.j.mu.Unlock()
		if settled != nil {
			settled()
		}
		if closed {
			return Event{}, io.EOF
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// Ready returns the events journaled after the cursor so far, without waiting, and
// advances past them.
func (s *Subscription) Ready() []Event {
	s.j.mu.Lock()
	defer s.j.mu.Unlock()
	n, p := s.j.visible(), s.j.pos(s.next)
	if p >= n {
		return nil
	}
	out := append([]Event(nil), s.j.events[p:n]...)
	s.next = out[len(out)-1].Index + 1
	return out
}
