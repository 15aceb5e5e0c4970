package host

import (
	"context"
	"encoding/json"
	"strconv"
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
	return journal.New(func(e *Event) *int { return &e.Index }, (*Event).stored, seenEvent)
}

// stored reports whether the journal keeps e as a stored event (a snapshot in its
// lighter form included): what compaction keeps and the history cache reads.
func (e *Event) stored() bool { return e.Kind == KindStored || e.Kind == kindSnapshot }

// kindSnapshot is how the journal keeps a stored assistant_stream_snapshot: its stored
// event without Data, the text in Text (a view of the message's text builder, shared by
// all the message's snapshots) and the snapshot index in Name. Readers get it back as
// the KindStored event the store returned (seenEvent): a message streaming for seconds
// stores a snapshot of all its text so far every interval, and the journal kept each as
// JSON of its own (most of a long stream's journal).
const kindSnapshot EventKind = -1

// snapshotEntry is the journal's form of the stored snapshot s of text.
func snapshotEntry(s *session.Event, text string, index int) Event {
	s.Data = nil
	return Event{Kind: kindSnapshot, Stored: s, Text: text, Name: strconv.Itoa(index)}
}

// seenEvent is what the journal's readers get of e.
func seenEvent(e Event) Event {
	if e.Kind != kindSnapshot {
		return e
	}
	n, _ := strconv.Atoi(e.Name)
	s := *e.Stored
	s.Data = snapshotData(e.Text, n)
	return Event{Index: e.Index, Kind: KindStored, Stored: &s}
}

// snapshotData is a stream snapshot's stored data.
func snapshotData(text string, index int) json.RawMessage {
	return session.MustJSON(session.AssistantStreamSnapshotData{Text: text, StreamSnapshot: true, SnapshotIndex: index})
}

// storedEvents returns the run's stored events journaled so far, in order, for the
// history cache: a stream snapshot without its data, which history never reads (making
// it again for every snapshot of every run as it ends would be garbage at the worst
// moment, thousands of streams ending together).
func storedEvents(j *journal.Log[Event]) []session.Event {
	n := 0
	j.Each(func(e *Event) {
		if e.stored() && e.Stored != nil {
			n++
		}
	})
	out := make([]session.Event, 0, n)
	j.Each(func(e *Event) {
		if e.stored() && e.Stored != nil {
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
