package host_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/testutil"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// faultyStore is a session store whose writes fail while failing is set, as on a full
// disk; reads keep working.
type faultyStore struct {
	session.Store
	failing atomic.Bool
}

var errDiskFull = errors.New("write events: disk I/O error: database or disk is full")

func (s *faultyStore) fail() error {
	if s.failing.Load() {
		return errDiskFull
	}
	return nil
}

func (s *faultyStore) CreateSession(ctx context.Context, key session.Key) (session.Session, error) {
	if err := s.fail(); err != nil {
		return session.Session{}, err
	}
	return s.Store.CreateSession(ctx, key)
}

func (s *faultyStore) Append(ctx context.Context, key session.Key, evs ...session.NewEvent) ([]session.Event, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return s.Store.Append(ctx, key, evs...)
}

func (s *faultyStore) StartRun(ctx context.Context, run session.Run, evs ...session.NewEvent) ([]session.Event, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return s.Store.StartRun(ctx, run, evs...)
}

func (s *faultyStore) FinishRun(ctx context.Context, key session.Key, inv, status string, evs ...session.NewEvent) ([]session.Event, error) {
	if err := s.fail(); err != nil {
		return nil, err
	}
	return s.Store.FinishRun(ctx, key, inv, status, evs...)
}

// startBlocked starts a run that blocks until cancelled and waits until it runs.
func startBlocked(t *testing.T, f *fixture, sessionID string) *host.Run {
	t.Helper()
	r, err := f.rt.Start(context.Background(), host.TurnRequest{App: "scripted", SessionID: sessionID, Input: text("block")})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.agent.started:
	case <-time.After(10 * time.Second):
		t.Fatal("run did not start")
	}
	return r
}

func storedStatus(t *testing.T, st session.Store, key session.Key, inv string) string {
	t.Helper()
	rec, err := st.GetRun(context.Background(), key, inv)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Status
}

// The store fails while a run ends: the run's end is held, the session is not left busy
// (a turn while the store still fails is 503-unavailable, not run_in_progress), and once
// the store works again the next turn records the held end first and proceeds.
func TestRunEndThatCannotBeStoredDoesNotStrandTheSession(t *testing.T) {
	st := &faultyStore{Store: memory.New()}
	f := newFixtureWith(t, nil, st, host.CompactionPolicy{Disabled: true})
	r := startBlocked(t, f, "")
	st.failing.Store(true)
	if err := f.rt.Cancel(context.Background(), r.Key, r.InvocationID); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evs, err := r.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := terminal(t, evs); d.Status != session.StatusCancelled {
		t.Fatalf("terminal %+v", d)
	}
	if got := storedStatus(t, st.Store, r.Key, r.InvocationID); got != session.StatusInProgress {
		t.Fatalf("store says %s; the test needs the end unrecorded", got)
	}
	sess, err := f.rt.Session(context.Background(), r.Key)
	if err != nil || sess.ActiveRunStatus != session.StatusCancelled {
		t.Errorf("session %+v, %v: want the held end to count", sess, err)
	}
	_, err = f.rt.Start(context.Background(), host.TurnRequest{App: "scripted", SessionID: r.Key.ID, Input: text("again")})
	if !errors.Is(err, host.ErrUnavailable) {
		t.Fatalf("turn while the store fails: %v, want unavailable", err)
	}

	st.failing.Store(false)
	_, evs = f.turn(t, host.TurnRequest{SessionID: r.Key.ID, Input: text("again")})
	if d := terminal(t, evs); d.Status != session.StatusCompleted {
		t.Fatalf("turn after the store recovered: %+v", d)
	}
	if got := storedStatus(t, st.Store, r.Key, r.InvocationID); got != session.StatusCancelled {
		t.Errorf("held end recorded as %s, want cancelled", got)
	}
}

// A held end is written in the background once the store takes writes again.
func TestHeldRunEndIsRecordedWhenTheStoreRecovers(t *testing.T) {
	st := &faultyStore{Store: memory.New()}
	f := newFixtureWith(t, nil, st, host.CompactionPolicy{Disabled: true})
	r := startBlocked(t, f, "")
	st.failing.Store(true)
	if err := f.rt.Cancel(context.Background(), r.Key, r.InvocationID); err != nil {
		t.Fatal(err)
	}
	<-r.Done()
	st.failing.Store(false)
	testutil.Eventually(t, 10*time.Second, func() error {
		if storedStatus(t, st.Store, r.Key, r.InvocationID) == session.StatusInProgress {
			return errors.New("held end not recorded after the store recovered")
		}
		return nil
	})
}

