// Package journal is a run's event log in memory: one ordered sequence of live and
// durable events that any number of cursors read, early or late, with deferred (held)
// entries, compaction of a finished run, and the bookkeeping that tells the runtime when
// nobody can come back for it.
package journal

import (
	"context"
	"io"
	"sort"
	"sync"
)

// Log is a run's ordered event log in memory: stored events and live deltas in one
// sequence. Subscribers keep a cursor into it; appends wake them all at once by closing a
// channel, so there are no per-subscriber queues to fill up and nothing is polled.
type Log[E any] struct {
	mu sync.Mutex
	// index is the event's own index field (set by Add and Hold); durable tells the
	// events Compact keeps.
	index   func(*E) *int
	durable func(*E) bool
	// view, when set, is what readers get of an event: the log may keep an event in a
	// form lighter than the one it hands out.
	view func(E) E
	// events is the sequence until compaction, kept then holds the durable ones.
	events blocks[E]
	kept   []E
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
	// compacted: the journal keeps only its stored events (see Compact). Events keep
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

// Compact drops a finished run's live events (deltas, native events), keeping its
// durable ones: they say everything the deltas did, as the run's replay from the store
// does. A finished run's deltas are most of a busy host's memory.
func (j *Log[E]) Compact() (dropped int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.compactLocked()
}

// CompactThenSettle compacts the journal and runs settled when no cursor is out any more:
// at once if none is, else when the last local follower reaches the end (never, if one
// broke off or the journal is followed from another replica). Both under one lock: a
// follower that reaches the end just after the compaction still finds settled waiting.
// A follower still reading when the run was compacted would otherwise keep it in memory
// for its whole retention.
func (j *Log[E]) CompactThenSettle(settled func()) (dropped int) {
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

// compactLocked is Compact with j.mu held.
func (j *Log[E]) compactLocked() (dropped int) {
	if !j.closed || j.holding || j.compacted {
		return 0
	}
	n := 0
	for i := range j.events.n {
		if j.durable(j.events.at(i)) {
			n++
		}
	}
	kept := make([]E, 0, n)
	for i := range j.events.n {
		if e := j.events.at(i); j.durable(e) {
			kept = append(kept, *e)
		}
	}
	dropped = j.events.n - len(kept)
	j.events, j.kept = blocks[E]{}, kept
	j.compacted = true
	return dropped
}

// len is how many events the log holds; j.mu is held.
func (j *Log[E]) len() int {
	if j.compacted {
		return len(j.kept)
	}
	return j.events.n
}

// at is the event at position p (< j.len()); j.mu is held.
func (j *Log[E]) at(p int) *E {
	if j.compacted {
		return &j.kept[p]
	}
	return j.events.at(p)
}

// copyOf returns what readers see of the events at positions [from, to); j.mu is held.
func (j *Log[E]) copyOf(from, to int) []E {
	var out []E
	if j.compacted {
		out = append([]E(nil), j.kept[from:to]...)
	} else {
		out = make([]E, 0, to-from)
		for p := from; p < to; {
			b := j.events.b[p/blockLen][p%blockLen : min(blockLen, p%blockLen+to-p)]
			out = append(out, b...)
			p += len(b)
		}
	}
	if j.view != nil {
		for i := range out {
			out[i] = j.view(out[i])
		}
	}
	return out
}

// seen is what readers see of the event at position p; j.mu is held.
func (j *Log[E]) seen(p int) E {
	if j.view != nil {
		return j.view(*j.at(p))
	}
	return *j.at(p)
}

// blockLen is how many events a block of a log holds. A log grows a block at a time: only
// its last block is partly empty, and nothing is copied as it grows (a slice grown by
// doubling keeps up to half of itself empty, and copies itself each time; a message
// streaming for seconds journals a delta and a stored snapshot for each of its pieces).
// Sixteen is room for a short turn's events (opening, a few deltas, items, end).
const blockLen = 16

// blocks is an append-only sequence of events in fixed-size blocks.
type blocks[E any] struct {
	b []*[blockLen]E
	n int
}

func (s *blocks[E]) at(i int) *E { return &s.b[i/blockLen][i%blockLen] }

func (s *blocks[E]) add(e E) {
	if s.n == len(s.b)*blockLen {
		s.b = append(s.b, new([blockLen]E))
	}
	*s.at(s.n) = e
	s.n++
}

// pos is the position of the first event whose Index is at least index; j.mu is held.
func (j *Log[E]) pos(index int) int {
	if !j.compacted {
		return index
	}
	return sort.Search(len(j.kept), func(i int) bool { return *j.index(&j.kept[i]) >= index })
}

// New returns an empty log of events whose index field index returns; Compact keeps
// the events durable reports; readers get view of each event (nil: the event itself).
func New[E any](index func(*E) *int, durable func(*E) bool, view func(E) E) *Log[E] {
	return &Log[E]{index: index, durable: durable, view: view}
}

// Add appends e (setting its index) and wakes every waiting subscriber.
func (j *Log[E]) Add(e E) E {
	j.mu.Lock()
	*j.index(&e) = j.events.n
	j.events.add(e)
	j.wakeAll()
	j.mu.Unlock()
	return e
}

// Hold appends a placeholder for a deferred stored event; it and everything after it
// stay invisible until Release. A watched journal defers nothing: Hold reports false
// and appends nothing (deciding under j.mu, so that a follower who just arrived never
// waits for an item deferred after it came).
func (j *Log[E]) Hold(e E) bool {
	j.mu.Lock()
	if j.watched {
		j.mu.Unlock()
		return false
	}
	*j.index(&e) = j.events.n
	if !j.holding {
		j.holding, j.heldFrom = true, j.events.n
	}
	j.events.add(e)
	j.mu.Unlock()
	return true
}

// Release runs fill (which completes the held placeholders) under the journal's lock,
// then shows every event and wakes the subscribers.
func (j *Log[E]) Release(fill func()) {
	j.mu.Lock()
	fill()
	j.holding = false
	j.wakeAll()
	j.mu.Unlock()
}

// wakeAll wakes the readers waiting for a change; j.mu is held.
func (j *Log[E]) wakeAll() {
	if j.wake != nil {
		close(j.wake)
		j.wake = nil
	}
}

// changed returns a channel closed at the next change; j.mu is held.
func (j *Log[E]) changed() <-chan struct{} {
	if j.wake == nil {
		j.wake = make(chan struct{})
	}
	return j.wake
}

// visible is how many events readers may see; j.mu is held.
func (j *Log[E]) visible() int {
	if j.holding {
		return j.heldFrom
	}
	return j.len()
}

// Watch marks the journal followed: from then on Hold defers nothing, and a journal
// holding deferred events runs the SetOnWatch function (in a goroutine of its own).
func (j *Log[E]) Watch() {
	j.mu.Lock()
	flush := !j.watched && j.holding && j.onWatch != nil
	j.watched = true
	f := j.onWatch
	j.mu.Unlock()
	if flush {
		go f()
	}
}

// SetOnWatch sets the function Watch runs when the journal is first watched.
func (j *Log[E]) SetOnWatch(f func()) {
	j.mu.Lock()
	j.onWatch = f
	j.mu.Unlock()
}

// Pin marks the journal followed from another replica (and watched).
func (j *Log[E]) Pin() {
	j.mu.Lock()
	j.pinned = true
	j.mu.Unlock()
	j.Watch()
}

// Unwatched reports whether nobody has subscribed to the journal, here or from another
// replica (Pin watches it too).
func (j *Log[E]) Unwatched() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return !j.watched
}

// Close marks the journal complete: subscribers that reach its end get io.EOF.
func (j *Log[E]) Close() {
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

// Each calls f with each event readers may see, in order, as the log keeps it (not
// its view), under the log's lock (f must not call back into the log).
func (j *Log[E]) Each(f func(*E)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for p := range j.visible() {
		f(j.at(p))
	}
}

// Read returns a copy of the visible events from index next on and whether the journal
// is compacted; when there are none yet, also whether it is complete and a channel closed
// at its next change. It serves a reader that publishes the journal elsewhere (a
// replica's relay), which keeps no cursor here.
func (j *Log[E]) Read(next int) (evs []E, compacted, complete bool, changed <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if p, vis := j.pos(next), j.visible(); p < vis {
		return j.copyOf(p, vis), j.compacted, false, nil
	}
	return nil, j.compacted, j.closed && !j.holding, j.changed()
}

// Snapshot returns a copy of the events readers may see.
func (j *Log[E]) Snapshot() []E {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.copyOf(0, j.visible())
}

// Cursor reads a journal from an index on.
type Cursor[E any] struct {
	j    *Log[E]
	next int // index of the next event wanted
	// following: counted in j.following (from its first Next until it reaches the end).
	following, finished bool
}

// Cursor returns a cursor at index from (0 when negative); it does not watch the
// journal (see Watch).
func (j *Log[E]) Cursor(from int) *Cursor[E] {
	return &Cursor[E]{j: j, next: max(from, 0)}
}

// Next returns the next event, waiting for it if needed. It returns io.EOF after the
// run's last event, and ctx's error if ctx ends first.
func (s *Cursor[E]) Next(ctx context.Context) (E, error) {
	for {
		s.j.mu.Lock()
		if !s.following && !s.finished {
			s.following = true
			s.j.following++
		}
		if p := s.j.pos(s.next); p < s.j.visible() {
			e := s.j.seen(p)
			s.j.mu.Unlock()
			s.next = *s.j.index(&e) + 1
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
		var zero E
		if closed {
			return zero, io.EOF
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
}

// Ready returns the events journaled after the cursor so far, without waiting, and
// advances past them.
func (s *Cursor[E]) Ready() []E {
	s.j.mu.Lock()
	defer s.j.mu.Unlock()
	n, p := s.j.visible(), s.j.pos(s.next)
	if p >= n {
		return nil
	}
	out := s.j.copyOf(p, n)
	s.next = *s.j.index(&out[len(out)-1]) + 1
	return out
}
