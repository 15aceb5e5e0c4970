package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

// StartRun records an in-progress run and appends its opening events in one transaction.
func (s *Store) StartRun(ctx context.Context, run session.Run, events ...session.NewEvent) ([]session.Event, error) {
	run, err := core.NewRun(run)
	if err != nil {
		return nil, err
	}
	ps, err := core.Prepare(events, run.InvocationID)
	if err != nil {
		return nil, err
	}
	size := keySize(run.Key) + len(run.InvocationID) + len(run.ResponseID) + len(run.Meta) + core.Size(ps)
	var out []session.Event
	whole := core.Whole(run)
	// An unobserved run's start may be answered before it commits (carry.go), when it
	// creates its session and changes no state another session reads.
	early := run.Unobserved && run.CreateSession && !whole && !sharedStateDelta(ps)
	err = s.wr.doOp(ctx, &op{size: size, early: early, key: run.Key, fn: func(t *wtx, now time.Time) error {
		c, created, evs, err := t.startSession(run, ps, now)
		if err != nil {
			return err
		}
		if created && early {
			t.mayAnswerEarly()
		}
		// The partial unique index runs_in_progress rejects a second in-progress run, so
		// the common case is one statement; a conflict is told apart afterwards.
		started := now
		if !run.CreatedAt.IsZero() {
			started = run.CreatedAt // it may have started before this write
		}
		_, err = t.w.st.insertRun.Exec(c.pk, run.InvocationID, nullable(run.ResponseID), run.Key.App, run.Key.User,
			run.Key.ID, run.Status, nullableJSON(run.Meta), ns(started), ns(now))
		if isUnique(err) {
			var active string
			err := t.w.st.activeRun.QueryRow(c.pk).Scan(&active)
			switch {
			case err == nil:
				return fmt.Errorf("start run %q: %w (%q)", run.InvocationID, session.ErrRunActive, active)
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("start run %q: %w", run.InvocationID, err)
			}
			return fmt.Errorf("run %q (response %q): %w", run.InvocationID, run.ResponseID, session.ErrExists)
		}
		if err != nil {
			return fmt.Errorf("start run %q: %w", run.InvocationID, err)
		}
		if evs != nil { // the new session's row holds their summary already
			err = t.insertEvents(c, evs)
		} else {
			evs, err = t.appendEvents(c, ps, now)
		}
		if !t.replaying { // its caller has the events of the first run already
			out = evs
		}
		return err
	}})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FinishRun sets the run's terminal status and appends its closing events in one
// transaction.
func (s *Store) FinishRun(ctx context.Context, key session.Key, invocationID, status string, events ...session.NewEvent) ([]session.Event, error) {
	if err := core.CheckFinish(key, invocationID, status); err != nil {
		return nil, err
	}
	ps, err := core.Prepare(events, invocationID)
	if err != nil {
		return nil, err
	}
	var out []session.Event
	// key: a start of the session carried in the open transaction is this run's, not
	// another turn's in flight (writer.gather).
	err = s.wr.doOp(ctx, &op{size: keySize(key) + len(invocationID) + core.Size(ps), key: key, fn: func(t *wtx, now time.Time) error {
		c, err := t.session(key)
		if err != nil {
			return err
		}
		// One statement in the common case; only a run that is not in progress pays a
		// second one to say why.
		res, err := t.w.st.finishRun.Exec(status, ns(now), c.pk, invocationID)
		if err != nil {
			return fmt.Errorf("finish run %q: %w", invocationID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("finish run %q: %w", invocationID, err)
		} else if n == 0 {
			var cur string
			err := t.w.st.runStatus.QueryRow(c.pk, invocationID).Scan(&cur)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("run %q: %w", invocationID, session.ErrNotFound)
			}
			if err != nil {
				return fmt.Errorf("finish run %q: %w", invocationID, err)
			}
			return fmt.Errorf("%w: run %q is already %s", session.ErrInvalid, invocationID, cur)
		}
		out, err = t.appendEvents(c, ps, now)
		return err
	}})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func scanRun(sc scanner) (session.Run, error) {
	var (
		r                session.Run
		resp, meta       sql.NullString
		created, updated int64
	)
	err := sc.Scan(&r.InvocationID, &resp, &r.Key.App, &r.Key.User, &r.Key.ID, &r.Status, &r.Deleted, &meta,
		&created, &updated)
	r.ResponseID = resp.String
	if meta.Valid {
		r.Meta = json.RawMessage(meta.String)
	}
	r.CreatedAt, r.UpdatedAt = fromNS(created), fromNS(updated)
	return r, err
}

// GetRun returns a run of the session by invocation id (deleted responses included).
func (s *Store) GetRun(ctx context.Context, key session.Key, invocationID string) (session.Run, error) {
	if err := core.ValidKey(key); err != nil {
		return session.Run{}, err
	}
	if err := s.wr.settle(ctx, &key); err != nil {
		return session.Run{}, err
	}
	r, err := scanRun(s.r.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs
		WHERE session_pk = (SELECT pk FROM sessions WHERE app_id = ? AND user_id = ? AND id = ?)
		AND invocation_id = ?`, key.App, key.User, key.ID, invocationID))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("run %q: %w", invocationID, session.ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("read run %q: %w", invocationID, err)
	}
	return r, nil
}

// GetRunByResponseID finds the user's run by response id; deleted ones are ErrNotFound.
func (s *Store) GetRunByResponseID(ctx context.Context, user, responseID string) (session.Run, error) {
	if err := core.ValidResponseLookup(user, responseID); err != nil {
		return session.Run{}, err
	}
	if err := s.wr.settle(ctx, nil); err != nil {
		return session.Run{}, err
	}
	r, err := scanRun(s.r.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs
		WHERE response_id = ? AND user_id = ? AND deleted = 0`, responseID, user))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("response %q: %w", responseID, session.ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("read response %q: %w", responseID, err)
	}
	return r, nil
}

// DeleteRunResponse hides the run from response lookups; a second delete is ErrNotFound.
func (s *Store) DeleteRunResponse(ctx context.Context, user, responseID string) error {
	if err := core.ValidResponseLookup(user, responseID); err != nil {
		return err
	}
	return s.write(ctx, 64+len(user)+len(responseID), func(t *wtx, now time.Time) error {
		res, err := t.w.st.deleteResponse.Exec(ns(now), responseID, user)
		if err != nil {
			return fmt.Errorf("delete response %q: %w", responseID, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return fmt.Errorf("response %q: %w", responseID, errors.Join(session.ErrNotFound, err))
		}
		return nil
	})
}

// ActiveRuns lists every in-progress run, oldest first.
func (s *Store) ActiveRuns(ctx context.Context) ([]session.Run, error) {
	if err := s.wr.settle(ctx, nil); err != nil {
		return nil, err
	}
	// No ORDER BY: it would make SQLite scan all runs instead of the partial index of
	// in-progress ones; they are sorted by creation time here.
	rows, err := s.r.QueryContext(ctx, `SELECT `+runCols+` FROM runs WHERE status = 'in_progress'`)
	if err != nil {
		return nil, fmt.Errorf("active runs: %w", err)
	}
	defer rows.Close()
	out := []session.Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("active runs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("active runs: %w", err)
	}
	slices.SortStableFunc(out, func(a, b session.Run) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// sharedStateDelta tells whether events change the app's or the user's state, which
// other sessions read.
func sharedStateDelta(ps []core.Pending) bool {
	for _, p := range ps {
		if p.App != nil || p.User != nil {
			return true
		}
	}
	return false
}

// startSession returns the session run starts in, and whether the start created it
// (run.CreateSession, when it does not exist). A session to create is usually new (a
// conversation's first turn), so it is inserted without looking it up first; a taken key
// is then read. A session created for events that change no state holds their summary
// from its insert (createStarted): evs are then those events, seqs assigned, for the
// caller to insert.
func (t *wtx) startSession(run session.Run, ps []core.Pending, now time.Time) (c *crow, created bool, evs []session.Event, err error) {
	at := now
	if !run.CreatedAt.IsZero() {
		at = run.CreatedAt
	}
	if run.CreateSession && !t.cached(run.Key) {
		if core.Plain(ps) {
			c, evs, err = t.createStarted(run.Key, at, ps, now)
		} else {
			c, err = t.createSession(run.Key, at)
		}
		if !errors.Is(err, session.ErrExists) {
			return c, err == nil, evs, err
		}
	}
	c, err = t.session(run.Key)
	switch {
	case err == nil && core.Whole(run):
		return nil, false, nil, fmt.Errorf("session %q of a run recorded whole: %w", run.Key.ID, session.ErrExists)
	case errors.Is(err, session.ErrNotFound) && run.CreateSession:
		// Deleted earlier in this transaction: created anew.
		c, err = t.createSession(run.Key, at)
		return c, err == nil, nil, err
	}
	return c, false, nil, err
}
