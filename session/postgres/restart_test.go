package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/postgres/internal/pgtest"
)

// terminate drops every server connection of application app, as a server restart does.
func terminate(t *testing.T, app string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), pgtest.ServerDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1`, app).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("no connections of %s to drop", app)
	}
}

// Connections lost mid-session (a database restart): a write fails or succeeds whole,
// later writes go on with gap-free seqs, and followers are told to catch up.
func TestConnectionsLost(t *testing.T) {
	app := "agentengine_restart_test"
	dsn := pgtest.WithParam(pgtest.Schema(t), "application_name", app)
	st := open(t, dsn)
	defer st.Close()
	k := session.Key{App: "a", User: "u", ID: "s"}
	if _, err := st.CreateSession(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(t.Context(), k, session.NewEvent{Type: "note"}); err != nil {
		t.Fatal(err)
	}
	resync := make(chan struct{}, 1)
	stop := st.Follow(k, "inv", func(msg []byte) {
		if msg == nil {
			select {
			case resync <- struct{}{}:
			default:
			}
		}
	})
	defer stop()

	terminate(t, app)
	ok := 0
	for i := 0; i < 10; i++ {
		if _, err := st.Append(t.Context(), k, session.NewEvent{Type: "note"}); err == nil {
			ok++
		}
	}
	if ok == 0 {
		t.Fatal("no write succeeded after the connections were lost")
	}
	evs, err := st.Events(t.Context(), k, session.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("seq %d at position %d: seqs have a gap", e.Seq, i)
		}
	}
	if len(evs) != 1+ok {
		t.Errorf("%d events stored, want %d (1 + %d successful appends)", len(evs), 1+ok, ok)
	}
	select {
	case <-resync:
	case <-time.After(15 * time.Second):
		t.Fatal("the follower was not told to catch up after the listener reconnected")
	}
}
