package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentengine/agentengine/internal/testutil"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/postgres"
	"github.com/agentengine/agentengine/session/postgres/internal/pgtest"
)

func userMessage(text string) session.NewEvent {
	return session.NewEvent{Type: session.TypeUserMessage, Author: "user", Data: session.MustJSON(session.UserMessageData{Text: text})}
}

func runStatusEvent(status string) session.NewEvent {
	return session.NewEvent{Type: session.TypeRunStatus, Author: "agent", Data: session.MustJSON(session.RunStatusData{Status: status})}
}

// rawConn reads the database as another client would, around the store.
func rawConn(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// writtenIn returns the transaction ids that wrote the session's row, its runs and its
// events (empty when the session is not in the database).
func writtenIn(t *testing.T, c *pgx.Conn, id string) []string {
	t.Helper()
	return textRows(t, c, `SELECT xmin::text FROM sessions WHERE id = $1
		UNION SELECT r.xmin::text FROM runs r JOIN sessions s ON s.pk = r.session_pk WHERE s.id = $1
		UNION SELECT e.xmin::text FROM events e JOIN sessions s ON s.pk = e.session_pk WHERE s.id = $1`, id)
}

// textRows runs a query of one text column and returns its rows.
func textRows(t *testing.T, c *pgx.Conn, sql string, args ...any) []string {
	t.Helper()
	rows, err := c.Query(t.Context(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func startUnobserved(t *testing.T, st *postgres.Store, key session.Key) ([]session.Event, session.State) {
	t.Helper()
	evs, state, err := st.StartRunWithState(t.Context(), session.Run{Key: key, InvocationID: "inv", Status: session.StatusInProgress,
		CreateSession: true, Unobserved: true}, userMessage("hello"), runStatusEvent(session.StatusInProgress))
	if err != nil {
		t.Fatal(err)
	}
	return evs, state
}

func sameEvents(a, b []session.Event) bool {
	return slices.EqualFunc(a, b, func(x, y session.Event) bool {
		return x.Seq == y.Seq && x.Type == y.Type && x.Time.Equal(y.Time) && string(x.Data) == string(y.Data)
	})
}

// An unobserved run's start is written with its end, in one transaction, as answered;
// an observed one's in two.
func TestUnobservedStartIsWrittenWithItsEnd(t *testing.T) {
	dsn := pgtest.Schema(t)
	st := open(t, dsn, postgres.WithDeferWindow(time.Minute))
	raw := rawConn(t, dsn)
	ctx := t.Context()
	if _, err := st.Append(ctx, mustCreate(t, st, session.Key{App: "app", User: "u", ID: "seed"}), session.NewEvent{
		Type: session.TypeUserMessage, Data: session.MustJSON(session.UserMessageData{Text: "x"}), StateDelta: []byte(`{"app:theme":"dark"}`)}); err != nil {
		t.Fatal(err)
	}
	for _, unobserved := range []bool{false, true} {
		key := session.Key{App: "app", User: "u", ID: fmt.Sprint("s-", unobserved)}
		started, state, err := st.StartRunWithState(ctx, session.Run{Key: key, InvocationID: "inv", Status: session.StatusInProgress,
			CreateSession: true, Unobserved: unobserved}, userMessage("hello"), runStatusEvent(session.StatusInProgress))
		if err != nil {
			t.Fatal(err)
		}
		if state.App["theme"] != "dark" || len(state.Session) != 0 {
			t.Errorf("unobserved=%t: the state a run starts with: %+v", unobserved, state)
		}
		if got := writtenIn(t, raw, key.ID); unobserved != (len(got) == 0) {
			t.Errorf("unobserved=%t: written at its start in %v", unobserved, got)
		}
		ended, err := st.FinishRun(ctx, key, "inv", session.StatusCompleted, runStatusEvent(session.StatusCompleted))
		if err != nil {
			t.Fatal(err)
		}
		want := 2
		if unobserved {
			want = 1
		}
		if got := writtenIn(t, raw, key.ID); len(got) != want {
			t.Errorf("unobserved=%t: the turn was written by transactions %v, want %d", unobserved, got, want)
		}
		stored, err := st.Events(ctx, key, session.EventQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if !sameEvents(stored, append(started, ended...)) {
			t.Errorf("unobserved=%t: stored %+v, answered %+v then %+v", unobserved, stored, started, ended)
		}
		run, err := st.GetRun(ctx, key, "inv")
		if err != nil || run.Status != session.StatusCompleted {
			t.Errorf("unobserved=%t: run %+v, %v", unobserved, run, err)
		}
	}
}

func mustCreate(t *testing.T, st *postgres.Store, key session.Key) session.Key {
	t.Helper()
	if _, err := st.CreateSession(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	return key
}

// Any other use of the session writes a kept start first.
func TestUnobservedStartIsSeenByEveryUse(t *testing.T) {
	key := session.Key{App: "app", User: "u", ID: "s"}
	for name, use := range map[string]func(st *postgres.Store) error{
		"GetSession": func(st *postgres.Store) error { _, err := st.GetSession(context.Background(), key); return err },
		"State":      func(st *postgres.Store) error { _, err := st.State(context.Background(), key); return err },
		"GetRun":     func(st *postgres.Store) error { _, err := st.GetRun(context.Background(), key, "inv"); return err },
		"Append": func(st *postgres.Store) error {
			evs, err := st.Append(context.Background(), key, userMessage("more"))
			if err == nil && evs[0].Seq != 3 {
				err = fmt.Errorf("appended at seq %d, want 3", evs[0].Seq)
			}
			return err
		},
		"ListSessions": func(st *postgres.Store) error {
			ss, _, err := st.ListSessions(context.Background(), "app", "u", session.ListQuery{Limit: 10})
			if err == nil && len(ss) != 1 {
				err = errors.New("not listed")
			}
			return err
		},
		"ActiveRuns": func(st *postgres.Store) error {
			rs, err := st.ActiveRuns(context.Background())
			if err == nil && len(rs) != 1 {
				err = errors.New("not active")
			}
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			dsn := pgtest.Schema(t)
			st := open(t, dsn)
			startUnobserved(t, st, key)
			if err := use(st); err != nil {
				t.Fatalf("after the start: %v", err)
			}
			if got := writtenIn(t, rawConn(t, dsn), key.ID); len(got) == 0 {
				t.Error("the start is still not written")
			}
		})
	}
}

// A kept start is written alone once its window has passed, and when the store closes.
func TestUnobservedStartIsWrittenByItself(t *testing.T) {
	dsn := pgtest.Schema(t)
	st := open(t, dsn)
	raw := rawConn(t, dsn)
	written := func(ids ...string) {
		t.Helper()
		testutil.Eventually(t, 10*time.Second, func() error {
			for _, id := range ids {
				if len(writtenIn(t, raw, id)) == 0 {
					return fmt.Errorf("%s not written yet", id)
				}
			}
			return nil
		})
	}
	startUnobserved(t, st, session.Key{App: "app", User: "u", ID: "waits"})
	written("waits")
	// Kept after the first was written (nothing is kept then), and several, one of them
	// ended meanwhile, the last kept half a window (50 ms) later: not due when the first
	// are.
	startUnobserved(t, st, session.Key{App: "app", User: "u", ID: "waits-again"})
	startUnobserved(t, st, session.Key{App: "app", User: "u", ID: "ends"})
	time.Sleep(25 * time.Millisecond)
	startUnobserved(t, st, session.Key{App: "app", User: "u", ID: "waits-too"})
	if _, err := st.FinishRun(t.Context(), session.Key{App: "app", User: "u", ID: "ends"}, "inv", session.StatusCompleted,
		runStatusEvent(session.StatusCompleted)); err != nil {
		t.Fatal(err)
	}
	written("waits-again", "waits-too")
	startUnobserved(t, st, session.Key{App: "app", User: "u", ID: "waits-last"})
	written("waits-last")
	startUnobserved(t, st, session.Key{App: "app", User: "u", ID: "closes"})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if len(writtenIn(t, raw, "closes")) == 0 {
		t.Error("the start was lost with the store's close")
	}
}

// Many turns at once, unobserved and not, some read between start and end.
func TestUnobservedTurnsConcurrently(t *testing.T) {
	st := open(t, pgtest.Schema(t))
	const turns = 48
	errc := make(chan error, turns)
	for i := range turns {
		go func() {
			errc <- func() error {
				ctx := context.Background()
				key := session.Key{App: "app", User: "u", ID: fmt.Sprint("s", i)}
				started, err := st.StartRun(ctx, session.Run{Key: key, InvocationID: "inv", Status: session.StatusInProgress,
					CreateSession: true, Unobserved: i%4 != 0}, userMessage("hello"), runStatusEvent(session.StatusInProgress))
				if err != nil {
					return err
				}
				if i%3 == 0 {
					if _, err := st.GetSession(ctx, key); err != nil {
						return fmt.Errorf("read between start and end: %w", err)
					}
				}
				ended, err := st.FinishRun(ctx, key, "inv", session.StatusCompleted, runStatusEvent(session.StatusCompleted))
				if err != nil {
					return err
				}
				stored, err := st.Events(ctx, key, session.EventQuery{})
				if err != nil {
					return err
				}
				if !sameEvents(stored, append(started, ended...)) {
					return fmt.Errorf("session %s: stored %+v, answered %+v", key.ID, stored, append(started, ended...))
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

// An unobserved turn stores the rows an observed one does, whether its end is folded
// into its kept start (it changes no state) or queued after it (it does): the same
// columns, and its times in the same order (the run's start, the opening events, the
// run's end, the closing events and the session's update).
func TestUnobservedTurnStoresWhatAnObservedOneDoes(t *testing.T) {
	dsn := pgtest.Schema(t)
	st := open(t, dsn)
	raw := rawConn(t, dsn)
	ctx := t.Context()
	turn := func(id string, unobserved bool, closingDelta []byte) []string {
		t.Helper()
		key := session.Key{App: "app", User: "u", ID: id}
		user := userMessage("hello there")
		user.ItemID = "msg_u"
		if _, _, err := st.StartRunWithState(ctx, session.Run{Key: key, InvocationID: "inv", ResponseID: "resp_" + id,
			CreateSession: true, Unobserved: unobserved, Meta: []byte(`{"model":"echo"}`)},
			user, runStatusEvent(session.StatusInProgress)); err != nil {
			t.Fatal(err)
		}
		answer := session.NewEvent{InvocationID: "inv", ItemID: "msg_a", Type: session.TypeAssistantMessage, Author: "agent",
			Data: session.MustJSON(session.AssistantMessageData{Text: "echo: hello there"}), StateDelta: closingDelta}
		if _, err := st.FinishRun(ctx, key, "inv", session.StatusCompleted, answer, runStatusEvent(session.StatusCompleted)); err != nil {
			t.Fatal(err)
		}
		// Every column but keys and times, then the times' order.
		return textRows(t, raw, `WITH s AS (SELECT * FROM sessions WHERE id = $1),
			t AS (SELECT 'run-start' AS what, r.created_at AS at FROM runs r, s WHERE r.session_pk = s.pk
				UNION ALL SELECT 'run-end', r.updated_at FROM runs r, s WHERE r.session_pk = s.pk
				UNION ALL SELECT 'event ' || e.seq, e.time FROM events e, s WHERE e.session_pk = s.pk
				UNION ALL SELECT 'session-created', created_at FROM s
				UNION ALL SELECT 'session-updated', updated_at FROM s)
			SELECT row(title, renamed, first_prompt, last_prompt, last_seq, checkpoint_seq, active_invocation_id,
				active_run_status, state)::text FROM s
			UNION ALL (SELECT row(r.invocation_id, r.response_id = 'resp_' || $1, r.app_id, r.user_id, r.status,
				r.deleted, r.meta, r.owner)::text FROM runs r, s WHERE r.session_pk = s.pk)
			UNION ALL (SELECT row(e.seq, e.invocation_id, e.item_id, e.type, e.author, e.data, e.state_delta)::text
				FROM events e, s WHERE e.session_pk = s.pk ORDER BY e.id)
			UNION ALL (SELECT string_agg(what, ' < ' ORDER BY at, what) FROM t)`, id)
	}
	for _, delta := range [][]byte{nil, []byte(`{"topic":"greeting"}`)} {
		observed := turn(fmt.Sprint("observed-", delta != nil), false, delta)
		unobserved := turn(fmt.Sprint("unobserved-", delta != nil), true, delta)
		if !slices.Equal(observed, unobserved) {
			t.Errorf("state delta %s: an unobserved turn stored\n%s\nan observed one\n%s", delta,
				strings.Join(unobserved, "\n"), strings.Join(observed, "\n"))
		}
	}
}

// An end that fails before it is sent (a checkpoint that covers its own seq) leaves the
// run as its start left it, whether the start was kept or written.
func TestUnobservedRunsFailedEndLeavesItsStart(t *testing.T) {
	st := open(t, pgtest.Schema(t))
	ctx := t.Context()
	for _, unobserved := range []bool{false, true} {
		key := session.Key{App: "app", User: "u", ID: fmt.Sprint("s-", unobserved)}
		if _, _, err := st.StartRunWithState(ctx, session.Run{Key: key, InvocationID: "inv", CreateSession: true,
			Unobserved: unobserved}, userMessage("hello"), runStatusEvent(session.StatusInProgress)); err != nil {
			t.Fatal(err)
		}
		bad := session.NewEvent{Type: session.TypeContextCheckpoint, Author: "agent",
			Data: session.MustJSON(session.ContextCheckpointData{Summary: "s", FromSeq: 1, UntilSeq: 99})}
		if _, err := st.FinishRun(ctx, key, "inv", session.StatusCompleted, bad, runStatusEvent(session.StatusCompleted)); !errors.Is(err, session.ErrInvalid) {
			t.Fatalf("unobserved=%t: FinishRun: %v, want ErrInvalid", unobserved, err)
		}
		run, err := st.GetRun(ctx, key, "inv")
		if err != nil || run.Status != session.StatusInProgress {
			t.Errorf("unobserved=%t: run %+v, %v; want it in progress", unobserved, run, err)
		}
		if evs, err := st.Events(ctx, key, session.EventQuery{}); err != nil || len(evs) != 2 {
			t.Errorf("unobserved=%t: events %+v, %v; want the two opening ones", unobserved, evs, err)
		}
	}
}
