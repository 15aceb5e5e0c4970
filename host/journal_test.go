package host

import (
	"context"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/agentengine/agentengine/session"
)

func indexes(evs []Event) []int {
	out := []int{}
	for _, e := range evs {
		out = append(out, e.Index)
	}
	return out
}

func drain(t *testing.T, s *Subscription) []Event {
	t.Helper()
	var out []Event
	for {
		e, err := s.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
}

// A compacted journal keeps its stored events with their indexes: a cursor taken
// before or after compaction, at any index, resumes at the next stored event.
func TestJournalCompact(t *testing.T) {
	j := newJournal()
	stored := func() Event { return Event{Kind: KindStored, Stored: &session.Event{}} }
	for _, e := range []Event{stored(), {Kind: KindReasoningDelta}, {Kind: KindTextDelta}, stored(), {Kind: KindNative}, stored()} {
		j.add(e)
	}
	j.close()
	early := &Subscription{j: j, next: 2}
	if e, err := early.Next(context.Background()); err != nil || e.Index != 2 {
		t.Fatalf("before compaction: %+v %v", e, err)
	}
	j.compact()
	if got := indexes(j.snapshot()); !reflect.DeepEqual(got, []int{0, 3, 5}) {
		t.Fatalf("compacted journal %v", got)
	}
	if got := indexes(drain(t, early)); !reflect.DeepEqual(got, []int{3, 5}) {
		t.Errorf("cursor from before compaction read %v", got)
	}
	for from, want := range map[int][]int{0: {0, 3, 5}, 1: {3, 5}, 4: {5}, 6: {}} {
		if got := indexes(drain(t, &Subscription{j: j, next: from})); !reflect.DeepEqual(got, want) {
			t.Errorf("from %d: read %v, want %v", from, got, want)
		}
		if got := indexes((&Subscription{j: j, next: from}).Ready()); len(want) > 0 && !reflect.DeepEqual(got, want) {
			t.Errorf("Ready from %d: %v, want %v", from, got, want)
		}
	}
}

// A held (deferred) stored event hides itself and everything after it until released.
func TestJournalHold(t *testing.T) {
	j := newJournal()
	j.add(Event{Kind: KindStored, Stored: &session.Event{Seq: 1}})
	p := &session.Event{}
	j.hold(Event{Kind: KindStored, Stored: p})
	j.add(Event{Kind: KindTextDelta, Text: "x"})
	s := &Subscription{j: j}
	if got := indexes(s.Ready()); !reflect.DeepEqual(got, []int{0}) {
		t.Fatalf("while held: %v", got)
	}
	j.release(func() { p.Seq = 2 })
	got := s.Ready()
	if !reflect.DeepEqual(indexes(got), []int{1, 2}) || got[0].Stored.Seq != 2 {
		t.Fatalf("after release: %+v", got)
	}
}
