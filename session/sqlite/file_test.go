package sqlite_test

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/sqlite"
)

func testKey() session.Key { return session.Key{App: "app", User: "u1", ID: "s1"} }

func msg(text string) session.NewEvent {
	return session.NewEvent{Type: session.TypeUserMessage, Data: session.MustJSON(session.UserMessageData{Text: text})}
}

// rawDB opens the file directly, to look under the Store.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	db, err := sql.Open("sqlite3", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestReopenPersists(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sessions.sqlite")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateSession(ctx, testKey()); err != nil {
		t.Fatal(err)
	}
	ev := msg("persist me")
	ev.StateDelta = []byte(`{"app:a":1,"user:u":2,"s":3}`)
	ev.ItemID = "msg_1"
	appended, err := st.StartRun(ctx, session.Run{Key: testKey(), InvocationID: "inv", ResponseID: "resp"}, ev)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := st.GetSession(ctx, testKey())
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	st, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer st.Close()
	after, err := st.GetSession(ctx, testKey())
	if err != nil || after != before {
		t.Errorf("session after reopen = %+v, %v; want %+v", after, err, before)
	}
	evs, err := st.Events(ctx, testKey(), session.EventQuery{})
	if err != nil || len(evs) != 1 || string(evs[0].Data) != string(appended[0].Data) || !evs[0].Time.Equal(appended[0].Time) {
		t.Errorf("events after reopen = %+v, %v", evs, err)
	}
	if r, err := st.GetRunByResponseID(ctx, "u1", "resp"); err != nil || r.Status != session.StatusInProgress {
		t.Errorf("run after reopen = %+v, %v", r, err)
	}
	if runs, err := st.ActiveRuns(ctx); err != nil || len(runs) != 1 {
		t.Errorf("ActiveRuns after reopen = %+v, %v", runs, err)
	}
	if state, err := st.State(ctx, testKey()); err != nil || state.App["a"] != 1.0 || state.User["u"] != 2.0 || state.Session["s"] != 3.0 {
		t.Errorf("state after reopen = %+v, %v", state, err)
	}
	if evs, err := st.Append(ctx, testKey(), msg("more")); err != nil || evs[0].Seq != 2 {
		t.Errorf("append after reopen = %+v, %v", evs, err)
	}
}

func TestFileSetup(t *testing.T) {
	ctx := t.Context()
	// Every character a path may hold must reach SQLite intact.
	dir := filepath.Join(t.TempDir(), "a b?c#d%20e", "ui")
	path := filepath.Join(dir, "sessions.sqlite")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateSession(ctx, testKey()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if entries, _ := os.ReadDir(filepath.Dir(filepath.Dir(dir))); len(entries) != 1 {
		t.Errorf("files next to the database's directory: %v", entries)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode = %v, %v; want 0700", fi.Mode().Perm(), err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	db := rawDB(t, path)
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v", mode, err)
	}
	var version, rows int
	if err := db.QueryRow(`SELECT version, (SELECT count(*) FROM schema_version) FROM schema_version`).Scan(&version, &rows); err != nil ||
		version != sqlite.SchemaVersion || rows != 1 {
		t.Errorf("schema_version = %d (%d rows), %v; want %d", version, rows, err, sqlite.SchemaVersion)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sessions WHERE id = ?`, testKey().ID).Scan(&n); err != nil || n != 1 {
		t.Errorf("session row count = %d, %v", n, err)
	}

	_, err = sqlite.Open(ctx, "")
	if !errors.Is(err, session.ErrInvalid) {
		t.Errorf("Open(\"\") = %v, want ErrInvalid", err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.sqlite")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := rawDB(t, path).Exec(`UPDATE schema_version SET version = ?`, sqlite.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	_, err = sqlite.Open(t.Context(), path)
	if err == nil || !strings.Contains(err.Error(), "newer than this build") {
		t.Errorf("Open of a newer schema = %v", err)
	}
}

func TestDeleteCascades(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sessions.sqlite")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.CreateSession(ctx, testKey()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.StartRun(ctx, session.Run{Key: testKey(), InvocationID: "inv"}, msg("x"), msg("y")); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteSession(ctx, testKey()); err != nil {
		t.Fatal(err)
	}
	var events, runs int
	if err := rawDB(t, path).QueryRow(`SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM runs)`).Scan(&events, &runs); err != nil {
		t.Fatal(err)
	}
	if events != 0 || runs != 0 {
		t.Errorf("after delete: %d events, %d runs left", events, runs)
	}
}

// Two Stores on one file (as two processes would be) share nothing in memory: only
// BEGIN IMMEDIATE and the UNIQUE(session, seq) constraint keep seqs unique.
func TestTwoStoresOneFile(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sessions.sqlite")
	var stores []*sqlite.Store
	for range 2 {
		st, err := sqlite.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		stores = append(stores, st)
	}
	if _, err := stores[0].CreateSession(ctx, testKey()); err != nil {
		t.Fatal(err)
	}
	const perStore, rounds = 4, 25
	var (
		mu  sync.Mutex
		got []int64
		wg  sync.WaitGroup
	)
	for i, st := range stores {
		for g := range perStore {
			wg.Go(func() {
				for r := range rounds {
					evs, err := st.Append(ctx, testKey(), msg(fmt.Sprint(i, g, r)), msg("second"))
					if err != nil {
						t.Errorf("store %d: %v", i, err)
						return
					}
					mu.Lock()
					got = append(got, evs[0].Seq, evs[1].Seq)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	want := int64(len(stores) * perStore * rounds * 2)
	slices.Sort(got)
	for i, seq := range got {
		if seq != int64(i)+1 {
			t.Fatalf("seqs are not 1..%d: position %d holds %d", want, i, seq)
		}
	}
	for i, st := range stores {
		s, err := st.GetSession(ctx, testKey())
		if err != nil || s.LastSeq != want {
			t.Errorf("store %d sees LastSeq %d, %v; want %d", i, s.LastSeq, err, want)
		}
	}
}
