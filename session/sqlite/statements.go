package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
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

// statements are the readers' hot queries, prepared once (per connection, by
// database/sql).
type statements struct {
	rSession     *sql.Stmt
	rEventsAfter *sql.Stmt
	rState       *sql.Stmt
	rTiers       *sql.Stmt

	all []*sql.Stmt
}

const bySessionKey = `SELECT ` + sessionCols + ` FROM sessions WHERE app_id = ? AND user_id = ? AND id = ?`

func (st *statements) prepare(ctx context.Context, r *sql.DB) error {
	p := preparer{ctx: ctx, prep: r.PrepareContext}
	st.rSession = p.stmt(bySessionKey)
	st.rEventsAfter = p.stmt(eventsFrom + ` ORDER BY seq`)
	// The three tiers in one statement: one snapshot without a transaction's round trips.
	st.rState = p.stmt(`SELECT s.state,
		(SELECT state FROM app_state WHERE app_id = ?1),
		(SELECT state FROM user_state WHERE app_id = ?1 AND user_id = ?2)
		FROM sessions s WHERE s.app_id = ?1 AND s.user_id = ?2 AND s.id = ?3`)
	st.rTiers = p.stmt(`SELECT (SELECT state FROM app_state WHERE app_id = ?1),
		(SELECT state FROM user_state WHERE app_id = ?1 AND user_id = ?2)`)
	st.all = p.all
	return errors.Join(p.errs...)
}

func (st *statements) close() {
	for _, s := range st.all {
		s.Close()
	}
	st.all = nil
}

// maxEventsPerInsert is the most events one insert statement takes.
const maxEventsPerInsert = 8

// wstatements are every statement the writer runs, prepared once on its connection:
// a write request runs no SQL text that has to be compiled again.
type wstatements struct {
	begin, commit, rollback        *sql.Stmt
	dataVersion                    *sql.Stmt
	savepoint, release, rollbackTo *sql.Stmt
	session, sessionState          *sql.Stmt
	insertSession, deleteSession   *sql.Stmt
	insertStarted                  *sql.Stmt
	updateSession                  *sql.Stmt
	// insertEvents[k] inserts k+1 events: a turn's events are one statement, not one
	// per event (each a round of binding, stepping and resetting through cgo).
	insertEvents                    [maxEventsPerInsert]*sql.Stmt
	insertRun, activeRun, finishRun *sql.Stmt
	runStatus, deleteResponse       *sql.Stmt
	appState, upsertApp             *sql.Stmt
	userState, upsertUser           *sql.Stmt
	checkpointID, upsertCheckpoint  *sql.Stmt
	dropStaleWrites, upsertWrite    *sql.Stmt
	checkpointThreads               *sql.Stmt
	dropThread, dropThreadWrites    *sql.Stmt
	lastDocVersion, insertDoc       *sql.Stmt
	deleteDoc                       *sql.Stmt

	all []*sql.Stmt
}

