package sqlite_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/sqlite"
)

// A version 1 file (before runner checkpoints) is upgraded in place and keeps its data.
func TestVersion1FileGetsCheckpoints(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sessions.sqlite")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateSession(ctx, testKey()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, testKey(), msg("before the upgrade")); err != nil {
		t.Fatal(err)
	}
	st.Close()
	db := rawDB(t, path)
	for _, q := range []string{`DROP TRIGGER docs_of_deleted_session`, `DROP TABLE docs`, `DROP TABLE checkpoint_writes`, `DROP TABLE checkpoints`,
		`UPDATE schema_version SET version = 1`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	st, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open a version 1 file: %v", err)
	}
	defer st.Close()
	evs, err := st.Events(ctx, testKey(), session.EventQuery{})
	if err != nil || len(evs) != 1 {
		t.Fatalf("events after the upgrade = %d, %v", len(evs), err)
	}
	cp := session.Checkpoint{ThreadID: "t", ID: "c1", Data: []byte("state")}
	ne := msg("after")
	ne.Checkpoints = &session.CheckpointSave{Checkpoints: []session.Checkpoint{cp}}
	if _, err := st.Append(ctx, testKey(), ne); err != nil {
		t.Fatal(err)
	}
	got, err := st.Checkpoints(ctx, testKey())
	if err != nil || !reflect.DeepEqual(got, []session.Checkpoint{cp}) {
		t.Fatalf("checkpoints after the upgrade = %+v, %v", got, err)
	}
}

// A version 3 file (events with a rowid, a unique (session, seq) index and a
// by-invocation index) moves to the WITHOUT ROWID events table with every event kept.
func TestVersion3FileGetsKeyedEvents(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sessions.sqlite")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateSession(ctx, testKey()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	db := rawDB(t, path)
	for _, q := range []string{
		`DROP TABLE events`,
		`CREATE TABLE events (
			id INTEGER PRIMARY KEY,
			session_pk INTEGER NOT NULL REFERENCES sessions (pk) ON DELETE CASCADE,
			seq INTEGER NOT NULL, invocation_id TEXT NOT NULL DEFAULT '', item_id TEXT,
			type TEXT NOT NULL, author TEXT NOT NULL DEFAULT '', data TEXT NOT NULL,
			state_delta TEXT, time INTEGER NOT NULL, UNIQUE (session_pk, seq))`,
		`CREATE INDEX events_by_item ON events (item_id) WHERE item_id IS NOT NULL`,
		`CREATE INDEX events_by_invocation ON events (session_pk, invocation_id, seq)`,
		`INSERT INTO events (session_pk, seq, invocation_id, item_id, type, author, data, time)
			SELECT pk, 1, 'inv1', 'msg_1', 'user_message', 'user', '{"text":"one"}', 1 FROM sessions`,
		`INSERT INTO events (session_pk, seq, invocation_id, item_id, type, author, data, state_delta, time)
			SELECT pk, 2, 'inv1', NULL, 'state_delta', 'bot', '{}', '{"k":1}', 2 FROM sessions`,
		`UPDATE sessions SET last_seq = 2`,
		`DROP TRIGGER docs_of_deleted_session`,
		`DROP TABLE docs`,
		`UPDATE schema_version SET version = 3`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	st, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open a version 3 file: %v", err)
	}
	defer st.Close()
	evs, err := st.Events(ctx, testKey(), session.EventQuery{})
	if err != nil || len(evs) != 2 || evs[0].ItemID != "msg_1" || string(evs[1].StateDelta) != `{"k":1}` {
		t.Fatalf("events after the upgrade = %+v, %v", evs, err)
	}
	if e, err := st.FindItem(ctx, "app", "u1", "msg_1"); err != nil || e.Seq != 1 || e.SessionID != "s1" {
		t.Fatalf("FindItem after the upgrade = %+v, %v", e, err)
	}
	more, err := st.Append(ctx, testKey(), msg("after"))
	if err != nil || len(more) != 1 || more[0].Seq != 3 {
		t.Fatalf("append after the upgrade = %+v, %v", more, err)
	}
	db = rawDB(t, path)
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("indexes on events = %d, %v; want only events_by_item", n, err)
	}
}
