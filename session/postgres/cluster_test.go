package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/postgres"
	"github.com/agentengine/agentengine/session/postgres/internal/pgtest"
)

func startRun(t *testing.T, st session.Store, k session.Key, inv string) {
	t.Helper()
	if _, err := st.CreateSession(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	_, err := st.StartRun(t.Context(), session.Run{Key: k, InvocationID: inv}, session.NewEvent{Type: session.TypeRunStatus,
		Data: session.MustJSON(session.RunStatusData{Status: session.StatusInProgress})})
	if err != nil {
		t.Fatal(err)
	}
}

// A replica that stops renewing its lease leaves its runs to the survivors.
func TestOrphansOfADeadReplica(t *testing.T) {
	dsn := pgtest.Schema(t)
	lease := postgres.WithLeaseTTL(600 * time.Millisecond)
	a := open(t, dsn, lease, postgres.WithReplicaID("a"))
	b := open(t, dsn, lease, postgres.WithReplicaID("b"))
	defer b.Close()
	k := session.Key{App: "app", User: "u", ID: "s"}
	startRun(t, a, k, "run1")

	got := make(chan []session.Run, 10)
	b.OnOrphans(func(_ context.Context, runs []session.Run) { got <- runs })
	if runs, err := b.Orphaned(t.Context()); err != nil || len(runs) != 0 {
		t.Fatalf("while a lives, b sees orphans %v (%v)", runs, err)
	}
	if owner, _ := b.RunOwner(t.Context(), k, "run1"); owner != "a" {
		t.Fatalf("owner = %q", owner)
	}
	a.Close()
	select {
	case runs := <-got:
		if len(runs) != 1 || runs[0].InvocationID != "run1" {
			t.Fatalf("orphans %v", runs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no orphans reported after a left")
	}
}

// Relay messages reach followers on every replica in order, large ones included, and a
// cancel request reaches the owner only.
func TestRelayAndCancel(t *testing.T) {
	dsn := pgtest.Schema(t)
	a := open(t, dsn, postgres.WithReplicaID("a"))
	b := open(t, dsn, postgres.WithReplicaID("b"))
	defer a.Close()
	defer b.Close()
	k := session.Key{App: "app", User: "u", ID: "s"}
	startRun(t, a, k, "run1")

	// Published before anyone follows: not sent (nobody listens).
	if err := a.Publish(t.Context(), k, "run1", []byte(`0`)); err != nil {
		t.Fatal(err)
	}
	// The announcement of a follow reaches every replica with the run's key (the
	// owner's host then publishes the run from its start).
	requests := make(chan string, 4)
	a.OnFollow(func(k session.Key, inv string) { requests <- "a:" + k.ID + "/" + inv })
	b.OnFollow(func(k session.Key, inv string) { requests <- "b:" + k.ID + "/" + inv })
	var mu sync.Mutex
	var seen []string
	done := make(chan struct{})
	stop := b.Follow(k, "run1", func(msg []byte) {
		mu.Lock()
		defer mu.Unlock()
		if msg == nil {
			return
		}
		seen = append(seen, string(msg))
		if len(seen) == 3 {
			close(done)
		}
	})
	defer stop()
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case r := <-requests:
			got[r] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("follow announcement reached %v", got)
		}
	}
	if !got["a:s/run1"] || !got["b:s/run1"] {
		t.Fatalf("follow announcements %v", got)
	}
	big := `"` + string(make([]byte, 0)) + repeat("x", 20000) + `"`
	for _, m := range []string{`1`, big, `3`} {
		if err := a.Publish(t.Context(), k, "run1", []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("follower got %d messages", len(seen))
	}
	if seen[0] != "1" || seen[1] != big || seen[2] != "3" {
		t.Errorf("messages out of order or changed: %.20q", seen)
	}

	cancels := make(chan string, 2)
	a.OnCancel(func(_ session.Key, inv string) { cancels <- "a:" + inv })
	b.OnCancel(func(_ session.Key, inv string) { cancels <- "b:" + inv })
	if sent, err := b.RequestCancel(t.Context(), k, "run1"); err != nil || !sent {
		t.Fatalf("RequestCancel = %v, %v", sent, err)
	}
	select {
	case c := <-cancels:
		if c != "a:run1" {
			t.Errorf("cancel reached %s", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not reach the owner")
	}
	if sent, err := b.RequestCancel(t.Context(), k, "nope"); err != nil || sent {
		t.Errorf("RequestCancel of an unknown run = %v, %v", sent, err)
	}
}

func repeat(s string, n int) string {
	out := make([]byte, 0, len(s)*n)
	for range n {
		out = append(out, s...)
	}
	return string(out)
}
