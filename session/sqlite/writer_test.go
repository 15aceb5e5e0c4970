package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentengine/agentengine/internal/testutil"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

func openTest(t *testing.T) *Store {
	t.Helper()
	st, err := Open(t.Context(), filepath.Join(t.TempDir(), "sessions.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// hold occupies the writer until the returned release is called, so that requests
// made meanwhile queue up and then run as one batch.
func hold(t *testing.T, st *Store) (release func()) {
	t.Helper()
	running, done := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- st.write(context.Background(), 0, func(*wtx, time.Time) error {
			close(running)
			<-done
			return nil
		})
	}()
	<-running
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(done)
			if err := <-errc; err != nil {
				t.Errorf("holding op: %v", err)
			}
		})
	}
	t.Cleanup(release)
	return release
}

// waitQueued waits until n requests are queued behind the writer.
func waitQueued(t *testing.T, st *Store, n int) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, func() error {
		st.wr.mu.Lock()
		q := len(st.wr.queue)
		st.wr.mu.Unlock()
		if q < n {
			return fmt.Errorf("%d requests queued, want %d", q, n)
		}
		return nil
	})
}

func userMsg(text string) session.NewEvent {
	return session.NewEvent{Type: session.TypeUserMessage, Data: session.MustJSON(session.UserMessageData{Text: text})}
}

func runStatus(status string) session.NewEvent {
	return session.NewEvent{Type: session.TypeRunStatus, Data: session.MustJSON(session.RunStatusData{Status: status})}
}

// batch runs calls concurrently while the writer is held, so that they share one
// transaction, in the order given (each is queued before the next starts).
func batch(t *testing.T, st *Store, calls ...func() error) []error {
	t.Helper()
	release := hold(t, st)
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() { errs[i] = call() })
		waitQueued(t, st, i+1)
	}
	release()
	wg.Wait()
	return errs
}

