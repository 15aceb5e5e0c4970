package host_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/postgres"
)

// pgStores opens n stores (replicas) on one new schema of the PostgreSQL test server
// (AGENTENGINE_TEST_PG_DSN); without one the test skips, or fails when
// AGENTENGINE_TEST_PG_REQUIRED is set.
func pgStores(t *testing.T, n int) []*postgres.Store {
	t.Helper()
	st, _ := pgStoresIn(t, n)
	return st
}

// pgStoresIn is pgStores, also returning the server's DSN and the schema's relay channel.
func pgStoresIn(t *testing.T, n int) ([]*postgres.Store, pgSchema) {
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
	return out, pgSchema{dsn: dsn, name: schema}
}

type pgSchema struct{ dsn, name string }

// dropListeners ends the database sessions that LISTEN for the schema's relay, as a
// network failure would; the replicas reconnect.
func (p pgSchema) dropListeners(t *testing.T) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), p.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	h := sha256.Sum256([]byte(p.name))
	var n int
	err = conn.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE query = 'LISTEN "' || $1 || '"'`, "agentengine_"+hex.EncodeToString(h[:6])).Scan(&n)
	if err != nil || n == 0 {
		t.Fatalf("ended %d listeners: %v", n, err)
	}
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

// pausing is an agent that streams a message in parts, pausing after each part until
// the test lets it go on: followers can join in the middle of the message.
type pausing struct {
	paused chan struct{} // signalled at each pause
	resume chan struct{} // one receive per pause
}

func (p *pausing) Info() pluginsdk.Info {
	return pluginsdk.Info{Name: "scripted", Framework: "go"}
}

func (p *pausing) Run(ctx context.Context, _ *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	if err := emit.Reasoning("thinking"); err != nil {
		return err
	}
	parts := [][]string{{"one ", "two "}, {"three "}, {"four"}}
	for i, part := range parts {
		for _, w := range part {
			if err := emit.Text(w); err != nil {
				return err
			}
		}
		if i == len(parts)-1 {
			break
		}
		p.paused <- struct{}{}
		select {
		case <-p.resume:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Followers on other replicas that join while the owner is in the middle of a message
// get the whole run: what was streamed before they joined, then the rest, with no gap
// and no duplicate, in the owner's order (so every replica numbers stream events alike).
func TestFollowersJoiningMidMessageGetTheOwnersJournal(t *testing.T) {
	st := pgStores(t, 3)
	agent := &pausing{paused: make(chan struct{}, 1), resume: make(chan struct{})}
	runner, stop := inprocess.Serve(agent)
	t.Cleanup(stop)
	a := newFixtureWith(t, runner, st[0], host.CompactionPolicy{})
	b := newFixtureWith(t, nil, st[1], host.CompactionPolicy{})
	c := newFixtureWith(t, nil, st[2], host.CompactionPolicy{})
	t.Cleanup(func() { st[0].Close(); st[1].Close(); st[2].Close() })

	r, err := a.rt.Start(context.Background(), host.TurnRequest{App: "scripted", Input: text("hi")})
	if err != nil {
		t.Fatal(err)
	}
	<-agent.paused // "one two" streamed
	onB, err := b.rt.Open(t.Context(), r.Key, r.InvocationID)
	if err != nil {
		t.Fatal(err)
	}
	agent.resume <- struct{}{}
	<-agent.paused // "three" streamed; B follows live
	onC, err := c.rt.Open(t.Context(), r.Key, r.InvocationID)
	if err != nil {
		t.Fatal(err)
	}
	agent.resume <- struct{}{}

	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	want, err := r.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := deltaText(want); got != "one two three four" {
		t.Fatalf("A streamed %q", got)
	}
	for name, followed := range map[string]*host.Run{"B": onB, "C": onC} {
		got, err := followed.Wait(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := deltaText(got); d != "one two three four" {
			t.Errorf("%s received the text deltas %q", name, d)
		}
		if a, b := journalShape(want), journalShape(got); !slices.Equal(a, b) {
			t.Errorf("%s's journal differs from the owner's:\nA %q\n%s %q", name, a, name, b)
		}
	}
}

func deltaText(evs []host.Event) string {
	var s string
	for _, e := range evs {
		if e.Kind == host.KindTextDelta {
			s += e.Text
		}
	}
	return s
}

// journalShape describes each event by what surfaces serialise: its index, kind and
// text or stored type and seq.
func journalShape(evs []host.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		if e.Kind == host.KindStored {
			out[i] = fmt.Sprintf("%d stored %s #%d", e.Index, e.Stored.Type, e.Stored.Seq)
			continue
		}
		out[i] = fmt.Sprintf("%d kind %d %s %q", e.Index, e.Kind, e.ItemID, e.Text)
	}
	return out
}

// A follower whose owner never publishes (here: a run started on the store directly, with
// no runtime behind it) reads the run's stored events, and its end, from the store.
func TestFollowerOfASilentOwnerReadsTheStore(t *testing.T) {
	st := pgStores(t, 2)
	b := newFixtureWith(t, nil, st[1], host.CompactionPolicy{})
	t.Cleanup(func() { st[0].Close(); st[1].Close() })
	ctx := t.Context()
	k := session.Key{App: "scripted", User: "user", ID: "silent"}
	if _, err := st[0].CreateSession(ctx, k); err != nil {
		t.Fatal(err)
	}
	status := func(s string) session.NewEvent {
		return session.NewEvent{Type: session.TypeRunStatus, Data: session.MustJSON(session.RunStatusData{Status: s})}
	}
	if _, err := st[0].StartRun(ctx, session.Run{Key: k, InvocationID: "run_silent"}, status(session.StatusInProgress)); err != nil {
		t.Fatal(err)
	}
	followed, err := b.rt.Open(ctx, k, "run_silent")
	if err != nil {
		t.Fatal(err)
	}
	if followed.Status() != session.StatusInProgress {
		t.Fatalf("B sees status %q", followed.Status())
	}
	if _, err := st[0].FinishRun(ctx, k, "run_silent", session.StatusCompleted, status(session.StatusCompleted)); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	evs, err := followed.Wait(wctx)
	if err != nil {
		t.Fatalf("the follower did not end: %v", err)
	}
	if d := terminal(t, evs); d.Status != session.StatusCompleted || len(evs) != 2 {
		t.Fatalf("follower journal %v, terminal %+v", journalShape(evs), d)
	}
}

// Relay messages lost while a follower's replica was reconnecting to the database are
// asked for again: the follower still ends with the owner's journal.
func TestFollowerRecoversMessagesLostWhileReconnecting(t *testing.T) {
	st, schema := pgStoresIn(t, 2)
	agent := &pausing{paused: make(chan struct{}, 1), resume: make(chan struct{})}
	runner, stop := inprocess.Serve(agent)
	t.Cleanup(stop)
	a := newFixtureWith(t, runner, st[0], host.CompactionPolicy{})
	b := newFixtureWith(t, nil, st[1], host.CompactionPolicy{})
	t.Cleanup(func() { st[0].Close(); st[1].Close() })

	r, err := a.rt.Start(context.Background(), host.TurnRequest{App: "scripted", Input: text("hi")})
	if err != nil {
		t.Fatal(err)
	}
	<-agent.paused
	onB, err := b.rt.Open(t.Context(), r.Key, r.InvocationID)
	if err != nil {
		t.Fatal(err)
	}
	// B is receiving the run before the connections drop. (The owner shows "one two" only
	// once the reasoning before them is stored, at its next event: the reasoning delta is
	// the last thing visible now.)
	sub := onB.Subscribe(0)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		e, err := sub.Next(ctx)
		cancel()
		if err != nil {
			t.Fatalf("B before the drop: %v", err)
		}
		if e.Kind == host.KindReasoningDelta {
			break
		}
	}
	schema.dropListeners(t)
	agent.resume <- struct{}{} // "three", published while B's listener is away
	<-agent.paused
	time.Sleep(1500 * time.Millisecond) // the listeners are back (500 ms) and B has asked again
	agent.resume <- struct{}{}

	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	want, err := r.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := onB.Wait(ctx)
	if err != nil {
		t.Fatalf("B: %v", err)
	}
	if w, g := journalShape(want), journalShape(got); !slices.Equal(w, g) {
		t.Errorf("B's journal differs from the owner's:\nA %q\nB %q", w, g)
	}
}