// A run the store has in progress that nothing executes (its end was lost before this
// host started, say) is ended by Cancel, and the session takes turns again.
func TestCancelEndsAStuckRun(t *testing.T) {
	st := memory.New()
	f := newFixtureWith(t, nil, st, host.CompactionPolicy{Disabled: true})
	r, _ := f.turn(t, host.TurnRequest{User: "u", Input: text("hello")})
	key := r.Key
	now := time.Now().UTC()
	if _, err := st.StartRun(context.Background(), session.Run{InvocationID: "run_stuck", Key: key,
		Status: session.StatusInProgress, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := f.rt.Cancel(context.Background(), key, "run_stuck"); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if got := storedStatus(t, st, key, "run_stuck"); got != session.StatusCancelled {
		t.Errorf("stuck run is %s after cancel", got)
	}
	_, evs := f.turn(t, host.TurnRequest{User: "u", SessionID: key.ID, Input: text("again")})
	if d := terminal(t, evs); d.Status != session.StatusCompleted {
		t.Errorf("turn after cancel: %+v", d)
	}
}

// An unannounced turn starts as any other: while the store cannot record its start it is
// refused and nothing is recorded; once the store recovers the same turn runs and ends.
func TestUnannouncedRunWhileTheStoreFails(t *testing.T) {
	st := &faultyStore{Store: memory.New()}
	f := newFixtureWith(t, nil, st, host.CompactionPolicy{Disabled: true})
	st.failing.Store(true)
	if _, err := f.rt.Start(context.Background(), host.TurnRequest{App: "scripted", Input: text("hello"), Unannounced: true}); !errors.Is(err, errDiskFull) {
		t.Fatalf("start while the store fails: %v", err)
	}
	st.failing.Store(false)
	r, evs := f.turn(t, host.TurnRequest{Input: text("hello"), Unannounced: true})
	if d := terminal(t, evs); d.Status != session.StatusCompleted {
		t.Fatalf("terminal %+v", d)
	}
	if got := storedStatus(t, st.Store, r.Key, r.InvocationID); got != session.StatusCompleted {
		t.Errorf("run recorded as %s", got)
	}
}

// Cancelling an unannounced run records it cancelled; one that asks for approval
// is recorded interrupted, and the session's next turn resumes it.
func TestUnannouncedRunCancelledOrInterrupted(t *testing.T) {
	f := newFixtureWith(t, nil, memory.New(), host.CompactionPolicy{Disabled: true})
	r, err := f.rt.Start(context.Background(), host.TurnRequest{App: "scripted", Input: text("block"), Unannounced: true})
	if err != nil {
		t.Fatal(err)
	}
	<-f.agent.started
	if s, err := f.store.GetSession(context.Background(), r.Key); err != nil || s.ActiveRunStatus != session.StatusInProgress {
		t.Errorf("session of a running unannounced turn: %+v, %v, want its run recorded in progress", s, err)
	}
	if err := f.rt.Cancel(context.Background(), r.Key, r.InvocationID); err != nil {
		t.Fatal(err)
	}
	<-r.Done()
	if got := storedStatus(t, f.store, r.Key, r.InvocationID); got != session.StatusCancelled {
		t.Errorf("cancelled run recorded as %s", got)
	}

	r, evs := f.turn(t, host.TurnRequest{Input: text("approve"), Unannounced: true})
	if d := terminal(t, evs); d.Status != session.StatusInterrupted {
		t.Fatalf("terminal %+v", d)
	}
	_, evs = f.turn(t, host.TurnRequest{SessionID: r.Key.ID, Unannounced: true,
		Input: host.Input{Resumes: []host.Resume{{ApprovalRequestID: "apr_1", Approve: true}}}})
	if d := terminal(t, evs); d.Status != session.StatusCompleted {
		t.Fatalf("resumed turn %+v", d)
	}
	if f.agent.last().Payload.Resume == nil || !f.agent.last().Payload.Resume.Approve {
		t.Errorf("the runner was not resumed: %+v", f.agent.last().Payload)
	}
}
