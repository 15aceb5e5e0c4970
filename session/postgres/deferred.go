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

// deferredStart is a run's start not sent yet: the new session's row, the run's and its
// opening events' as the start leaves them. mu is held while it is written or joined by
// the run's end.
type deferredStart struct {
	mu     sync.Mutex
	r      row
	run    runRow
	events eventRows
	timer  *time.Timer
	done   bool
}

// keepStart builds the start of run, with its opening events ps, in the new session row
// r (see newRow) as startRun would send it, and keeps it.
func (s *Store) keepStart(run session.Run, r row, ps []core.Pending) ([]session.Event, error) {
	d := &deferredStart{run: s.startedRun(run, &r)}
	evs, err := s.place(&r, ps)
	if err != nil {
		return nil, err
	}
	d.events.add(evs)
	d.r = r
	s.deferStart(run.Key, d)
	return evs, nil
}

// deferStart keeps d.
func (s *Store) deferStart(key session.Key, d *deferredStart) {
	s.deferred.mu.Lock()
	defer s.deferred.mu.Unlock()
	if s.deferred.m == nil {
		s.deferred.m = map[session.Key]*deferredStart{}
	}
	// Set before d can be found: whoever writes it stops the timer. A timer that fires
	// first waits for the lock, then finds d.
	d.timer = time.AfterFunc(s.cfg.deferWindow, func() {
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

// pipeline is the pipeline that creates d's session with the run rr and d's events.
func (d *deferredStart) pipeline(rr *runRow) *pgx.Batch {
	b := newPipeline()
	rr.queue(b, d.r.pk)
	d.events.queue(b, d.r.pk)
	return b
}

// sendKept writes d alone.
func (s *Store) sendKept(ctx context.Context, key session.Key, d *deferredStart) error {
	r := d.r
	return s.sendStart(ctx, key, &r, d.pipeline(&d.run))
}

// sendStart sends the pipeline of a kept start (with its end's statements, if any); r
// is the row as they leave it.
func (s *Store) sendStart(ctx context.Context, key session.Key, r *row, b *pgx.Batch) error {
	exists, err := s.sendNew(ctx, key, r, b)
	if err == nil && exists {
		err = fmt.Errorf("session %q: %w", key.ID, session.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("write the start of a run in session %q: %w", key.ID, err)
	}
	return nil
}

// finishKept ends the run invocationID with status and its closing events ps when key's
// start is kept: both are sent as one transaction. ok is false when key has no kept
// start.
//
// When the kept start is this run's and the closing events change no state, the end is
// folded into the start: the run's row is inserted as the end leaves it (the status and
// time the end's update would set) and the closing events join the opening ones' insert,
// so the rows stored are the same with two statements fewer; folded is then the closing
// events as stored. Otherwise fn queues the end's statements after the start's.
func (s *Store) finishKept(ctx context.Context, key session.Key, invocationID, status string, ps []core.Pending,
	fn func(r *row, b *pgx.Batch) error) (ok bool, folded []session.Event, err error) {
	d := s.kept(key)
	if d == nil {
		return false, nil, nil
	}
	defer s.release(key, d)
	r := d.r
	if d.run.run.InvocationID == invocationID && core.Plain(ps) {
		rr := d.run
		// As FinishRun's update sets them, then its events (see its fn).
		rr.run.Status, rr.updated = status, ns(s.now(&r))
		evs, err := s.place(&r, ps)
		if err != nil {
			return true, nil, s.startAlone(ctx, key, d, err)
		}
		d.events.add(evs)
		if err := s.sendStart(ctx, key, &r, d.pipeline(&rr)); err != nil {
			return true, nil, err
		}
		return true, evs, nil
	}
	b := d.pipeline(&d.run)
	// The row is inserted as both writes leave it (see writeNew).
	r.fresh = true
	if err := fn(&r, b); err != nil {
		return true, nil, s.startAlone(ctx, key, d, err)
	}
	return true, nil, s.sendStart(ctx, key, &r, b)
}

// startAlone writes d alone, as answered, after its run's end failed with err (not
// sent), and returns err with the write's own error, if any.
func (s *Store) startAlone(ctx context.Context, key session.Key, d *deferredStart, err error) error {
	if serr := s.sendKept(ctx, key, d); serr != nil {
		return fmt.Errorf("%w (and %w)", err, serr)
	}
	return err
}

// deferrable tells whether run's start may be kept: an unobserved run that creates its
// session and changes no state (a state read must not miss it).
func deferrable(run session.Run, ps []core.Pending) bool {
	return run.Unobserved && run.CreateSession && !core.Whole(run) && core.Plain(ps)
}
