package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

// applyDeltas folds the events' tier deltas into app, user and session state, reading
// and writing each touched tier once. It returns the new session state JSON, or nil when
// the session tier is untouched (the summary update then keeps the column).
func (s *Store) applyDeltas(ctx context.Context, tx *sql.Tx, r *row, ps []core.Pending) (any, error) {
	var app, user, sess []map[string]any
	for _, p := range ps {
		if p.App != nil {
			app = append(app, p.App)
		}
		if p.User != nil {
			user = append(user, p.User)
		}
		if p.Sess != nil {
			sess = append(sess, p.Sess)
		}
	}
	k := r.sess.Key
	if len(app) > 0 {
		err := updateTier(ctx, tx, app,
			`SELECT state FROM app_state WHERE app_id = ?`,
			`INSERT INTO app_state (app_id, state) VALUES (?, ?)
				ON CONFLICT (app_id) DO UPDATE SET state = excluded.state`, k.App)
		if err != nil {
			return nil, fmt.Errorf("app state: %w", err)
		}
	}
	if len(user) > 0 {
		err := updateTier(ctx, tx, user,
			`SELECT state FROM user_state WHERE app_id = ? AND user_id = ?`,
			`INSERT INTO user_state (app_id, user_id, state) VALUES (?, ?, ?)
				ON CONFLICT (app_id, user_id) DO UPDATE SET state = excluded.state`, k.App, k.User)
		if err != nil {
			return nil, fmt.Errorf("user state: %w", err)
		}
	}
	if len(sess) == 0 {
		return nil, nil
	}
	state, err := readTier(ctx, tx, `SELECT state FROM sessions WHERE pk = ?`, r.pk)
	if err != nil {
		return nil, fmt.Errorf("session state: %w", err)
	}
	for _, d := range sess {
		state = session.ApplyDelta(state, d)
	}
	b, err := json.Marshal(state)
	if err != nil {
		return nil, fmt.Errorf("%w: session state: %w", session.ErrInvalid, err)
	}
	return string(b), nil
}

func updateTier(ctx context.Context, tx *sql.Tx, deltas []map[string]any, sel, upsert string, key ...any) error {
	state, err := readTier(ctx, tx, sel, key...)
	if err != nil {
		return err
	}
	for _, d := range deltas {
		state = session.ApplyDelta(state, d)
	}
	b, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("%w: %w", session.ErrInvalid, err)
	}
	_, err = tx.ExecContext(ctx, upsert, append(key, string(b))...)
	return err
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readTier decodes one tier's JSON; a missing row is an empty tier.
func readTier(ctx context.Context, q querier, query string, args ...any) (map[string]any, error) {
	var raw string
	err := q.QueryRowContext(ctx, query, args...).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeTier(raw)
}

func decodeTier(raw string) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, fmt.Errorf("stored state is corrupt: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// State returns the session's three state tiers from one snapshot.
func (s *Store) State(ctx context.Context, key session.Key) (session.State, error) {
	if err := core.ValidKey(key); err != nil {
		return session.State{}, err
	}
	var out session.State
	err := s.read(ctx, func(tx *sql.Tx) error {
		var raw string
		err := tx.QueryRowContext(ctx, `SELECT state FROM sessions WHERE app_id = ? AND user_id = ? AND id = ?`,
			key.App, key.User, key.ID).Scan(&raw)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("session %q: %w", key.ID, session.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("session state of %q: %w", key.ID, err)
		}
		if out.Session, err = decodeTier(raw); err != nil {
			return fmt.Errorf("session state of %q: %w", key.ID, err)
		}
		if out.App, err = readTier(ctx, tx, `SELECT state FROM app_state WHERE app_id = ?`, key.App); err != nil {
			return fmt.Errorf("app state: %w", err)
		}
		if out.User, err = readTier(ctx, tx, `SELECT state FROM user_state WHERE app_id = ? AND user_id = ?`,
			key.App, key.User); err != nil {
			return fmt.Errorf("user state: %w", err)
		}
		return nil
	})
	return out, err
}
