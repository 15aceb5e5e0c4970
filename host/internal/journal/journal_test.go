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
	return New(func(e *event) *int { return &e.Index }, func(e *event) bool { return e.durable }, nil)
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

// A log longer than a block reads the same through every accessor, from any index,
// whether the range it reads starts, ends or crosses a block's edge; compaction keeps
// the durable events of every block.
func TestJournalAcrossBlocks(t *testing.T) {
	const n = 3*blockLen + 5
	j := newLog()
	var want []int
	for i := range n {
		j.Add(event{durable: i%3 == 0})
		want = append(want, i)
	}
	if got := indexes(j.Snapshot()); !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot %v", got)
	}
	each := []int{}
	j.Each(func(e *event) { each = append(each, e.Index) })
	if !reflect.DeepEqual(each, want) {
		t.Fatalf("each %v", each)
	}
	for _, from := range []int{0, 1, blockLen - 1, blockLen, blockLen + 1, 2*blockLen + 3, n - 1, n} {
		if got, _, _, _ := j.Read(from); !reflect.DeepEqual(indexes(got), want[from:]) {
			t.Errorf("Read(%d) %v", from, indexes(got))
		}
		if got := j.Cursor(from).Ready(); !reflect.DeepEqual(indexes(got), want[from:]) {
			t.Errorf("Ready from %d: %v", from, indexes(got))
		}
	}
	// A hold that begins in one block hides the events of the next.
	j.Hold(event{durable: true})
	j.Add(event{})
	if got := j.Snapshot(); len(got) != n {
		t.Fatalf("while held: %d events visible", len(got))
	}
	j.Release(func() {})
	j.Close()
	c := j.Cursor(0)
	if got := drain(t, c); len(got) != n+2 || got[n+1].Index != n+1 {
		t.Fatalf("after release: %d events", len(got))
	}
	var durable []int
	for _, e := range j.Snapshot() {
		if e.durable {
			durable = append(durable, e.Index)
		}
	}
	if dropped := j.Compact(); dropped != n+2-len(durable) {
		t.Fatalf("compaction dropped %d", dropped)
	}
	if got := indexes(j.Snapshot()); !reflect.DeepEqual(got, durable) {
		t.Fatalf("compacted %v, want %v", got, durable)
	}
	if got := indexes(drain(t, j.Cursor(blockLen+1))); !reflect.DeepEqual(got, durable[slicesIndex(durable, blockLen+1):]) {
		t.Fatalf("compacted from %d: %v", blockLen+1, got)
	}
}

// slicesIndex is the position of the first element of s at least v.
func slicesIndex(s []int, v int) int {
	for i, x := range s {
		if x >= v {
			return i
		}
	}
	return len(s)
}

// Readers get the view of each event, through every accessor and after compaction; the
// log keeps the event as it was added (and Each shows it so).
func TestJournalView(t *testing.T) {
	seq := 7
	j := New(func(e *event) *int { return &e.Index }, func(e *event) bool { return e.durable },
		func(e event) event {
			if e.durable && e.seq == nil {
				e.seq = &seq
			}
			return e
		})
	j.Add(event{})
	j.Add(event{durable: true})
	j.Close()
	check := func(name string, evs []event) {
		t.Helper()
		for _, e := range evs {
			if e.durable != (e.seq != nil) {
				t.Errorf("%s: event %d not seen through the view", name, e.Index)
			}
		}
	}
	read, _, _, _ := j.Read(0)
	var each []event
	j.Each(func(e *event) { each = append(each, *e) })
	check("Snapshot", j.Snapshot())
	check("Read", read)
	if len(each) != 2 || each[1].seq != nil {
		t.Errorf("Each gave %+v, not the events as kept", each)
	}
	check("Ready", j.Cursor(0).Ready())
	check("Next", drain(t, j.Cursor(0)))
	j.Compact()
	check("Next after compaction", drain(t, j.Cursor(0)))
	j.Each(func(e *event) { e.seq = nil })
	if got := j.Snapshot(); len(got) != 1 || got[0].seq != &seq {
		t.Errorf("after compaction: %+v", got)
	}
}
