package host

import (
	"context"
	"io"
	"sync"
)

// journal is a run's ordered event log in memory: stored events and live deltas in one
// sequence. Subscribers keep a cursor into it; appends wake them all at once by closing a
// channel, so there are no per-subscriber queues to fill up and nothing is polled.
type journal struct {
	mu     sync.Mutex
	events []Event
	closed bool
	wake   chan struct{}
}

func newJournal() *journal {
	return &journal{wake: make(chan struct{})}
}

// add appends e (setting its Index) and wakes every waiting subscriber.
func (j *journal) add(e Event) Event {
	j.mu.Lock()
	e.Index = len(j.events)
	j.events = append(j.events, e)
	close(j.wake)
	j.wake = make(chan struct{})
	j.mu.Unlock()
	return e
}

// close marks the journal complete: subscribers that reach its end get io.EOF.
func (j *journal) close() {
	j.mu.Lock()
	if !j.closed {
		j.closed = true
		close(j.wake)
		j.wake = make(chan struct{})
	}
	j.mu.Unlock()
}

func (j *journal) snapshot() []Event {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Event(nil), j.events...)
}

// Subscription is a cursor over a run's journal.
type Subscription struct {
	j    *journal
	next int
}

// Next returns the next event, waiting for it if needed. It returns io.EOF after the
// run's last event, and ctx's error if ctx ends first.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		s.j.mu.Lock()
		if s.next < len(s.j.events) {
			e := s.j.events[s.next]
			s.j.mu.Unlock()
			s.next++
			return e, nil
		}
		closed, wake := s.j.closed, s.j.wake
		s.j.mu.Unlock()
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
	if s.next >= len(s.j.events) {
		return nil
	}
	out := append([]Event(nil), s.j.events[s.next:]...)
	s.next = len(s.j.events)
	return out
}
