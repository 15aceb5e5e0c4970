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

// State returns the session's three state tiers, read by one statement (one snapshot).
func (s *Store) State(ctx context.Context, key session.Key) (session.State, error) {
	if err := core.ValidKey(key); err != nil {
		return session.State{}, err
	}
	if err := s.settle(ctx, key); err != nil {
		return session.State{}, err
	}
	var sess, app, user []byte
	err := s.pool.QueryRow(ctx, stateSelect+`s.app_id = $1 AND s.user_id = $2 AND s.id = $3`,
		esc(key.App), esc(key.User), esc(key.ID)).Scan(&sess, &app, &user)
	if errors.Is(err, pgx.ErrNoRows) {
		return session.State{}, fmt.Errorf("session %q: %w", key.ID, session.ErrNotFound)
	}
	if err != nil {
		return session.State{}, fmt.Errorf("session state of %q: %w", key.ID, err)
	}
	return decodeState(key, sess, app, user)
}

// NewSessionState returns the app's and the user's state tiers, with the empty session
// tier of a session not created yet, from one snapshot.
func (s *Store) NewSessionState(ctx context.Context, app, user string) (session.State, error) {
	if err := core.ValidOwner(app, user); err != nil {
		return session.State{}, err
	}
	var a, u []byte
	err := s.pool.QueryRow(ctx, `SELECT coalesce((SELECT state FROM app_state WHERE app_id = $1), '{}'),
		coalesce((SELECT state FROM user_state WHERE app_id = $1 AND user_id = $2), '{}')`,
		esc(app), esc(user)).Scan(&a, &u)
	if err != nil {
		return session.State{}, fmt.Errorf("state of %q/%q: %w", app, user, err)
	}
	return decodeState(session.Key{App: app, User: user}, []byte("{}"), a, u)
}

// stateSelect reads a session row's state and its app's ($1) and user's ($2) tiers, in one
// statement (one snapshot); the caller appends the condition that picks the row.
const stateSelect = `SELECT s.state,
		coalesce((SELECT state FROM app_state WHERE app_id = $1), '{}'),
		coalesce((SELECT state FROM user_state WHERE app_id = $1 AND user_id = $2), '{}')
	FROM sessions s WHERE `

// stateOfRow reads the three tiers of the session row pk ($3).
const stateOfRow = stateSelect + `s.pk = $3`

func decodeState(key session.Key, sess, app, user []byte) (session.State, error) {
	var out session.State
	for _, t := range []struct {
		raw []byte
		dst *map[string]any
	}{{sess, &out.Session}, {app, &out.App}, {user, &out.User}} {
		if err := json.Unmarshal(t.raw, t.dst); err != nil {
			return session.State{}, fmt.Errorf("session state of %q: stored state is corrupt: %w", key.ID, err)
		}
		if *t.dst == nil {
			*t.dst = map[string]any{}
		}
	}
	return out, nil
}
