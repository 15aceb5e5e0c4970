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
	for _, q := range []string{`DROP TABLE checkpoint_writes`, `DROP TABLE checkpoints`, `UPDATE schema_version SET version = 1`} {
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
