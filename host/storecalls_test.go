package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// callLog records the store calls a runtime makes, reads and writes, in order.
type callLog struct {
	session.Store
	mu    sync.Mutex
	calls []string
}

func (s *callLog) add(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, fmt.Sprintf(format, args...))
}

func (s *callLog) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.calls
	s.calls = nil
	return out
}

func (s *callLog) CreateSession(ctx context.Context, k session.Key) (session.Session, error) {
	s.add("CreateSession")
	return s.Store.CreateSession(ctx, k)
}

func (s *callLog) GetSession(ctx context.Context, k session.Key) (session.Session, error) {
	s.add("GetSession")
	return s.Store.GetSession(ctx, k)
}

func (s *callLog) Append(ctx context.Context, k session.Key, evs ...session.NewEvent) ([]session.Event, error) {
	s.add("Append")
	return s.Store.Append(ctx, k, evs...)
}

func (s *callLog) Events(ctx context.Context, k session.Key, q session.EventQuery) ([]session.Event, error) {
	s.add("Events")
	return s.Store.Events(ctx, k, q)
}

func (s *callLog) StartRun(ctx context.Context, r session.Run, evs ...session.NewEvent) ([]session.Event, error) {
	if session.IsTerminalStatus(r.Status) {
		s.add("StartRun(create=%t, whole %s)", r.CreateSession, r.Status)
	} else if r.Unobserved {
		s.add("StartRun(create=%t, unobserved)", r.CreateSession)
	} else {
		s.add("StartRun(create=%t)", r.CreateSession)
	}
	return s.Store.StartRun(ctx, r, evs...)
}

func (s *callLog) NewSessionState(ctx context.Context, app, user string) (session.State, error) {
	s.add("NewSessionState")
	return s.Store.NewSessionState(ctx, app, user)
}

func (s *callLog) FinishRun(ctx context.Context, k session.Key, inv, status string, evs ...session.NewEvent) ([]session.Event, error) {
	s.add("FinishRun")
	return s.Store.FinishRun(ctx, k, inv, status, evs...)
}

func (s *callLog) GetRun(ctx context.Context, k session.Key, inv string) (session.Run, error) {
	s.add("GetRun")
	return s.Store.GetRun(ctx, k, inv)
}

func (s *callLog) State(ctx context.Context, k session.Key) (session.State, error) {
	s.add("State")
	return s.Store.State(ctx, k)
}

func (s *callLog) Checkpoints(ctx context.Context, k session.Key) ([]session.Checkpoint, error) {
	s.add("Checkpoints")
	return s.Store.Checkpoints(ctx, k)
}

// A turn's store round trips are most of its cost on a database: a new conversation's
// turn creates its session inside StartRun, and a session's next turn reads only its
// row and state, since the history cache is brought up to date from the previous run's
// own events (also for compaction's check after each run).
func TestTurnStoreCalls(t *testing.T) {
	log := &callLog{Store: memory.New()}
	f := newFixtureWith(t, nil, log, host.CompactionPolicy{})
	first, _ := f.turn(t, host.TurnRequest{Input: text("hello")})
	f.turn(t, host.TurnRequest{SessionID: first.Key.ID, Input: text("again")})
	second := f.agent.last()
	f.turn(t, host.TurnRequest{SessionID: "named", CreateIfMissing: true, Input: text("hi")})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.rt.Close(ctx); err != nil { // waits for each run's compaction check
		t.Fatal(err)
	}
	want := []string{
		"StartRun(create=true)", "State", "FinishRun", // new conversation
		"GetSession", "StartRun(create=false)", "State", "FinishRun", // its next turn
		"GetSession", "StartRun(create=true)", "State", "FinishRun", // a client-named new session
	}
	if got := log.take(); !slices.Equal(got, want) {
		t.Errorf("store calls\n got %v\nwant %v", got, want)
	}
	// The history the second turn was given came from the cache: the first exchange.
	if h := second.Payload.History; len(h) != 2 || h[0].Content != "hello" || h[1].Content != "you said hello" {
		t.Errorf("second turn's history %+v", h)
	}
}