// A failing request in a batch rolls back alone, with its own error; the others commit,
// and the session rows they share end up as if the requests had run one by one.
func TestBatchIsolatesFailures(t *testing.T) {
	ctx := t.Context()
	st := openTest(t)
	a, b, c := session.Key{App: "app", User: "u", ID: "a"}, session.Key{App: "app", User: "u", ID: "b"},
		session.Key{App: "app", User: "u", ID: "c"}
	for _, k := range []session.Key{a, b} {
		if _, err := st.CreateSession(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	selfCovering := session.NewEvent{Type: session.TypeContextCheckpoint,
		Data: session.MustJSON(session.ContextCheckpointData{FromSeq: 1, UntilSeq: 5})}
	var startA []session.Event
	first := userMsg("first")
	first.StateDelta = json.RawMessage(`{"kept":"first"}`)
	errs := batch(t, st,
		func() error { _, err := st.Append(ctx, a, first); return err },
		// Changes a's cached row and stores an event, then fails: both must be undone.
		func() error {
			return st.write(ctx, 0, func(t *wtx, now time.Time) error {
				r, err := t.session(a)
				if err != nil {
					return err
				}
				undone := userMsg("undone")
				undone.StateDelta = json.RawMessage(`{"kept":"undone","undone":true,"app:undone":true}`)
				if _, err := t.appendEvents(r, mustPrepare(undone), now); err != nil {
					return err
				}
				return errors.New("boom")
			})
		},
		func() error {
			var err error
			second := userMsg("second")
			second.StateDelta = json.RawMessage(`{"later":1}`)
			startA, err = st.StartRun(ctx, session.Run{Key: a, InvocationID: "inv1", ResponseID: "resp1"},
				second, runStatus(session.StatusInProgress))
			return err
		},
		func() error {
			_, err := st.StartRun(ctx, session.Run{Key: a, InvocationID: "inv2"}, userMsg("rejected"))
			return err
		},
		// The run row is inserted before the checkpoint is found to cover itself.
		func() error {
			_, err := st.StartRun(ctx, session.Run{Key: b, InvocationID: "inv3", ResponseID: "resp3"}, selfCovering)
			return err
		},
		func() error { _, err := st.RenameSession(ctx, b, "named"); return err },
		func() error { _, err := st.Append(ctx, b, userMsg("b's prompt")); return err },
		func() error { _, err := st.CreateSession(ctx, c); return err },
		func() error { _, err := st.Append(ctx, c, userMsg("c's prompt")); return err },
		func() error { _, err := st.CreateSession(ctx, c); return err },
		func() error { return st.DeleteSession(ctx, c) },
		func() error { _, err := st.Append(ctx, c, userMsg("gone")); return err },
		func() error {
			_, err := st.FinishRun(ctx, a, "inv1", session.StatusCompleted, runStatus(session.StatusCompleted))
			return err
		},
	)
	want := []error{nil, nil, nil, session.ErrRunActive, session.ErrInvalid, nil, nil, nil, nil, session.ErrExists,
		nil, session.ErrNotFound, nil}
	for i, err := range errs {
		if i == 1 {
			continue // checked below
		}
		if want[i] == nil && err != nil || want[i] != nil && !errors.Is(err, want[i]) {
			t.Errorf("request %d: err = %v, want %v", i, err, want[i])
		}
	}
	if errs[1] == nil || errs[1].Error() != "boom" {
		t.Errorf("failing request: err = %v, want its own error", errs[1])
	}
	if got := seqsOf(startA); !slices.Equal(got, []int64{2, 3}) {
		t.Errorf("StartRun after a failed request got seqs %v, want [2 3]", got)
	}

	evs, err := st.Events(ctx, a, session.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, e := range evs {
		texts = append(texts, e.Type+":"+string(e.Data))
	}
	if !slices.Equal(seqsOf(evs), []int64{1, 2, 3, 4}) || slices.ContainsFunc(texts, func(s string) bool { return s == `user_message:{"text":"undone"}` }) {
		t.Errorf("a's events = %v", texts)
	}
	sa, _ := st.GetSession(ctx, a)
	if sa.LastSeq != 4 || sa.FirstPrompt != "first" || sa.LastPrompt != "second" || sa.Title != "first" ||
		sa.ActiveInvocationID != "inv1" || sa.ActiveRunStatus != session.StatusCompleted {
		t.Errorf("a = %+v", sa)
	}
	if r, err := st.GetRun(ctx, a, "inv1"); err != nil || r.Status != session.StatusCompleted {
		t.Errorf("run inv1 = %+v, %v", r, err)
	}
	if _, err := st.GetRun(ctx, a, "inv2"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("rejected run inv2: %v", err)
	}
	if _, err := st.GetRun(ctx, b, "inv3"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("run of the failed StartRun was stored: %v", err)
	}
	if _, err := st.GetRunByResponseID(ctx, "u", "resp3"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("response of the failed StartRun was stored: %v", err)
	}
	if state, err := st.State(ctx, a); err != nil || !reflect.DeepEqual(state.Session, map[string]any{"kept": "first", "later": 1.0}) || len(state.App) != 0 {
		t.Errorf("a's state = %+v, %v; the failed request's deltas must be gone", state, err)
	}
	sb, _ := st.GetSession(ctx, b)
	if sb.Title != "named" || sb.LastSeq != 1 || sb.FirstPrompt != "b's prompt" {
		t.Errorf("b = %+v", sb)
	}
	if _, err := st.GetSession(ctx, c); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("c after delete: %v", err)
	}
	// The store still works normally afterwards.
	if _, err := st.Append(ctx, a, userMsg("later")); err != nil {
		t.Fatal(err)
	}
}

// When a failed request cannot be rolled back alone, the whole batch is rolled back:
// the others fail too, but not with the failed request's error, and the store goes on.
func TestBatchAbort(t *testing.T) {
	ctx := t.Context()
	st := openTest(t)
	k := session.Key{App: "app", User: "u", ID: "s"}
	if _, err := st.CreateSession(ctx, k); err != nil {
		t.Fatal(err)
	}
	errs := batch(t, st,
		func() error { _, err := st.Append(ctx, k, userMsg("one")); return err },
		// Releases its own savepoint, so that rolling back to it fails.
		func() error {
			return st.write(ctx, 0, func(t *wtx, _ time.Time) error {
				if _, err := t.w.st.release.Exec(); err != nil {
					return err
				}
				return session.ErrRunActive
			})
		},
		func() error { _, err := st.Append(ctx, k, userMsg("two")); return err },
	)
	if !errors.Is(errs[1], session.ErrRunActive) {
		t.Errorf("failed request: %v, want its own error", errs[1])
	}
	for _, i := range []int{0, 2} {
		if errs[i] == nil || errors.Is(errs[i], session.ErrRunActive) {
			t.Errorf("request %d: err = %v, want the abort, not another request's error", i, errs[i])
		}
	}
	if s, _ := st.GetSession(ctx, k); s.LastSeq != 0 {
		t.Errorf("aborted batch stored events: LastSeq %d", s.LastSeq)
	}
	if evs, err := st.Append(ctx, k, userMsg("after")); err != nil || evs[0].Seq != 1 {
		t.Errorf("append after an aborted batch = %+v, %v", evs, err)
	}
}

// What a batch commits equals what the same requests commit one by one.
func TestBatchMatchesSequential(t *testing.T) {
	ctx := t.Context()
	k := session.Key{App: "app", User: "u", ID: "s"}
	delta := func(e session.NewEvent, d string) session.NewEvent { e.StateDelta = json.RawMessage(d); return e }
	calls := func(st *Store) []func() error {
		return []func() error{
			func() error { _, err := st.CreateSession(ctx, k); return err },
			func() error {
				_, err := st.Append(ctx, k, delta(userMsg("one"), `{"a":1,"app:x":1,"user:y":1}`))
				return err
			},
			func() error {
				_, err := st.Append(ctx, k, delta(userMsg("two"), `{"a":null,"b":2,"app:x":2}`))
				return err
			},
			func() error { _, err := st.RenameSession(ctx, k, "mine"); return err },
			func() error {
				_, err := st.Append(ctx, k, delta(userMsg("bad"), `{"c":3}`), session.NewEvent{Type: session.TypeContextCheckpoint, Data: session.MustJSON(session.ContextCheckpointData{FromSeq: 1, UntilSeq: 9})})
				return err
			},
			func() error {
				_, err := st.Append(ctx, k, delta(userMsg("three"), `{"d":4,"user:y":null}`))
				return err
			},
			func() error { _, err := st.RenameSession(ctx, k, " "); return err },
		}
	}
	type snapshot struct {
		sess  session.Session
		evs   []session.Event
		state session.State
	}
	snap := func(st *Store) snapshot {
		s, err := st.GetSession(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		evs, _ := st.Events(ctx, k, session.EventQuery{})
		for i := range evs {
			evs[i].Time = time.Time{}
		}
		state, _ := st.State(ctx, k)
		s.CreatedAt, s.UpdatedAt = time.Time{}, time.Time{}
		return snapshot{s, evs, state}
	}

	seq := openTest(t)
	var seqErrs []error
	for _, call := range calls(seq) {
		seqErrs = append(seqErrs, call())
	}
	bat := openTest(t)
	batErrs := batch(t, bat, calls(bat)...)
	for i := range seqErrs {
		if (seqErrs[i] == nil) != (batErrs[i] == nil) {
			t.Errorf("request %d: sequential err %v, batched err %v", i, seqErrs[i], batErrs[i])
		}
	}
	if a, b := snap(seq), snap(bat); !reflect.DeepEqual(a, b) {
		t.Errorf("batched result differs:\n%+v\nsequential:\n%+v", b, a)
	}
}

// A request whose context ends while it waits in the queue is never run.
func TestCanceledWhileQueued(t *testing.T) {
	st := openTest(t)
	k := session.Key{App: "app", User: "u", ID: "s"}
	if _, err := st.CreateSession(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	release := hold(t, st)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { _, err := st.Append(ctx, k, userMsg("never")); errc <- err }()
	waitQueued(t, st, 1)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("canceled queued Append: %v", err) // returned while the writer is still held
	}
	release()
	// A later write proves the writer has moved past the abandoned request.
	if _, err := st.Append(t.Context(), k, userMsg("after")); err != nil {
		t.Fatal(err)
	}
	evs, _ := st.Events(t.Context(), k, session.EventQuery{})
	if len(evs) != 1 || evs[0].Seq != 1 {
		t.Errorf("events = %+v, want only the later one", evs)
	}
}

// A context that ends after the writer took the request does not change its outcome:
// the caller learns what was stored.
func TestCanceledAfterTaken(t *testing.T) {
	st := openTest(t)
	ctx, cancel := context.WithCancel(t.Context())
	err := st.write(ctx, 0, func(t *wtx, now time.Time) error {
		cancel()
		_, err := t.w.st.insertSession.Exec("app", "u", "s", ns(now), ns(now))
		return err
	})
	if err != nil {
		t.Fatalf("write = %v, want its committed outcome", err)
	}
	if _, err := st.GetSession(t.Context(), session.Key{App: "app", User: "u", ID: "s"}); err != nil {
		t.Errorf("committed session: %v", err)
	}
}

// Close fails what is still queued and waits for the running batch.
func TestCloseWithQueuedRequests(t *testing.T) {
	st, err := Open(t.Context(), filepath.Join(t.TempDir(), "sessions.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	release := hold(t, st)
	errc := make(chan error, 1)
	go func() {
		_, err := st.CreateSession(t.Context(), session.Key{App: "a", User: "u", ID: "s"})
		errc <- err
	}()
	waitQueued(t, st, 1)
	closed := make(chan error, 1)
	go func() { closed <- st.Close() }()
	if err := <-errc; !errors.Is(err, errClosed) {
		t.Errorf("queued request at Close: %v", err)
	}
	select {
	case err := <-closed:
		t.Errorf("Close returned (%v) while a batch was running", err)
	case <-time.After(20 * time.Millisecond):
	}
	release()
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := st.CreateSession(t.Context(), session.Key{App: "a", User: "u", ID: "t"}); !errors.Is(err, errClosed) {
		t.Errorf("write after Close: %v", err)
	}
}

// A batch takes what is queued, skipping abandoned requests, up to the bounds; the
// rest stays queued in order.
func TestTake(t *testing.T) {
	w := &writer{}
	queue := func(sizes ...int) []*op {
		var ops []*op
		for _, n := range sizes {
			ops = append(ops, &op{size: n})
		}
		w.queue = append(w.queue, ops...)
		return ops
	}
	ops := queue(make([]int, maxBatchOps+10)...)
	ops[3].state.Store(opAbandoned)
	if !w.take() || len(w.batch) != maxBatchOps || w.batch[3] != ops[4] {
		t.Fatalf("took %d ops", len(w.batch))
	}
	if len(w.queue) != 9 || w.queue[0] != ops[maxBatchOps+1] {
		t.Fatalf("left %d queued", len(w.queue))
	}
	for _, o := range w.batch {
		if o.state.Load() != opTaken {
			t.Fatal("a batched op is not marked taken")
		}
	}
	w.take()
	w.queue = nil
	big := queue(maxBatchBytes+1, 1)
	if !w.take() || len(w.batch) != 1 || w.batch[0] != big[0] {
		t.Fatalf("an op over the byte budget must still run alone: took %d", len(w.batch))
	}
	half := queue(maxBatchBytes/2, maxBatchBytes/2-1, 1) // with big[1], exactly the budget
	if !w.take() || len(w.batch) != 3 || w.batch[0] != big[1] || w.batch[1] != half[0] {
		t.Fatalf("took %d ops, want 3 within the byte budget", len(w.batch))
	}
	if w.take(); len(w.batch) != 1 || w.batch[0] != half[2] {
		t.Fatalf("took %d ops, want the one left", len(w.batch))
	}
	if w.take() {
		t.Fatal("took from an empty queue")
	}
}

// The writer's cached session rows never hide what another Store (or process) on the
// same file committed: seqs continue where it left them, and its rename survives.
func TestCacheSeesOtherStores(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sessions.sqlite")
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	k := session.Key{App: "app", User: "u", ID: "s"}
	if _, err := a.CreateSession(ctx, k); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		for _, st := range []*Store{a, b} {
			evs, err := st.Append(ctx, k, userMsg(fmt.Sprint("prompt ", i)))
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(len(evs)) + int64(2*i); st == b {
				if evs[0].Seq != want+1 {
					t.Errorf("b's append %d got seq %d, want %d", i, evs[0].Seq, want+1)
				}
			} else if evs[0].Seq != want {
				t.Errorf("a's append %d got seq %d, want %d", i, evs[0].Seq, want)
			}
		}
	}
	if _, err := b.RenameSession(ctx, k, "by b"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.StartRun(ctx, session.Run{Key: k, InvocationID: "inv"}, userMsg("last")); err != nil {
		t.Fatal(err)
	}
	if s, _ := b.GetSession(ctx, k); s.Title != "by b" || s.LastSeq != 7 || s.LastPrompt != "last" {
		t.Errorf("after a's StartRun: %+v", s)
	}
	if _, err := b.FinishRun(ctx, k, "inv", session.StatusCompleted, runStatus(session.StatusCompleted)); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteSession(ctx, k); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(ctx, k, userMsg("after delete")); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("append to a session another Store deleted: %v", err)
	}
	if _, err := b.CreateSession(ctx, k); err != nil {
		t.Fatal(err)
	}
	if evs, err := a.Append(ctx, k, userMsg("fresh")); err != nil || evs[0].Seq != 1 {
		t.Errorf("append to the recreated session = %+v, %v", evs, err)
	}
	s, err := a.GetSession(ctx, k)
	if err != nil || s.LastSeq != 1 || s.Title != "fresh" {
		t.Errorf("session = %+v, %v", s, err)
	}
}

// Mixed concurrent writes on a few shared sessions (so batches mix requests, failures
// and sessions): every session row must agree with its event log, and the session
// state with the deltas stored on its events.
func TestConcurrentConsistency(t *testing.T) {
	ctx := t.Context()
	st := openTest(t)
	keys := []session.Key{{App: "app", User: "u", ID: "a"}, {App: "app", User: "u", ID: "b"}, {App: "app", User: "u", ID: "c"}}
	for _, k := range keys {
		if _, err := st.CreateSession(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 60 {
				k := keys[(g+i)%len(keys)]
				inv := fmt.Sprint("inv-", g, "-", i)
				var err error
				switch i % 5 {
				case 0:
					_, err = st.StartRun(ctx, session.Run{Key: k, InvocationID: inv}, userMsg(inv), runStatus(session.StatusInProgress))
					if errors.Is(err, session.ErrRunActive) {
						err = nil
					}
				case 1:
					e := userMsg(inv)
					e.StateDelta = json.RawMessage(fmt.Sprintf(`{"last":%q,"n%d":%d,"temp:x":1}`, inv, g, i))
					_, err = st.Append(ctx, k, e)
				case 2:
					_, err = st.RenameSession(ctx, k, inv)
				case 3:
					var runs []session.Run
					if runs, err = st.ActiveRuns(ctx); err == nil {
						for _, r := range runs {
							if r.Key == k {
								_, err = st.FinishRun(ctx, k, r.InvocationID, session.StatusCompleted, runStatus(session.StatusCompleted))
								if errors.Is(err, session.ErrInvalid) {
									err = nil // finished meanwhile by another goroutine
								}
							}
						}
					}
				case 4:
					e := session.NewEvent{Type: session.TypeStateDelta, StateDelta: json.RawMessage(fmt.Sprintf(`{"n%d":null}`, g))}
					_, err = st.Append(ctx, k, e)
				}
				if err != nil {
					t.Errorf("goroutine %d step %d: %v", g, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, k := range keys {
		s, err := st.GetSession(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := st.Events(ctx, k, session.EventQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(seqsOf(evs), span(1, s.LastSeq)) {
			t.Errorf("%s: LastSeq %d, event seqs %v", k.ID, s.LastSeq, seqsOf(evs))
		}
		want := map[string]any{}
		var lastPrompt, lastStatus, lastInv string
		for _, e := range evs {
			if len(e.StateDelta) > 0 {
				var d map[string]any
				if err := json.Unmarshal(e.StateDelta, &d); err != nil {
					t.Fatalf("%s: state delta of seq %d: %v", k.ID, e.Seq, err)
				}
				want = session.ApplyDelta(want, d)
			}
			switch e.Type {
			case session.TypeUserMessage:
				m, err := session.DataOf[session.UserMessageData](e)
				if err != nil {
					t.Fatal(err)
				}
				lastPrompt = m.Text
			case session.TypeRunStatus:
				r, err := session.DataOf[session.RunStatusData](e)
				if err != nil {
					t.Fatal(err)
				}
				lastStatus, lastInv = r.Status, e.InvocationID
			}
		}
		if s.LastPrompt != lastPrompt || s.ActiveRunStatus != lastStatus || s.ActiveInvocationID != lastInv {
			t.Errorf("%s: summary %+v; events say prompt %q, run %q %q", k.ID, s, lastPrompt, lastInv, lastStatus)
		}
		state, err := st.State(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(state.Session, want) {
			t.Errorf("%s: session state %v, deltas give %v", k.ID, state.Session, want)
		}
	}
}

func span(from, to int64) []int64 {
	out := []int64{}
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func mustPrepare(evs ...session.NewEvent) []core.Pending {
	ps, err := core.Prepare(evs, "")
	if err != nil {
		panic(err)
	}
	return ps
}

func seqsOf(evs []session.Event) []int64 {
	out := []int64{}
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

// A run's start that creates its session inserts the row with the start's summary
// (createStarted): the same row as a session created empty, then summarized.
func TestStartedSessionRowIsTheSummarizedRow(t *testing.T) {
	st := openTest(t)
	ctx := t.Context()
	created := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	start := func(key session.Key, create bool) (session.Session, []session.Event) {
		t.Helper()
		evs, err := st.StartRun(ctx, session.Run{Key: key, InvocationID: "inv", CreateSession: create, CreatedAt: created},
			userMsg("  a first\nprompt  "), runStatus(session.StatusInProgress))
		if err != nil {
			t.Fatal(err)
		}
		s, err := st.GetSession(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return s, evs
	}
	empty := session.Key{App: "app", User: "u", ID: "empty"}
	if _, err := st.CreateSession(ctx, empty); err != nil {
		t.Fatal(err)
	}
	want, _ := start(empty, false)
	got, evs := start(session.Key{App: "app", User: "u", ID: "started"}, true)
	if !got.CreatedAt.Equal(created) || !got.UpdatedAt.Equal(evs[1].Time) {
		t.Errorf("created %v, updated %v; want %v and %v", got.CreatedAt, got.UpdatedAt, created, evs[1].Time)
	}
	got.Key, got.CreatedAt, got.UpdatedAt = want.Key, want.CreatedAt, want.UpdatedAt
	if !reflect.DeepEqual(got, want) {
		t.Errorf("started session %+v, want %+v", got, want)
	}
}
