package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/internal/testutil"
	"github.com/agentengine/agentengine/session"
)

// txnNow is the number of the writer's transaction that runs a probe write: how many
// transactions the writer has begun.
func txnNow(t *testing.T, st *Store) uint64 {
	t.Helper()
	var n uint64
	if err := st.write(t.Context(), 0, func(tx *wtx, _ time.Time) error {
		n = tx.txn
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// committedSession reads the session row straight from a read connection, which sees
// committed writes only (Store.GetSession would commit a pending start first).
func committedSession(st *Store, key session.Key) error {
	_, err := lookup(context.Background(), st.st.rSession, key)
	return err
}

func startUnobserved(t *testing.T, st *Store, key session.Key, inv string) []session.Event {
	t.Helper()
	evs, err := st.StartRun(t.Context(), session.Run{Key: key, InvocationID: inv, Status: session.StatusInProgress,
		CreateSession: true, Unobserved: true}, userMsg("hello"), runStatus(session.StatusInProgress))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func finish(t *testing.T, st *Store, key session.Key, inv string) []session.Event {
	t.Helper()
	evs, err := st.FinishRun(t.Context(), key, inv, session.StatusCompleted, runStatus(session.StatusCompleted))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// An unobserved run's start and end are one transaction; an observed one's are two.
func TestUnobservedStartCommitsWithItsEnd(t *testing.T) {
	for _, c := range []struct {
		unobserved bool
		txns       uint64
	}{{false, 2}, {true, 1}} {
		st := openTest(t)
		// However slow the machine, the end comes within the window: the window's own
		// commit is TestUnobservedStartCommitsWithinItsWindow's.
		st.wr.carry.window = time.Minute
		key := session.Key{App: "app", User: "u", ID: "s"}
		before := txnNow(t, st)
		started, err := st.StartRun(t.Context(), session.Run{Key: key, InvocationID: "inv", Status: session.StatusInProgress,
			CreateSession: true, Unobserved: c.unobserved}, userMsg("hello"), runStatus(session.StatusInProgress))
		if err != nil {
			t.Fatal(err)
		}
		ended := finish(t, st, key, "inv")
		if got := txnNow(t, st) - before - 1; got != c.txns {
			t.Errorf("unobserved=%t: the turn took %d transactions, want %d", c.unobserved, got, c.txns)
		}
		stored, err := st.Events(t.Context(), key, session.EventQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if want := append(started, ended...); !slices.EqualFunc(stored, want, sameEvent) {
			t.Errorf("unobserved=%t: stored %+v, answered %+v", c.unobserved, stored, want)
		}
	}
}

func sameEvent(a, b session.Event) bool {
	return a.Seq == b.Seq && a.Type == b.Type && a.Time.Equal(b.Time) && string(a.Data) == string(b.Data)
}

// A reader of the session, of any session list or of a run, sees an unobserved start as
// soon as StartRun has answered: the read commits it first.
func TestUnobservedStartIsSeenByReads(t *testing.T) {
	key := session.Key{App: "app", User: "u", ID: "s"}
	for name, read := range map[string]func(st *Store) error{
		"GetSession": func(st *Store) error { _, err := st.GetSession(context.Background(), key); return err },
		"State":      func(st *Store) error { _, err := st.State(context.Background(), key); return err },
		"GetRun":     func(st *Store) error { _, err := st.GetRun(context.Background(), key, "inv"); return err },
		"Events": func(st *Store) error {
			evs, err := st.Events(context.Background(), key, session.EventQuery{})
			if err == nil && len(evs) != 2 {
				err = errors.New("events missing")
			}
			return err
		},
		"ListSessions": func(st *Store) error {
			ss, _, err := st.ListSessions(context.Background(), "app", "u", session.ListQuery{Limit: 10})
			if err == nil && len(ss) != 1 {
				err = errors.New("session not listed")
			}
			return err
		},
		"ActiveRuns": func(st *Store) error {
			rs, err := st.ActiveRuns(context.Background())
			if err == nil && len(rs) != 1 {
				err = errors.New("run not active")
			}
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			st := openTest(t)
			startUnobserved(t, st, key, "inv")
			if err := read(st); err != nil {
				t.Fatalf("read after the start: %v", err)
			}
			if err := committedSession(st, key); err != nil {
				t.Errorf("the read did not commit the start: %v", err)
			}
		})
	}
}

// Without a read or an end, the start is committed by itself a moment later.
func TestUnobservedStartCommitsWithinItsWindow(t *testing.T) {
	st := openTest(t)
	key := session.Key{App: "app", User: "u", ID: "s"}
	startUnobserved(t, st, key, "inv")
	testutil.Eventually(t, 5*time.Second, func() error { return committedSession(st, key) })
	finish(t, st, key, "inv")
}

// Closing the store commits a pending start.
func TestCloseCommitsAnUnobservedStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.sqlite")
	st, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	key := session.Key{App: "app", User: "u", ID: "s"}
	startUnobserved(t, st, key, "inv")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = openTestAt(t, path)
	if _, err := st.GetRun(t.Context(), key, "inv"); err != nil {
		t.Fatalf("the start was lost with the close: %v", err)
	}
}

func openTestAt(t *testing.T, path string) *Store {
	t.Helper()
	st, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// A start that must change what other sessions read (app or user state), or that does
// not create its session, is committed before StartRun answers.
func TestStartsAnsweredOnlyOnceCommittedUnlessUnobserved(t *testing.T) {
	st := openTest(t)
	appDelta := userMsg("hi")
	appDelta.StateDelta = []byte(`{"app:k":1}`)
	for _, c := range []struct {
		name string
		run  session.Run
		ev   session.NewEvent
	}{
		{"app state", session.Run{Key: session.Key{App: "app", User: "u", ID: "a"}, CreateSession: true}, appDelta},
		{"an existing session", session.Run{Key: session.Key{App: "app", User: "u", ID: "b"}}, userMsg("hi")},
	} {
		c.run.InvocationID, c.run.Status, c.run.Unobserved = "inv", session.StatusInProgress, true
		if c.name == "an existing session" {
			if _, err := st.CreateSession(t.Context(), c.run.Key); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.StartRun(t.Context(), c.run, c.ev); err != nil {
			t.Fatal(err)
		}
		var status string
		if err := st.r.QueryRow(`SELECT status FROM runs WHERE invocation_id = 'inv' AND session_id = ?`, c.run.Key.ID).Scan(&status); err != nil {
			t.Errorf("%s: the start was answered uncommitted: %v", c.name, err)
		}
	}
}

// When the transaction holding an answered start fails to commit, the start is written
// again, as answered, by the next one.
func TestUnobservedStartSurvivesAFailedCommit(t *testing.T) {
	st := openTest(t)
	ctx := t.Context()
	if _, err := st.wconn.ExecContext(ctx, `CREATE TABLE test_parent (id INTEGER PRIMARY KEY);
		CREATE TABLE test_child (pid INTEGER REFERENCES test_parent(id) DEFERRABLE INITIALLY DEFERRED)`); err != nil {
		t.Fatal(err)
	}
	key := session.Key{App: "app", User: "u", ID: "s"}
	started := startUnobserved(t, st, key, "inv")
	// A deferred foreign key fails at COMMIT, after the write itself succeeded.
	err := st.write(ctx, 0, func(*wtx, time.Time) error {
		_, err := st.wconn.ExecContext(ctx, `INSERT INTO test_child (pid) VALUES (42)`)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "commit") {
		t.Fatalf("the write's commit: %v, want it to fail", err)
	}
	if err := committedSession(st, key); !errors.Is(err, session.ErrNotFound) && !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("after the failed commit: %v, want not found", err)
	}
	ended := finish(t, st, key, "inv")
	stored, err := st.Events(ctx, key, session.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if want := append(started, ended...); !slices.EqualFunc(stored, want, sameEvent) {
		t.Errorf("stored %+v, answered %+v", stored, want)
	}
}

// Many turns at once, unobserved and not, with reads of their sessions between start and
// end: every read sees its start, and everything answered is stored as answered.
func TestUnobservedTurnsConcurrently(t *testing.T) {
	st := openTest(t)
	const turns = 64
	errc := make(chan error, turns)
	for i := range turns {
		go func() {
			errc <- func() error {
				ctx := context.Background()
				key := session.Key{App: "app", User: "u", ID: "s" + strconv.Itoa(i)}
				started, err := st.StartRun(ctx, session.Run{Key: key, InvocationID: "inv", Status: session.StatusInProgress,
					CreateSession: true, Unobserved: i%4 != 0}, userMsg("hello"), runStatus(session.StatusInProgress))
				if err != nil {
					return err
				}
				if i%3 == 0 {
					if _, err := st.GetSession(ctx, key); err != nil {
						return fmt.Errorf("read between start and end: %w", err)
					}
				}
				ended, err := st.FinishRun(ctx, key, "inv", session.StatusCompleted, runStatus(session.StatusCompleted))
				if err != nil {
					return err
				}
				stored, err := st.Events(ctx, key, session.EventQuery{})
				if err != nil {
					return err
				}
				if want := append(started, ended...); !slices.EqualFunc(stored, want, sameEvent) {
					return fmt.Errorf("session %s: stored %+v, answered %+v", key.ID, stored, want)
				}
				return nil
			}()
		}()
	}
	for range turns {
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}
}

// A turn's end, with other turns in flight, takes the writes they queue meanwhile into
// its commit (writer.gather): two turns' ends, one transaction. A turn alone waits for
// nothing.
func TestEndGathersTurnsInFlight(t *testing.T) {
	st := openTest(t)
	a := session.Key{App: "app", User: "u", ID: "a"}
	b := session.Key{App: "app", User: "u", ID: "b"}
	before := txnNow(t, st)
	startedA := startUnobserved(t, st, a, "ia")
	startedB := startUnobserved(t, st, b, "ib")
	yields := 0
	var endedB []session.Event
	doneB := make(chan error, 1)
	// Set before the next write is queued, which the writer reads it after.
	st.wr.yield = func() {
		if yields++; yields > 1 {
			return
		}
		go func() {
			var err error
			endedB, err = st.FinishRun(context.Background(), b, "ib", session.StatusCompleted, runStatus(session.StatusCompleted))
			doneB <- err
		}()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			st.wr.mu.Lock()
			n := len(st.wr.queue)
			st.wr.mu.Unlock()
			if n > 0 {
				return
			}
		}
	}
	endedA := finish(t, st, a, "ia")
	if err := <-doneB; err != nil {
		t.Fatal(err)
	}
	if got := txnNow(t, st) - before - 1; got != 1 {
		t.Errorf("two turns took %d transactions, want 1", got)
	}
	if yields != 1 {
		t.Errorf("the writer yielded %d times before the commit, want 1", yields)
	}
	for _, c := range []struct {
		key  session.Key
		want []session.Event
	}{{a, append(startedA, endedA...)}, {b, append(startedB, endedB...)}} {
		stored, err := st.Events(t.Context(), c.key, session.EventQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(stored, c.want, sameEvent) {
			t.Errorf("%s: stored %+v, answered %+v", c.key.ID, stored, c.want)
		}
		run, err := st.GetRun(t.Context(), c.key, "i"+c.key.ID)
		if err != nil || run.Status != session.StatusCompleted {
			t.Errorf("%s: run %+v, %v", c.key.ID, run, err)
		}
	}

	// One turn alone: its end commits without yielding.
	yields = 0
	c := session.Key{App: "app", User: "u", ID: "c"}
	before = txnNow(t, st)
	startUnobserved(t, st, c, "ic")
	finish(t, st, c, "ic")
	if got := txnNow(t, st) - before - 1; got != 1 || yields != 0 {
		t.Errorf("a turn alone took %d transactions and %d yields, want 1 and 0", got, yields)
	}
}

// An op that fails in the transaction of an unobserved start rolls that transaction
// back (ops run without savepoints until one fails); the start is replayed each time,
// as answered, and never given up for it: those are not failed commits.
func TestFailingOpsKeepAnUnobservedStart(t *testing.T) {
	st := openTest(t)
	key := session.Key{App: "app", User: "u", ID: "s"}
	started := startUnobserved(t, st, key, "inv")
	for range maxReplays + 2 {
		_, err := st.FinishRun(t.Context(), key, "other", session.StatusCompleted, runStatus(session.StatusCompleted))
		if !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("finishing a run that does not exist: %v, want ErrNotFound", err)
		}
	}
	ended := finish(t, st, key, "inv")
	stored, err := st.Events(t.Context(), key, session.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if want := append(started, ended...); !slices.EqualFunc(stored, want, sameEvent) {
		t.Errorf("stored %+v, answered %+v", stored, want)
	}
}
