package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

const runCols = `invocation_id, response_id, app_id, user_id, session_id, status, deleted, meta, created_at, updated_at`

// StartRun records an in-progress run, owned by this replica, and appends its opening
// events in one transaction.
func (s *Store) StartRun(ctx context.Context, run session.Run, events ...session.NewEvent) ([]session.Event, error) {
	return s.startRun(ctx, run, events, nil)
}

// StartRunWithState is StartRun that also returns the session's state tiers as the run's
// start leaves them, read in the same round trip (a turn needs both).
func (s *Store) StartRunWithState(ctx context.Context, run session.Run, events ...session.NewEvent) ([]session.Event, session.State, error) {
	var st session.State
	evs, err := s.startRun(ctx, run, events, &st)
	return evs, st, err
}

// startRun starts the run; with st set it also reads the session's state into it.
func (s *Store) startRun(ctx context.Context, run session.Run, events []session.NewEvent, st *session.State) ([]session.Event, error) {
	run, err := core.NewRun(run)
	if err != nil {
		return nil, err
	}
	ps, err := core.Prepare(events, run.InvocationID)
	if err != nil {
		return nil, err
	}
	var out []session.Event
	whole := core.Whole(run)
	start := func(r *row, b *pgx.Batch) error {
		// The partial unique index runs_in_progress rejects a second in-progress run
		// whichever replica starts it; the violation aborts the transaction.
		rr := s.startedRun(run, r)
		rr.queue(b, r.pk)
		out, err = s.appendEvents(b, r, ps)
		if err != nil || st == nil {
			return err
		}
		key := r.sess.Key
		b.Queue(stateOfRow, esc(key.App), esc(key.User), r.pk).QueryRow(func(row pgx.Row) error {
			var sess, app, user []byte
			if err := row.Scan(&sess, &app, &user); err != nil {
				return fmt.Errorf("session state of %q: %w", key.ID, err)
			}
			state, err := decodeState(key, sess, app, user)
			*st = state
			return err
		})
		return nil
	}
	// A session to create is written with the run in one pipeline; an existing one (or
	// one created meanwhile: writeNew finds the key taken) the usual way.
	inExisting := true
	if _, known := s.rows.get(run.Key); run.CreateSession && !known {
		created := run.CreatedAt
		if created.IsZero() {
			created = s.clock.Now()
		}
		if deferrable(run, ps) {
			// An unobserved run's start is kept, and sent with its end (deferred.go); the
			// state it starts with is a new session's.
			r, err := s.newRow(ctx, run.Key, created)
			if err != nil {
				return nil, fmt.Errorf("start run %q: %w", run.InvocationID, err)
			}
			if st != nil {
				if *st, err = s.NewSessionState(ctx, run.Key.App, run.Key.User); err != nil {
					return nil, err
				}
			}
			return s.keepStart(run, r, ps)
		}
		inExisting, err = s.writeNew(ctx, run.Key, created, start)
	}
	switch {
	case inExisting && whole:
		return nil, fmt.Errorf("session %q of a run recorded whole: %w", run.Key.ID, session.ErrExists)
	case inExisting:
		err = s.write(ctx, run.Key, start)
	}
	if code, constraint := pgCode(err); code == "23505" {
		if constraint == "runs_in_progress" {
			active := "another run"
			if runs, err := s.queryRuns(ctx, `SELECT `+runCols+` FROM runs WHERE status = 'in_progress' AND session_pk =
				(SELECT pk FROM sessions WHERE app_id = $1 AND user_id = $2 AND id = $3)`,
				esc(run.Key.App), esc(run.Key.User), esc(run.Key.ID)); err == nil && len(runs) == 1 {
				active = runs[0].InvocationID
			}
			return nil, fmt.Errorf("start run %q: %w (%q)", run.InvocationID, session.ErrRunActive, active)
		}
		return nil, fmt.Errorf("run %q (response %q): %w", run.InvocationID, run.ResponseID, session.ErrExists)
	}
	if err != nil {
		return nil, fmt.Errorf("start run %q: %w", run.InvocationID, err)
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
	finish := func(r *row, b *pgx.Batch) error {
		// A run that is not in progress must abort the transaction before its events
		// are stored: no row updated divides by zero (SQLSTATE 22012).
		b.Queue(`WITH u AS (UPDATE runs SET status = $1, updated_at = $2
			WHERE session_pk = $3 AND invocation_id = $4 AND status = 'in_progress' RETURNING 1)
			SELECT 1 / (SELECT count(*) FROM u)::int`,
			status, ns(s.now(r)), r.pk, esc(invocationID))
		out, err = s.appendEvents(b, r, ps)
		return err
	}
	// The end of a run whose start is kept is written with it.
	kept, folded, err := s.finishKept(ctx, key, invocationID, status, ps, finish)
	if folded != nil {
		out = folded
	}
	if !kept {
		err = s.write(ctx, key, finish)
	}
	if code, _ := pgCode(err); code == "22012" {
		cur, gerr := s.GetRun(ctx, key, invocationID)
		if gerr != nil {
			return nil, gerr
		}
		return nil, fmt.Errorf("%w: run %q is already %s", session.ErrInvalid, invocationID, cur.Status)
	}
	if err != nil {
		return nil, fmt.Errorf("finish run %q: %w", invocationID, err)
	}
	return out, nil
}

// runRow is a run's row as the statement that inserts it writes it.
type runRow struct {
	run              session.Run // key, ids, status and meta
	owner            string
	created, updated int64
}

// startedRun is run's row as its start in the session of r inserts it.
func (s *Store) startedRun(run session.Run, r *row) runRow {
	now := s.now(r)
	started := now
	if !run.CreatedAt.IsZero() {
		started = run.CreatedAt // it may have started before this write
	}
	return runRow{run: run, owner: s.replicaID(), created: ns(started), updated: ns(now)}
}

// queue queues the run's insert into the session row pk.
func (rr *runRow) queue(b *pgx.Batch, pk int64) {
	run := &rr.run
	b.Queue(`INSERT INTO runs (session_pk, invocation_id, response_id, app_id, user_id,
		session_id, status, meta, owner, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		pk, esc(run.InvocationID), nullable(esc(run.ResponseID)), esc(run.Key.App), esc(run.Key.User), esc(run.Key.ID),
		run.Status, nullableJSON(run.Meta), rr.owner, rr.created, rr.updated)
}

func scanRun(sc pgx.Row) (session.Run, error) {
	var (
		r                session.Run
		resp, meta       *string
		created, updated int64
	)
	err := sc.Scan(&r.InvocationID, &resp, &r.Key.App, &r.Key.User, &r.Key.ID, &r.Status, &r.Deleted, &meta,
		&created, &updated)
	if resp != nil {
		r.ResponseID = *resp
	}
	if meta != nil {
		r.Meta = json.RawMessage(*meta)
	}
	r.CreatedAt, r.UpdatedAt = fromNS(created), fromNS(updated)
	r.InvocationID, r.ResponseID = unesc(r.InvocationID), unesc(r.ResponseID)
	r.Key = session.Key{App: unesc(r.Key.App), User: unesc(r.Key.User), ID: unesc(r.Key.ID)}
	return r, err
}

// GetRun returns a run of the session by invocation id (deleted responses included).
func (s *Store) GetRun(ctx context.Context, key session.Key, invocationID string) (session.Run, error) {
	if err := core.ValidKey(key); err != nil {
		return session.Run{}, err
	}
	if err := s.settle(ctx, key); err != nil {
		return session.Run{}, err
	}
	r, err := scanRun(s.pool.QueryRow(ctx, `SELECT `+runCols+` FROM runs
		WHERE session_pk = (SELECT pk FROM sessions WHERE app_id = $1 AND user_id = $2 AND id = $3)
		AND invocation_id = $4`, esc(key.App), esc(key.User), esc(key.ID), esc(invocationID)))
	if errors.Is(err, pgx.ErrNoRows) {
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
	if err := s.settleAll(ctx); err != nil {
		return session.Run{}, err
	}
	r, err := scanRun(s.pool.QueryRow(ctx, `SELECT `+runCols+` FROM runs
		WHERE response_id = $1 AND user_id = $2 AND NOT deleted`, esc(responseID), esc(user)))
	if errors.Is(err, pgx.ErrNoRows) {
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
	if err := s.settleAll(ctx); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE runs SET deleted = true, updated_at = $1
		WHERE response_id = $2 AND user_id = $3 AND NOT deleted`, ns(s.clock.Now()), esc(responseID), esc(user))
	if err != nil {
		return fmt.Errorf("delete response %q: %w", responseID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("response %q: %w", responseID, session.ErrNotFound)
	}
	return nil
}

// ActiveRuns lists every in-progress run, oldest first. With several replicas that
// includes runs other replicas are executing: the host must not treat them as orphans
// (see RunOwner).
func (s *Store) ActiveRuns(ctx context.Context) ([]session.Run, error) {
	if err := s.settleAll(ctx); err != nil {
		return nil, err
	}
	return s.queryRuns(ctx, `SELECT `+runCols+` FROM runs WHERE status = 'in_progress' ORDER BY created_at, pk`)
}

func (s *Store) queryRuns(ctx context.Context, sql string, args ...any) ([]session.Run, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	out := []session.Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}
