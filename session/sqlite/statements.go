package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

const sessionCols = `pk, app_id, user_id, id, title, renamed, first_prompt, last_prompt, last_seq,
	checkpoint_seq, active_invocation_id, active_run_status, created_at, updated_at`

const eventCols = `seq, invocation_id, item_id, type, author, data, state_delta, time`

// eventsFrom selects a session's events after a seq; the session is resolved by key in
// the same statement.
const eventsFrom = `SELECT ` + eventCols + ` FROM events
	WHERE session_pk = (SELECT pk FROM sessions WHERE app_id = ? AND user_id = ? AND id = ?) AND seq > ?`

const runCols = `invocation_id, response_id, app_id, user_id, session_id, status, deleted, meta,
	created_at, updated_at`

// statements are the hot queries, prepared once (per connection, by database/sql).
// Writer statements are used inside transactions through tx.StmtContext.
type statements struct {
	// writer
	wSession     *sql.Stmt
	wInsertEvent *sql.Stmt
	wUpdateSum   *sql.Stmt
	wActiveRun   *sql.Stmt
	// readers
	rSession     *sql.Stmt
	rEventsAfter *sql.Stmt

	all []*sql.Stmt
}

func (st *statements) prepare(ctx context.Context, w, r *sql.DB) error {
	var errs []error
	prep := func(db *sql.DB, query string) *sql.Stmt {
		s, err := db.PrepareContext(ctx, query)
		if err != nil {
			errs = append(errs, fmt.Errorf("prepare %q: %w", query, err))
			return nil
		}
		st.all = append(st.all, s)
		return s
	}
	const bySessionKey = `SELECT ` + sessionCols + ` FROM sessions WHERE app_id = ? AND user_id = ? AND id = ?`
	st.wSession = prep(w, bySessionKey)
	st.wInsertEvent = prep(w, `INSERT INTO events
		(session_pk, seq, invocation_id, item_id, type, author, data, state_delta, time)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	st.wUpdateSum = prep(w, `UPDATE sessions SET title = ?, first_prompt = ?, last_prompt = ?,
		last_seq = ?, checkpoint_seq = ?, active_invocation_id = ?, active_run_status = ?,
		updated_at = ?, state = coalesce(?, state) WHERE pk = ?`)
	st.wActiveRun = prep(w, `SELECT invocation_id FROM runs WHERE session_pk = ? AND status = 'in_progress'`)
	st.rSession = prep(r, bySessionKey)
	st.rEventsAfter = prep(r, eventsFrom+` ORDER BY seq`)
	return errors.Join(errs...)
}

func (st *statements) close() {
	for _, s := range st.all {
		s.Close()
	}
	st.all = nil
}
