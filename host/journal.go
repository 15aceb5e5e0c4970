package host

import (
	"context"
	"time"

	"github.com/agentengine/agentengine/host/internal/journal"
	"github.com/agentengine/agentengine/session"
)

// journalCompactAfter is how long a finished run's journal keeps its deltas: a client
// whose stream dropped right at the end can still replay it exactly; later ones get the
// stored events, as from the store.
const journalCompactAfter = 10 * time.Second

// ForgottenRunWeight is what a finished run let go of whole counts for in
// Config.MemoryFreed's units (dropped live events).
const ForgottenRunWeight = 50

// newJournal returns an empty run journal: host Events, of which compaction keeps the
// stored ones.
func newJournal() *journal.Log[Event] {
	return journal.New(func(e *Event) *int { return &e.Index }, func(e *Event) bool { return e.Kind == KindStored })
}

// storedEvents returns the run's stored events journaled so far, in order.
func storedEvents(j *journal.Log[Event]) []session.Event {
	n := 0
	j.Each(func(e *Event) {
		if e.Kind == KindStored && e.Stored != nil {
			n++
		}
	})
	out := make([]session.Event, 0, n)
	j.Each(func(e *Event) {
		if e.Kind == KindStored && e.Stored != nil {
			out = append(out, *e.Stored)
		}
	})
	return out
}

// Subscription is a cursor over a run's journal.
type Subscription struct {
	c *journal.Cursor[Event]
}

// Next returns the next event, waiting for it if needed. It returns io.EOF after the
// run's last event, and ctx's error if ctx ends first.
func (s *Subscription) Next(ctx context.Context) (Event, error) { return s.c.Next(ctx) }

// Ready returns the events journaled after the cursor so far, without waiting, and
// advances past them.
func (s *Subscription) Ready() []Event { return s.c.Ready() }
