package journal

import (
	"context"
	"errors"
	"io"
	"reflect"
	"testing"
)

// event is a journal entry as the runtime's: an index, and durable (stored) or live.
type event struct {
	Index   int
	durable bool
	seq     *int // a durable event's store seq, filled when its write completes
}

func newLog() *Log[event] {
	return New(func(e *event) *int { return &e.Index }, func(e *event) bool { return e.durable })
}

func indexes(evs []event) []int {
	out := []int{}
	for _, e := range evs {
		out = append(out, e.Index)
	}
	return out
}

func drain(t *testing.T, c *Cursor[event]) []event {
	t.Helper()
	var out []event
	for {
		e, err := c.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
}

// A compacted journal keeps its durable events with their indexes: a cursor taken
// before or after compaction, at any index, resumes at the next durable event.
func TestJournalCompact(t *testing.T) {
	j := newLog()
	stored := func() event { return event{durable: true} }
	for _, e := range []event{stored(), {}, {}, stored(), {}, stored()} {
		j.Add(e)
	}
	j.Close()
	early := j.Cursor(2)
	if e, err := early.Next(context.Background()); err != nil || e.Index != 2 {
		t.Fatalf("before compaction: %+v %v", e, err)
	}
	j.Compact()
	if got := indexes(j.Snapshot()); !reflect.DeepEqual(got, []int{0, 3, 5}) {
		t.Fatalf("compacted journal %v", got)
	}
	if got := indexes(drain(t, early)); !reflect.DeepEqual(got, []int{3, 5}) {
		t.Errorf("cursor from before compaction read %v", got)
	}
	for from, want := range map[int][]int{0: {0, 3, 5}, 1: {3, 5}, 4: {5}, 6: {}} {
		if got := indexes(drain(t, j.Cursor(from))); !reflect.DeepEqual(got, want) {
			t.Errorf("from %d: read %v, want %v", from, got, want)
		}
		if got := indexes(j.Cursor(from).Ready()); len(want) > 0 && !reflect.DeepEqual(got, want) {
			t.Errorf("Ready from %d: %v, want %v", from, got, want)
		}
	}
}

// A held (deferred) durable event hides itself and everything after it until released.
func TestJournalHold(t *testing.T) {
	j := newLog()
	one, two := 1, 0
	j.Add(event{durable: true, seq: &one})
	j.Hold(event{durable: true, seq: &two})
	j.Add(event{})
	s := j.Cursor(0)
	if got := indexes(s.Ready()); !reflect.DeepEqual(got, []int{0}) {
		t.Fatalf("while held: %v", got)
	}
	j.Release(func() { two = 2 })
	got := s.Ready()
	if !reflect.DeepEqual(indexes(got), []int{1, 2}) || *got[0].seq != 2 {
		t.Fatalf("after release: %+v", got)
	}
}
