package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

// row is a session row with its storage-only columns.
type row struct {
	pk      int64
	sess    session.Session
	renamed bool
}

type scanner interface{ Scan(dest ...any) error }

func scanSession(sc scanner) (row, error) {
	var (
		r                row
		created, updated int64
		s                = &r.sess
	)
	err := sc.Scan(&r.pk, &s.App, &s.User, &s.ID, &s.Title, &r.renamed, &s.FirstPrompt, &s.LastPrompt,
		&s.LastSeq, &s.CheckpointSeq, &s.ActiveInvocationID, &s.ActiveRunStatus, &created, &updated)
	s.CreatedAt, s.UpdatedAt = fromNS(created), fromNS(updated)
	return r, err
}

// lookup reads a session row through stmt (writer or reader), mapping absence to
// ErrNotFound.
func lookup(ctx context.Context, stmt *sql.Stmt, key session.Key) (row, error) {
	r, err := scanSession(stmt.QueryRowContext(ctx, key.App, key.User, key.ID))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("session %q: %w", key.ID, session.ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("read session %q: %w", key.ID, err)
	}
	return r, nil
}

// lookupW reads a session row inside a write transaction.
func (s *Store) lookupW(ctx context.Context, tx *sql.Tx, key session.Key) (row, error) {
	if err := core.ValidKey(key); err != nil {
		return row{}, err
	}
	return lookup(ctx, tx.StmtContext(ctx, s.st.wSession), key)
}

// CreateSession creates an empty session; ErrExists if the key is taken.
func (s *Store) CreateSession(ctx context.Context, key session.Key) (session.Session, error) {
	if err := core.ValidKey(key); err != nil {
		return session.Session{}, err
	}
	var out session.Session
	err := s.write(ctx, func(tx *sql.Tx, now time.Time) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (app_id, user_id, id, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?)`, key.App, key.User, key.ID, ns(now), ns(now))
		if isUnique(err) {
			return fmt.Errorf("session %q: %w", key.ID, session.ErrExists)
		}
		if err != nil {
			return fmt.Errorf("create session %q: %w", key.ID, err)
		}
		out = session.Session{Key: key, CreatedAt: now, UpdatedAt: now}
		return nil
	})
	return out, err
}

// GetSession returns the session's summary row.
func (s *Store) GetSession(ctx context.Context, key session.Key) (session.Session, error) {
	if err := core.ValidKey(key); err != nil {
		return session.Session{}, err
	}
	r, err := lookup(ctx, s.st.rSession, key)
	return r.sess, err
}

// ListSessions pages through the user's sessions of app, most recently updated first.
func (s *Store) ListSessions(ctx context.Context, app, user string, q session.ListQuery) ([]session.Session, int, error) {
	if err := core.CheckListQuery(app, user, q); err != nil {
		return nil, 0, err
	}
	limit := int64(q.Limit)
	if limit == 0 {
		limit = -1 // SQLite: no limit
	}
	out := []session.Session{}
	var total int
	err := s.read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sessions WHERE app_id = ? AND user_id = ?`,
			app, user).Scan(&total); err != nil {
			return fmt.Errorf("count sessions: %w", err)
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE app_id = ? AND user_id = ?
			ORDER BY updated_at DESC, pk DESC LIMIT ? OFFSET ?`, app, user, limit, q.Offset)
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
	var out session.Session
	err := s.write(ctx, func(tx *sql.Tx, _ time.Time) error {
		r, err := s.lookupW(ctx, tx, key)
		if err != nil {
			return err
		}
		renamed, err := core.Rename(&r.sess, title)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET title = ?, renamed = ? WHERE pk = ?`,
			r.sess.Title, renamed, r.pk); err != nil {
			return fmt.Errorf("rename session %q: %w", key.ID, err)
		}
		out = r.sess
		return nil
	})
	return out, err
}

// DeleteSession removes the session; its events and runs go with it (ON DELETE
// CASCADE), and so does its state, which lives in the session row.
func (s *Store) DeleteSession(ctx context.Context, key session.Key) error {
	return s.write(ctx, func(tx *sql.Tx, _ time.Time) error {
		r, err := s.lookupW(ctx, tx, key)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE pk = ?`, r.pk); err != nil {
			return fmt.Errorf("delete session %q: %w", key.ID, err)
		}
		return nil
	})
}
