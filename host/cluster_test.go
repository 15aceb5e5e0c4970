package host_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/postgres"
)

// pgStores opens n stores (replicas) on one new schema of the PostgreSQL test server
// (AGENTENGINE_TEST_PG_DSN); without one the test skips, or fails when
// AGENTENGINE_TEST_PG_REQUIRED is set.
func pgStores(t *testing.T, n int) []*postgres.Store {
	t.Helper()
	dsn := os.Getenv("AGENTENGINE_TEST_PG_DSN")
	if dsn == "" {
		msg := "no PostgreSQL test server: set AGENTENGINE_TEST_PG_DSN (scripts/pg-test.sh run go test ...)"
		if os.Getenv("AGENTENGINE_TEST_PG_REQUIRED") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "host_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c, err := pgx.Connect(context.Background(), dsn); err == nil {
			_, _ = c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			c.Close(context.Background())
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	var out []*postgres.Store
	for range n {
		st, err := postgres.Open(t.Context(), u.String(), postgres.WithMaxConns(4), postgres.WithLeaseTTL(900*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, st)
	}
	return out
}

func TestReplicaFollowsAndCancelsARunOfAnother(t *testing.T) {
	st := pgStores(t, 2)
	a := newFixtureWith(t, nil, st[0], host.CompactionPolicy{})
	b := newFixtureWith(t, nil, st[1], host.CompactionPolicy{})
	t.Cleanup(func() { st[0].Close(); st[1].Close() })

	r, err := a.rt.Start(context.Background(), host.TurnRequest{App: "scripted", Input: text("block")})
	if err != nil {
		t.Fatal(err)
	}
	<-a.agent.started
	followed, err := b.rt.Open(t.Context(), r.Key, r.InvocationID)
	if err != nil {
		t.Fatal(err)
	}
	if followed.Status() != session.StatusInProgress {
		t.Fatalf("B sees status %q", followed.Status())
	}
	// A second run of the session is refused on B too.
	if _, err := b.rt.Start(context.Background(), host.TurnRequest{App: "scripted", SessionID: r.Key.ID, Input: text("hi")}); err == nil {
		t.Fatal("B started a second run on a busy session")
	}
	if err := b.rt.Cancel(t.Context(), r.Key, r.InvocationID); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	onA, err := r.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	onB, err := followed.Wait(ctx)
	if err != nil {
		t.Fatalf("B's follower did not end: %v", err)
	}
	if st := terminal(t, onA); st.Status != session.StatusCancelled {
		t.Fatalf("A: status %q", st.Status)
	}
	if st := terminal(t, onB); st.Status != session.StatusCancelled {
		t.Fatalf("B: status %q", st.Status)
	}
	stored, err := st[1].Events(t.Context(), r.Key, session.EventQuery{InvocationID: r.InvocationID})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, e := range onB {
		if e.Kind == host.KindStored {
			seqs = append(seqs, e.Stored.Seq)
		}
	}
	if len(seqs) != len(stored) {
		t.Fatalf("B journaled stored seqs %v, the store holds %d events", seqs, len(stored))
	}
	for i, e := range stored {
		if seqs[i] != e.Seq {
			t.Fatalf("B journaled stored seqs %v, the store %d at %d", seqs, e.Seq, i)
		}
	}
}

func TestSurvivorInterruptsTheRunsOfADeadReplica(t *testing.T) {
	st := pgStores(t, 2)
	a := newFixtureWith(t, nil, st[0], host.CompactionPolicy{})
	b := newFixtureWith(t, nil, st[1], host.CompactionPolicy{})
	t.Cleanup(func() { st[1].Close() })
	r, err := a.rt.Start(context.Background(), host.TurnRequest{App: "scripted", Input: text("block")})
	if err != nil {
		t.Fatal(err)
	}
	<-a.agent.started
	followed, err := b.rt.Open(t.Context(), r.Key, r.InvocationID)
	if err != nil {
		t.Fatal(err)
	}
	// A's store goes away without its runtime ending the run: as if the process died.
	st[0].Close()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	evs, err := followed.Wait(ctx)
	if err != nil {
		t.Fatalf("the survivor did not end the dead replica's run: %v", err)
	}
	d := terminal(t, evs)
	if d.Status != session.StatusInterrupted || d.Error == nil || d.Error.Code != "replica_lost" {
		t.Fatalf("terminal %+v", d)
	}
	// The session goes on at the survivor.
	r2, err := b.rt.Start(context.Background(), host.TurnRequest{App: "scripted", SessionID: r.Key.ID, Input: text("hello")})
	if err != nil {
		t.Fatal(err)
	}
	evs2, _ := r2.Wait(ctx)
	if st := terminal(t, evs2); st.Status != session.StatusCompleted {
		t.Fatalf("next turn on the survivor: %q", st.Status)
	}
}
