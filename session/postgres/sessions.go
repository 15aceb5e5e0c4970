package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

const sessionCols = `pk, app_id, user_id, id, title, renamed, first_prompt, last_prompt, last_seq,
	checkpoint_seq, active_invocation_id, active_run_status, created_at, updated_at`

// row is a session row with its storage-only columns.
type row struct {
	pk      int64
	sess    session.Session
	renamed bool
	// fresh: the row is inserted by the write being built (writeNew), as its statements
	// leave it, so appendEvents queues no update of it; state is then its session state
	// (JSON, "" for none).
	fresh bool
	state string
}

func scanSession(sc pgx.Row) (row, error) {
	var (
		r                row
		created, updated int64
		s                = &r.sess
	)
	err := sc.Scan(&r.pk, &s.App, &s.User, &s.ID, &s.Title, &r.renamed, &s.FirstPrompt, &s.LastPrompt,
		&s.LastSeq, &s.CheckpointSeq, &s.ActiveInvocationID, &s.ActiveRunStatus, &created, &updated)
	s.CreatedAt, s.UpdatedAt = fromNS(created), fromNS(updated)
	s.App, s.User, s.ID, s.Title = unesc(s.App), unesc(s.User), unesc(s.ID), unesc(s.Title)
	s.FirstPrompt, s.LastPrompt = unesc(s.FirstPrompt), unesc(s.LastPrompt)
	s.ActiveInvocationID = unesc(s.ActiveInvocationID)
	return r, err
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// lookup reads a session row; forUpdate locks it for the transaction, which serializes
// every write of the session across replicas.
func lookup(ctx context.Context, q querier, key session.Key, forUpdate bool) (row, error) {
	if err := core.ValidKey(key); err != nil {
		return row{}, err
	}
	sql := `SELECT ` + sessionCols + ` FROM sessions WHERE app_id = $1 AND user_id = $2 AND id = $3`
	if forUpdate {
		sql += ` FOR UPDATE`
	}
	r, err := scanSession(q.QueryRow(ctx, sql, esc(key.App), esc(key.User), esc(key.ID)))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, fmt.Errorf("session %q: %w", key.ID, session.ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("read session %q: %w", key.ID, err)
	}
	return r, nil
}

// CreateSession creates an empty session; ErrExists if the key is taken.
func (s *Store) CreateSession(ctx context.Context, key session.Key) (session.Session, error) {
	if err := core.ValidKey(key); err != nil {
		return session.Session{}, err
	}
	if err := s.settle(ctx, key); err != nil {
		return session.Session{}, err
	}
	if err := ctx.Err(); err != nil {
		return session.Session{}, err
	}
	now := s.clock.Now()
	var pk int64
	err := s.pool.QueryRow(ctx, `INSERT INTO sessions (app_id, user_id, id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $4) ON CONFLICT DO NOTHING RETURNING pk`, esc(key.App), esc(key.User), esc(key.ID), ns(now)).Scan(&pk)
	if errors.Is(err, pgx.ErrNoRows) {
		return session.Session{}, fmt.Errorf("session %q: %w", key.ID, session.ErrExists)
	}
	if err != nil {
		return session.Session{}, fmt.Errorf("create session %q: %w", key.ID, err)
	}
	// The new row as stored (times at the column's nanosecond precision): the session's
	// first write can take the one-round-trip path.
	out := session.Session{Key: key, CreatedAt: fromNS(ns(now)), UpdatedAt: fromNS(ns(now))}
	s.rows.put(key, row{pk: pk, sess: out})
	return session.Session{Key: key, CreatedAt: now, UpdatedAt: now}, nil
}

// GetSession returns the session's summary row.
func (s *Store) GetSession(ctx context.Context, key session.Key) (session.Session, error) {
	if err := s.settle(ctx, key); err != nil {
		return session.Session{}, err
	}
	r, err := lookup(ctx, s.pool, key, false)
	return r.sess, err
}

// ListSessions pages through the user's sessions of app, most recently updated first.
func (s *Store) ListSessions(ctx context.Context, app, user string, q session.ListQuery) ([]session.Session, int, error) {
	if err := core.CheckListQuery(app, user, q); err != nil {
		return nil, 0, err
	}
	if err := s.settleAll(ctx); err != nil {
		return nil, 0, err
	}
	var limit *int
	if q.Limit > 0 {
		limit = &q.Limit
	}
	out := []session.Session{}
	var total int
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM sessions WHERE app_id = $1 AND user_id = $2`,
			esc(app), esc(user)).Scan(&total); err != nil {
			return fmt.Errorf("count sessions: %w", err)
		}
		// ARRAY[...] = ARRAY[...] matches the list's index (sessions_by_user_update).
		rows, err := tx.Query(ctx, `SELECT `+sessionCols+` FROM sessions WHERE ARRAY[app_id, user_id] = ARRAY[$1::text, $2::text]
			ORDER BY updated_at DESC, pk DESC LIMIT $3 OFFSET $4`, esc(app), esc(user), limit, q.Offset)
		if err != nil {
			return fmt.Errorf("list sessions: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanSession(rows)
			if err != nil {
				return fmt.Errorf("list sessions: %w", err)
			}
			out = append(out, r.sess)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// RenameSession sets the title; a blank title restores the automatic one. It does not
// count as activity, so UpdatedAt (and list order) stays.
func (s *Store) RenameSession(ctx context.Context, key session.Key, title string) (session.Session, error) {
	if err := s.settle(ctx, key); err != nil {
		return session.Session{}, err
	}
	var out session.Session
	err := s.tx(ctx, func(tx pgx.Tx) error {
		r, err := lookup(ctx, tx, key, true)
		if err != nil {
			return err
		}
		renamed, err := core.Rename(&r.sess, title)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE sessions SET title = $1, renamed = $2 WHERE pk = $3`,
			esc(r.sess.Title), renamed, r.pk); err != nil {
			return fmt.Errorf("rename session %q: %w", key.ID, err)
		}
		out = r.sess
		return nil
	})
	return out, err
}

// DeleteSession removes the session; its events, runs and checkpoints go with it (ON
// DELETE CASCADE), and so does its state, which lives in the session row.
func (s *Store) DeleteSession(ctx context.Context, key session.Key) error {
	if err := core.ValidKey(key); err != nil {
		return err
	}
	if err := s.settle(ctx, key); err != nil {
		return err
	}
	s.rows.drop(key)
	tag, err := s.pool.Exec(ctx, `DELETE FROM sessions WHERE app_id = $1 AND user_id = $2 AND id = $3`,
		esc(key.App), esc(key.User), esc(key.ID))
	if err != nil {
		return fmt.Errorf("delete session %q: %w", key.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("session %q: %w", key.ID, session.ErrNotFound)
	}
	return nil
}
