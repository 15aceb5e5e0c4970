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

// keySize is a request's size for the batch budget when it stores no payload.
func keySize(k session.Key) int { return 64 + len(k.App) + len(k.User) + len(k.ID) }

// CreateSession creates an empty session; ErrExists if the key is taken.
func (s *Store) CreateSession(ctx context.Context, key session.Key) (session.Session, error) {
	if err := core.ValidKey(key); err != nil {
		return session.Session{}, err
	}
	var out session.Session
	err := s.write(ctx, keySize(key), func(t *wtx, now time.Time) error {
		c, err := t.createSession(key, now)
		if err == nil {
			out = c.sess
		}
		return err
	})
	return out, err
}

// GetSession returns the session's summary row.
func (s *Store) GetSession(ctx context.Context, key session.Key) (session.Session, error) {
	if err := core.ValidKey(key); err != nil {
		return session.Session{}, err
	}
	if err := s.wr.settle(ctx, &key); err != nil {
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
	if err := s.wr.settle(ctx, nil); err != nil {
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
	err := s.write(ctx, keySize(key)+len(title), func(t *wtx, _ time.Time) error {
		c, err := t.session(key)
		if err != nil {
			return err
		}
		renamed, err := core.Rename(&c.sess, title)
		if err != nil {
			return err
		}
		c.renamed, c.dirty = renamed, true
		out = c.sess
		return nil
	})
	return out, err
}

// DeleteSession removes the session; its events and runs go with it (ON DELETE
// CASCADE), and so does its state, which lives in the session row.
func (s *Store) DeleteSession(ctx context.Context, key session.Key) error {
	return s.write(ctx, keySize(key), func(t *wtx, _ time.Time) error {
		c, err := t.session(key)
		if err != nil {
			return err
		}
		if _, err := t.w.st.deleteSession.Exec(c.pk); err != nil {
			return fmt.Errorf("delete session %q: %w", key.ID, err)
		}
		c.gone = true
		return nil
	})
}