// A turn nobody can know of before it ends (Unannounced) is written as any other: its
// start through the store's StartRun (which gives its events their seqs), its end
// through FinishRun; the journal holds exactly what the store recorded. Its start in a
// session the runtime names for it is marked unobserved (the store may commit it with
// the end), and the state it is given is a new session's, read without the session.
func TestUnannouncedTurnStoreCalls(t *testing.T) {
	log := &callLog{Store: memory.New()}
	f := newFixtureWith(t, nil, log, host.CompactionPolicy{Disabled: true})
	for _, c := range []struct {
		name string
		req  host.TurnRequest
		want []string
	}{
		{"new conversation", host.TurnRequest{Input: text("hello")},
			[]string{"StartRun(create=true, unobserved)", "NewSessionState", "FinishRun"}},
		{"a failing run", host.TurnRequest{Input: text("fail")},
			[]string{"StartRun(create=true, unobserved)", "NewSessionState", "FinishRun"}},
		// The state budget reads the state a write changes.
		{"a state change mid-run", host.TurnRequest{Input: text("state k=v")},
			[]string{"StartRun(create=true, unobserved)", "NewSessionState", "State", "Append", "FinishRun"}},
		{"a client-named session", host.TurnRequest{SessionID: "named", CreateIfMissing: true, Input: text("hi")},
			[]string{"GetSession", "StartRun(create=true)", "State", "FinishRun"}},
		{"a state delta with the turn", host.TurnRequest{Input: text("hi"), StateDelta: []byte(`{"a":1}`)},
			[]string{"NewSessionState", "StartRun(create=true)", "State", "FinishRun"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.req.Unannounced = true
			r, evs := f.turn(t, c.req)
			if got := log.take(); !slices.Equal(got, c.want) {
				t.Errorf("store calls\n got %v\nwant %v", got, c.want)
			}
			assertJournalIsStored(t, f.store, r, evs)
			log.take() // the assertion's reads
		})
	}
	// The next turn of a session started that way reads its row and state as usual, and
	// its history from the store: the first turn of a session nobody else knows did not
	// keep it in the history cache (most such sessions get no second turn).
	r, _ := f.turn(t, host.TurnRequest{Input: text("hello"), Unannounced: true})
	log.take()
	_, evs := f.turn(t, host.TurnRequest{SessionID: r.Key.ID, Input: text("again"), Unannounced: true})
	if got, want := log.take(), []string{"GetSession", "StartRun(create=false)", "GetSession", "Events", "Events", "State", "FinishRun"}; !slices.Equal(got, want) {
		t.Errorf("next turn's store calls\n got %v\nwant %v", got, want)
	}
	if h := f.agent.last().Payload.History; len(h) != 2 || h[0].Content != "hello" {
		t.Errorf("next turn's history %+v", h)
	}
	if d := terminal(t, evs); d.Status != session.StatusCompleted {
		t.Errorf("next turn ended %+v", d)
	}
}

// assertJournalIsStored checks that a finished run's journal holds what the store
// recorded of it, seqs, times and all, and that the store's run record matches the run.
func assertJournalIsStored(t *testing.T, st session.Store, r *host.Run, evs []host.Event) {
	t.Helper()
	ctx := context.Background()
	stored, err := st.Events(ctx, r.Key, session.EventQuery{InvocationID: r.InvocationID})
	if err != nil {
		t.Fatal(err)
	}
	var journaled []session.Event
	for _, e := range evs {
		if e.Kind == host.KindStored {
			journaled = append(journaled, *e.Stored)
		}
	}
	if len(journaled) != len(stored) {
		t.Fatalf("journal has %d stored events, the store %d", len(journaled), len(stored))
	}
	for i := range stored {
		j, s := journaled[i], stored[i]
		if j.Seq != s.Seq || j.Type != s.Type || j.ItemID != s.ItemID || !j.Time.Equal(s.Time) || string(j.Data) != string(s.Data) {
			t.Errorf("event %d: journal %+v, store %+v", i, j, s)
		}
	}
	rec, err := st.GetRun(ctx, r.Key, r.InvocationID)
	if err != nil || rec.Status != r.Status() || !rec.CreatedAt.Equal(r.CreatedAt) {
		t.Errorf("run record %+v, %v; the run is %s, created %v", rec, err, r.Status(), r.CreatedAt)
	}
}

// The first turn of a session nobody else knows leaves the history cache alone, yet its
// compaction check reads nothing from the store: the history it made is bounded from
// the run's own events. A first turn whose history is over the limits (a stateless
// client's transcript) is compacted all the same.
func TestPrivateFirstTurnCompactionCheck(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct {
		name      string
		items     int
		wantCalls []string
		compacted bool
	}{
		{"a short turn", 0, []string{"StartRun(create=true, unobserved)", "NewSessionState", "FinishRun"}, false},
		{"a transcript over the limit", 8, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			log := &callLog{Store: memory.New()}
			f := newFixtureWith(t, nil, log, host.CompactionPolicy{MaxMessages: 6, KeepMessages: 2})
			in := text("hello")
			for i := range c.items {
				in.Items = append(in.Items, json.RawMessage(fmt.Sprintf(`{"role":"user","content":"item %d"}`, i)))
			}
			r, _ := f.turn(t, host.TurnRequest{Input: in, Unannounced: true})
			wait, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := f.rt.Idle(wait); err != nil { // the compaction check has run
				t.Fatal(err)
			}
			if got := log.take(); c.wantCalls != nil && !slices.Equal(got, c.wantCalls) {
				t.Errorf("store calls\n got %v\nwant %v", got, c.wantCalls)
			}
			cps, err := f.store.Events(ctx, r.Key, session.EventQuery{Types: []string{session.TypeContextCheckpoint}})
			if err != nil || (len(cps) == 1) != c.compacted || len(cps) > 1 {
				t.Errorf("checkpoints %d (%v), want compacted %v", len(cps), err, c.compacted)
			}
		})
	}
}
