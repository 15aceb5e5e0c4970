package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

// applyDeltas folds the events' tier deltas into app, user and session state, reading
// and writing each touched tier once per request. The session tier lives in the cached
// row: it is encoded here (so a bad state fails this request) and written by flush.
func (t *wtx) applyDeltas(c *crow, ps []core.Pending) error {
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
	k := c.sess.Key
	st := t.w.st
	if len(app) > 0 {
		if err := updateTier(app, st.appState, st.upsertApp, k.App); err != nil {
			return fmt.Errorf("app state: %w", err)
		}
	}
	if len(user) > 0 {
		if err := updateTier(user, st.userState, st.upsertUser, k.App, k.User); err != nil {
			return fmt.Errorf("user state: %w", err)
		}
	}
	if len(sess) == 0 {
		return nil
	}
	cur, err := t.sessionState(c)
	if err != nil {
		return fmt.Errorf("session state: %w", err)
	}
	// A new map, not cur changed in place: the undo log's copy of the row still holds
	// cur if this request fails. ApplyDelta only sets top-level keys.
	state := maps.Clone(cur)
	for _, d := range sess {
		state = session.ApplyDelta(state, d)
	}
	b, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("%w: session state: %w", session.ErrInvalid, err)
	}
	js := string(b)
	c.state, c.stateJSON = state, &js
	return nil
}

func updateTier(deltas []map[string]any, sel, upsert *sql.Stmt, key ...any) error {
	state, err := readTier(sel.QueryRow(key...))
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
	_, err = upsert.Exec(append(key, string(b))...)
	return err
}

// readTier decodes one tier's JSON; a missing row is an empty tier.
func readTier(row *sql.Row) (map[string]any, error) {
	var raw string
	err := row.Scan(&raw)
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
	if err := s.wr.settle(ctx, &key); err != nil {
		return session.State{}, err
	}
	var (
		out       session.State
		sess      string
		app, user sql.NullString
	)
	err := s.st.rState.QueryRowContext(ctx, key.App, key.User, key.ID).Scan(&sess, &app, &user)
	if errors.Is(err, sql.ErrNoRows) {
		return out, fmt.Errorf("session %q: %w", key.ID, session.ErrNotFound)
	}
	if err != nil {
		return out, fmt.Errorf("session state of %q: %w", key.ID, err)
	}
	if out.Session, err = decodeTier(sess); err != nil {
		return out, fmt.Errorf("session state of %q: %w", key.ID, err)
	}
	if out.App, err = nullTier(app); err != nil {
		return out, fmt.Errorf("app state: %w", err)
	}
	if out.User, err = nullTier(user); err != nil {
		return out, fmt.Errorf("user state: %w", err)
	}
	return out, nil
}

// NewSessionState returns the app's and the user's state tiers, with the empty session
// tier of a session not created yet, from one snapshot.
func (s *Store) NewSessionState(ctx context.Context, app, user string) (session.State, error) {
	if err := core.ValidOwner(app, user); err != nil {
		return session.State{}, err
	}
	var a, u sql.NullString
	if err := s.st.rTiers.QueryRowContext(ctx, app, user).Scan(&a, &u); err != nil {
		return session.State{}, fmt.Errorf("state of %q/%q: %w", app, user, err)
	}
	out := session.State{Session: map[string]any{}}
	var err error
	if out.App, err = nullTier(a); err != nil {
		return out, fmt.Errorf("app state: %w", err)
	}
	if out.User, err = nullTier(u); err != nil {
		return out, fmt.Errorf("user state: %w", err)
	}
	return out, nil
}

// nullTier decodes a tier that may not exist (NULL): then it is empty.
func nullTier(raw sql.NullString) (map[string]any, error) {
	if !raw.Valid {
		return map[string]any{}, nil
	}
	return decodeTier(raw.String)
}
