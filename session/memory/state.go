package memory

import (
	"context"
	"slices"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

// State returns copies of the session's three state tiers.
func (s *Store) State(ctx context.Context, key session.Key) (session.State, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return session.State{}, err
	}
	rec, err := s.lookup(key)
	if err != nil {
		return session.State{}, err
	}
	return session.State{
		App:     core.CopyMap(s.apps[key.App]),
		User:    core.CopyMap(s.users[appUser{key.App, key.User}]),
		Session: core.CopyMap(rec.state),
	}, nil
}

// NewSessionState returns copies of the app's and the user's state tiers, with the empty
// session tier of a session not created yet.
func (s *Store) NewSessionState(ctx context.Context, app, user string) (session.State, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return session.State{}, err
	}
	if err := core.ValidOwner(app, user); err != nil {
		return session.State{}, err
	}
	return session.State{
		App:     core.CopyMap(s.apps[app]),
		User:    core.CopyMap(s.users[appUser{app, user}]),
		Session: map[string]any{},
	}, nil
}

// Checkpoints returns copies of the session's saved runner checkpoints.
func (s *Store) Checkpoints(ctx context.Context, key session.Key) ([]session.Checkpoint, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	rec, err := s.lookup(key)
	if err != nil {
		return nil, err
	}
	out := rec.checkpoints.List()
	for i := range out {
		out[i].Data = slices.Clone(out[i].Data)
		for j := range out[i].Writes {
			out[i].Writes[j].Data = slices.Clone(out[i].Writes[j].Data)
		}
	}
	return out, nil
}
