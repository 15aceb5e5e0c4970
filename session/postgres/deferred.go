package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

// Unobserved starts. A run that nobody but its caller can read until it ends
// (session.Run.Unobserved), starting in a session it creates, needs its start's seqs at
// once but not its durability until its end. The start of such a run in a new session is
// built as writeNew builds it (the row's key drawn ahead, so nothing is needed back from
// the database) and kept here instead of sent: the run's FinishRun adds its statements
// to the same pipeline and sends both as one transaction, so such a turn is one write,
// not two. The seqs are the store's own: a new session's first events, assigned as
// writeNew assigns them.
//
// Every other use of the session (a read, a write, a rename, a cluster call) writes the
// kept start first (settle), so that what was answered is what everyone sees; so does
// deferWindow passing, and Close. A start whose write fails is lost with its run (its
// session's later calls find no session): nobody could have read it.

// deferWindow is how long a start is kept for its run's end before it is written alone.
const deferWindow = 50 * time.Millisecond

type deferredStarts struct {
	mu sync.Mutex
	m  map[session.Key]*deferredStart
}

// deferredStart is a run's start not yet sent; mu is held while it is written or joined
// by the run's end.
type deferredStart struct {
	mu    sync.Mutex
	r     row
	b     *pgx.Batch
	timer *time.Timer
	done  bool
}

// deferStart keeps a start built on the new row r and pipeline b.
func (s *Store) deferStart(key session.Key, r row, b *pgx.Batch) {
	d := &deferredStart{r: r, b: b}
	s.deferred.mu.Lock()
	defer s.deferred.mu.Unlock()
	if s.deferred.m == nil {
		s.deferred.m = map[session.Key]*deferredStart{}
	}
	// Set before d can be found: whoever writes it stops the timer. A timer that fires
	// first waits for the lock, then finds d.
	d.timer = time.AfterFunc(deferWindow, func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.statementTimeout)
		defer cancel()
		_ = s.settle(ctx, key)
	})
	s.deferred.m[key] = d
}

// kept returns key's kept start, if any, locked; the caller calls release.
func (s *Store) kept(key session.Key) *deferredStart {
	s.deferred.mu.Lock()
	d := s.deferred.m[key]
	s.deferred.mu.Unlock()
	if d == nil {
		return nil
	}
	d.mu.Lock()
	if d.done { // written meanwhile
		d.mu.Unlock()
		return nil
	}
	return d
}

// release marks d written (or lost) and forgets it.
func (s *Store) release(key session.Key, d *deferredStart) {
	d.done = true
	d.timer.Stop()
	s.deferred.mu.Lock()
	if s.deferred.m[key] == d {
		delete(s.deferred.m, key)
	}
	s.deferred.mu.Unlock()
	d.mu.Unlock()
}

// settle writes key's kept start, if any, before another use of the session.
func (s *Store) settle(ctx context.Context, key session.Key) error {
	d := s.kept(key)
	if d == nil {
		return nil
	}
	defer s.release(key, d)
	return s.sendKept(ctx, key, d)
}

// settleAll writes every kept start, before a use that is not of one session.
func (s *Store) settleAll(ctx context.Context) error {
	s.deferred.mu.Lock()
	keys := make([]session.Key, 0, len(s.deferred.m))
	for k := range s.deferred.m {
		keys = append(keys, k)
	}
	s.deferred.mu.Unlock()
	for _, k := range keys {
		if err := s.settle(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) sendKept(ctx context.Context, key session.Key, d *deferredStart) error {
	exists, err := s.sendNew(ctx, key, &d.r, d.b)
	if err == nil && exists {
		err = fmt.Errorf("session %q: %w", key.ID, session.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("write the start of a run in session %q: %w", key.ID, err)
	}
	return nil
}

// finishKept ends a run whose start is kept: fn's statements join the start's pipeline,
// sent as one transaction. ok is false when key has no kept start.
func (s *Store) finishKept(ctx context.Context, key session.Key, fn func(r *row, b *pgx.Batch) error) (ok bool, err error) {
	d := s.kept(key)
	if d == nil {
		return false, nil
	}
	defer s.release(key, d)
	// The row is inserted as both writes leave it (see writeNew).
	d.r.fresh = true
	if err := fn(&d.r, d.b); err != nil {
		// Not ended: the start is written alone, as answered.
		if serr := s.sendKept(ctx, key, d); serr != nil {
			return true, fmt.Errorf("%w (and %w)", err, serr)
		}
		return true, err
	}
	return true, s.sendKept(ctx, key, d)
}

// deferrable tells whether run's start may be kept: an unobserved run that creates its
// session and changes no state (a state read must not miss it).
func deferrable(run session.Run, ps []core.Pending) bool {
	if !run.Unobserved || !run.CreateSession || core.Whole(run) {
		return false
	}
	for _, p := range ps {
		if p.App != nil || p.User != nil || p.Sess != nil || p.Checkpoints != nil {
			return false
		}
	}
	return true
}
