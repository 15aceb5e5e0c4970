package host_test

import (
	"context"
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
	s.add("StartRun(create=%t)", r.CreateSession)
	return s.Store.StartRun(ctx, r, evs...)
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