func (st *wstatements) prepare(ctx context.Context, conn *sql.Conn) error {
	p := preparer{ctx: ctx, prep: conn.PrepareContext}
	st.begin = p.stmt(`BEGIN IMMEDIATE`)
	st.commit = p.stmt(`COMMIT`)
	st.rollback = p.stmt(`ROLLBACK`)
	st.dataVersion = p.stmt(`PRAGMA data_version`)
	st.savepoint = p.stmt(`SAVEPOINT op`)
	st.release = p.stmt(`RELEASE op`)
	st.rollbackTo = p.stmt(`ROLLBACK TO op`)
	st.session = p.stmt(bySessionKey)
	st.sessionState = p.stmt(`SELECT state FROM sessions WHERE pk = ?`)
	st.insertSession = p.stmt(`INSERT INTO sessions (app_id, user_id, id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`)
	st.insertStarted = p.stmt(`INSERT INTO sessions (app_id, user_id, id, title, first_prompt, last_prompt, last_seq,
		checkpoint_seq, active_invocation_id, active_run_status, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	st.deleteSession = p.stmt(`DELETE FROM sessions WHERE pk = ?`)
	st.lastDocVersion = p.stmt(`SELECT max(version) FROM docs
		WHERE app_id = ? AND user_id = ? AND session_id = ? AND kind = ? AND name = ?`)
	st.insertDoc = p.stmt(`INSERT INTO docs (app_id, user_id, session_id, kind, name, version, mime_type,
		data, meta, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	st.deleteDoc = p.stmt(`DELETE FROM docs
		WHERE app_id = ? AND user_id = ? AND session_id = ? AND kind = ? AND name = ?`)
	st.updateSession = p.stmt(`UPDATE sessions SET title = ?, renamed = ?, first_prompt = ?, last_prompt = ?,
		last_seq = ?, checkpoint_seq = ?, active_invocation_id = ?, active_run_status = ?,
		updated_at = ?, state = coalesce(?, state) WHERE pk = ?`)
	for k := range st.insertEvents {
		st.insertEvents[k] = p.stmt(`INSERT INTO events
		(session_pk, seq, invocation_id, item_id, type, author, data, state_delta, time)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)` + strings.Repeat(`, (?, ?, ?, ?, ?, ?, ?, ?, ?)`, k))
	}
	st.insertRun = p.stmt(`INSERT INTO runs (session_pk, invocation_id, response_id, app_id, user_id,
		session_id, status, meta, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	st.activeRun = p.stmt(`SELECT invocation_id FROM runs WHERE session_pk = ? AND status = 'in_progress'`)
	st.finishRun = p.stmt(`UPDATE runs SET status = ?, updated_at = ?
		WHERE session_pk = ? AND invocation_id = ? AND status = 'in_progress'`)
	st.runStatus = p.stmt(`SELECT status FROM runs WHERE session_pk = ? AND invocation_id = ?`)
	st.deleteResponse = p.stmt(`UPDATE runs SET deleted = 1, updated_at = ?
		WHERE response_id = ? AND user_id = ? AND deleted = 0`)
	st.appState = p.stmt(`SELECT state FROM app_state WHERE app_id = ?`)
	st.upsertApp = p.stmt(`INSERT INTO app_state (app_id, state) VALUES (?, ?)
		ON CONFLICT (app_id) DO UPDATE SET state = excluded.state`)
	st.userState = p.stmt(`SELECT state FROM user_state WHERE app_id = ? AND user_id = ?`)
	st.upsertUser = p.stmt(`INSERT INTO user_state (app_id, user_id, state) VALUES (?, ?, ?)
		ON CONFLICT (app_id, user_id) DO UPDATE SET state = excluded.state`)
	st.checkpointID = p.stmt(`SELECT checkpoint_id FROM checkpoints WHERE session_pk = ? AND thread_id = ? AND namespace = ?`)
	st.upsertCheckpoint = p.stmt(`INSERT INTO checkpoints (session_pk, thread_id, namespace, checkpoint_id, parent_id, data)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_pk, thread_id, namespace) DO UPDATE SET
		checkpoint_id = excluded.checkpoint_id, parent_id = excluded.parent_id, data = excluded.data`)
	st.dropStaleWrites = p.stmt(`DELETE FROM checkpoint_writes
		WHERE session_pk = ? AND thread_id = ? AND namespace = ? AND checkpoint_id <> ?`)
	st.upsertWrite = p.stmt(`INSERT INTO checkpoint_writes
		(session_pk, thread_id, namespace, checkpoint_id, task_id, idx, channel, task_path, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET
		channel = excluded.channel, task_path = excluded.task_path, data = excluded.data`)
	st.checkpointThreads = p.stmt(`SELECT DISTINCT thread_id FROM checkpoints WHERE session_pk = ?`)
	st.dropThread = p.stmt(`DELETE FROM checkpoints WHERE session_pk = ? AND thread_id = ?`)
	st.dropThreadWrites = p.stmt(`DELETE FROM checkpoint_writes WHERE session_pk = ? AND thread_id = ?`)
	st.all = p.all
	return errors.Join(p.errs...)
}

func (st *wstatements) close() {
	for _, s := range st.all {
		s.Close()
	}
	st.all = nil
}

// preparer prepares statements, collecting them (to close) and the errors.
type preparer struct {
	ctx  context.Context
	prep func(ctx context.Context, query string) (*sql.Stmt, error)
	all  []*sql.Stmt
	errs []error
}

func (p *preparer) stmt(query string) *sql.Stmt {
	s, err := p.prep(p.ctx, query)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("prepare %q: %w", query, err))
		return nil
	}
	p.all = append(p.all, s)
	return s
}
