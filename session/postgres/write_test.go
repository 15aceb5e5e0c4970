package postgres_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/postgres"
	"github.com/agentengine/agentengine/session/postgres/internal/pgtest"
)

// A store writes a session it wrote last in one round trip from the row it remembers;
// every change made elsewhere (another replica's appends, a rename, a delete and
// re-create) must be seen, never overwritten: seqs stay gap-free and unique, a rename
// survives the next append, and a re-created session starts over.
func TestWritesSeeChangesMadeByOtherReplicas(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := open(t, dsn, postgres.WithoutCluster())
	b := open(t, dsn, postgres.WithoutCluster())
	defer a.Close()
	defer b.Close()
	ctx := t.Context()
	k := session.Key{App: "app", User: "u", ID: "s"}
	if _, err := a.CreateSession(ctx, k); err != nil {
		t.Fatal(err)
	}
	msg := func(s string) session.NewEvent {
		return session.NewEvent{Type: session.TypeUserMessage, Data: session.MustJSON(session.UserMessageData{Text: s})}
	}
	// Both replicas append at once, each remembering its own last write.
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	for i, st := range []*postgres.Store{a, b} {
		wg.Go(func() {
			for j := range 30 {
				if _, err := st.Append(ctx, k, msg(fmt.Sprintf("%d-%d", i, j))); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	evs, err := a.Events(ctx, k, session.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 60 {
		t.Fatalf("%d events, want 60", len(evs))
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}

	// A rename on b, then an append on a (which wrote the row before the rename).
	if _, err := a.Append(ctx, k, msg("before rename")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.RenameSession(ctx, k, "Named by b"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(ctx, k, msg("after rename")); err != nil {
		t.Fatal(err)
	}
	s, err := a.GetSession(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if s.Title != "Named by b" || s.LastSeq != 62 || s.LastPrompt != "after rename" {
		t.Fatalf("after a rename elsewhere: title %q, last seq %d, last prompt %q", s.Title, s.LastSeq, s.LastPrompt)
	}

	// Deleted and created again on b: a's next write is on the new, empty session.
	if err := b.DeleteSession(ctx, k); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(ctx, k, msg("gone")); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("append to a deleted session: %v", err)
	}
	if _, err := b.CreateSession(ctx, k); err != nil {
		t.Fatal(err)
	}
	out, err := a.Append(ctx, k, msg("again"))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Seq != 1 {
		t.Fatalf("first append to the re-created session: %+v", out)
	}
	s, err = b.GetSession(ctx, k)
	if err != nil || s.Title != "again" || s.LastSeq != 1 {
		t.Fatalf("re-created session: %+v, %v", s, err)
	}
}
