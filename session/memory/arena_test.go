package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/session"
)

func TestArena(t *testing.T) {
	var a arena
	long := strings.Repeat("x", arenaMax+1)
	var kept []string
	// Enough values to fill more than one chunk: each still reads as it was given.
	for i := range 2 * arenaChunk / 10 {
		s := strings.Repeat(string(rune('a'+i%26)), 1+i%10)
		kept = append(kept, a.str(s))
	}
	for i, s := range kept {
		if want := strings.Repeat(string(rune('a'+i%26)), 1+i%10); s != want {
			t.Fatalf("value %d reads %q, want %q", i, s, want)
		}
	}
	if got := a.str(long); got != long {
		t.Error("a long string changed")
	}
	if a.str("") != "" || a.bytes(nil) != nil {
		t.Error("empty values are not kept empty")
	}
	b := a.bytes([]byte(`{"model":"m"}`))
	if string(b) != `{"model":"m"}` || cap(b) != len(b) {
		t.Errorf("bytes %q cap %d: an append could write the next value", b, cap(b))
	}
}

// A deleted session's record is reused; nothing of the old session shows through it.
func TestDeletedSessionRecordReused(t *testing.T) {
	ctx := context.Background()
	st := New()
	old := session.Key{App: "app", User: "u", ID: "old"}
	if err := turnWithItem(ctx, st, old, "run_old", "msg_old"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteSession(ctx, old); err != nil {
		t.Fatal(err)
	}
	if len(st.recs.free) != 1 {
		t.Fatalf("%d free records after a delete", len(st.recs.free))
	}
	fresh := session.Key{App: "app", User: "u", ID: "new"}
	row, err := st.CreateSession(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if row.Key != fresh || row.LastSeq != 0 || row.FirstPrompt != "" || row.ActiveInvocationID != "" {
		t.Errorf("new session row %+v", row)
	}
	if len(st.recs.free) != 0 {
		t.Error("the freed record was not reused")
	}
	if _, err := st.FindItem(ctx, "app", "u", "msg_old"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the deleted session's item: %v", err)
	}
	if _, err := st.GetRunByResponseID(ctx, "u", "resp_run_old"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the deleted session's response: %v", err)
	}
	if _, err := st.GetRun(ctx, fresh, "run_old"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the deleted session's run in the new one: %v", err)
	}
	if evs, err := st.Events(ctx, fresh, session.EventQuery{}); err != nil || len(evs) != 0 {
		t.Errorf("new session events %v, %v", evs, err)
	}
}

// A start refused after its record was taken gives the record back and creates nothing.
func TestRefusedStartCreatesNothing(t *testing.T) {
	ctx := context.Background()
	st := New()
	k := session.Key{App: "app", User: "u", ID: "s"}
	_, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: "run_1", CreateSession: true},
		session.NewEvent{Type: session.TypeContextCheckpoint, Author: "system",
			Data: session.MustJSON(session.ContextCheckpointData{FromSeq: 1, UntilSeq: 5})})
	if !errors.Is(err, session.ErrInvalid) {
		t.Fatalf("a checkpoint covering its own seq: %v", err)
	}
	if _, err := st.GetSession(ctx, k); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the refused start's session: %v", err)
	}
	if len(st.recs.free) != 1 {
		t.Errorf("%d free records after a refused start", len(st.recs.free))
	}
}

func turnWithItem(ctx context.Context, st *Store, k session.Key, inv, item string) error {
	if _, err := st.StartRun(ctx, session.Run{Key: k, InvocationID: inv, ResponseID: "resp_" + inv, CreateSession: true},
		session.NewEvent{Type: session.TypeUserMessage, Author: "user", ItemID: item,
			Data: session.MustJSON(session.UserMessageData{Text: "hello"})}); err != nil {
		return err
	}
	_, err := st.FinishRun(ctx, k, inv, session.StatusCompleted)
	return err
}

// Event reads walk the log from one event to the next, on a log short enough to be walked
// from its start and on one that indexes where its events end.
func TestEventWindowsOnBothKindsOfLog(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{smallLog - 4, 3 * smallLog} {
		st := New()
		k := session.Key{App: "app", User: "u", ID: "s"}
		if _, err := st.CreateSession(ctx, k); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			typ := session.TypeReasoning
			if i%3 == 0 {
				typ = session.TypeToolCall
			}
			data := []byte(fmt.Sprintf(`{"seq":%d}`, i+1)) // each event's own content
			if _, err := st.Append(ctx, k, session.NewEvent{Type: typ, Author: "agent", Data: data}); err != nil {
				t.Fatal(err)
			}
		}
		seqs := func(q session.EventQuery) []int64 {
			evs, err := st.Events(ctx, k, q)
			if err != nil {
				t.Fatal(err)
			}
			out := []int64{}
			for _, e := range evs {
				if want := fmt.Sprintf(`{"seq":%d}`, e.Seq); string(e.Data) != want {
					t.Errorf("%d events, event %d holds %s", n, e.Seq, e.Data)
				}
				out = append(out, e.Seq)
			}
			return out
		}
		span := func(from, to int64) []int64 {
			out := []int64{}
			for s := from; s <= to; s++ {
				out = append(out, s)
			}
			return out
		}
		last := int64(n)
		for _, tc := range []struct {
			name string
			q    session.EventQuery
			want []int64
		}{
			{"all", session.EventQuery{}, span(1, last)},
			{"after", session.EventQuery{AfterSeq: 5}, span(6, last)},
			{"between", session.EventQuery{AfterSeq: 5, BeforeSeq: last - 1}, span(6, last-2)},
			{"type, limit", session.EventQuery{AfterSeq: 2, Types: []string{session.TypeToolCall}, Limit: 3}, []int64{4, 7, 10}},
			{"tail", session.EventQuery{Limit: 2, Tail: true}, []int64{last - 1, last}},
		} {
			if got := seqs(tc.q); !slices.Equal(got, tc.want) {
				t.Errorf("%d events, %s: %v, want %v", n, tc.name, got, tc.want)
			}
		}
	}
}
