package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/internal/core"
)

// StartRun records an in-progress run and appends its opening events atomically.
func (s *Store) StartRun(ctx context.Context, run session.Run, events ...session.NewEvent) ([]session.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	run, err := core.NewRun(run)
	if err != nil {
		return nil, err
	}
	ps, err := core.Prepare(events, run.InvocationID)
	if err != nil {
		return nil, err
	}
	evs, err := s.startRun(ctx, run, ps)
	if err != nil {
		return nil, err
	}
	return core.CopyEvents(make([]session.Event, 0, len(evs)), evs), nil
}

func (s *Store) startRun(ctx context.Context, run session.Run, ps []core.Pending) ([]session.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	if err := core.ValidKey(run.Key); err != nil {
		return nil, err
	}
	// Not lookup: a missing session is the usual case here (a new conversation), not an
	// error to format.
	rec, found := s.sessions[run.Key]
	whole := core.Whole(run)
	if found && whole {
		return nil, fmt.Errorf("session %q of a run recorded whole: %w", run.Key.ID, session.ErrExists)
	}
	if found {
		if rec.active != "" {
			return nil, fmt.Errorf("start run %q: %w (%q)", run.InvocationID, session.ErrRunActive, rec.active)
		}
		if _, ok := rec.runs.get(run.InvocationID); ok {
			return nil, fmt.Errorf("run %q: %w", run.InvocationID, session.ErrExists)
		}
	} else if !run.CreateSession {
		return nil, fmt.Errorf("session %q: %w", run.Key.ID, session.ErrNotFound)
	}
	if _, ok := s.responses[run.ResponseID]; ok && run.ResponseID != "" {
		return nil, fmt.Errorf("response %q: %w", run.ResponseID, session.ErrExists)
	}
	created := !found
	if created {
		// Entered in the map only once the write is in: a refused start creates nothing.
		rec = s.newSessionRec(run.Key, run.CreatedAt)
	}
	evs, err := s.appendLocked(rec, ps)
	if err != nil {
		if created {
			s.recs.put(rec)
		}
		return nil, err
	}
	if created {
		s.sessions[rec.row.Key] = rec
	}
	s.addRun(rec, run, whole)
	return evs, nil
}

// addRun records a started run of rec, whose opening events are in; the caller holds mu.
func (s *Store) addRun(rec *sessionRec, run session.Run, whole bool) {
	run.CreateSession = false
	started := rec.row.UpdatedAt
	if !run.CreatedAt.IsZero() {
		started = core.Norm(run.CreatedAt) // it may have started before this write
	}
	run.CreatedAt, run.UpdatedAt = started, rec.row.UpdatedAt
	run.Key = rec.row.Key
	run.InvocationID, run.ResponseID = s.kept.str(run.InvocationID), s.kept.str(run.ResponseID)
	run.Meta = s.kept.bytes(run.Meta)
	r := rec.runs.add(runRec{run: run, order: s.next()})
	if !whole {
		rec.active = r.run.InvocationID
	}
	if r.run.ResponseID != "" {
		s.responses[r.run.ResponseID] = r
	}
	keepActive(rec)
}

// FinishRun sets the run's terminal status and appends its closing events atomically.
func (s *Store) FinishRun(ctx context.Context, key session.Key, invocationID, status string, events ...session.NewEvent) ([]session.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := core.CheckFinish(key, invocationID, status); err != nil {
		return nil, err
	}
	ps, err := core.Prepare(events, invocationID)
	if err != nil {
		return nil, err
	}
	evs, err := s.finishRun(ctx, key, invocationID, status, ps)
	if err != nil {
		return nil, err
	}
	return core.CopyEvents(make([]session.Event, 0, len(evs)), evs), nil
}

func (s *Store) finishRun(ctx context.Context, key session.Key, invocationID, status string, ps []core.Pending) ([]session.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	rec, err := s.lookup(key)
	if err != nil {
		return nil, err
	}
	r, ok := rec.runs.get(invocationID)
	if !ok {
		return nil, fmt.Errorf("run %q: %w", invocationID, session.ErrNotFound)
	}
	if r.run.Status != session.StatusInProgress {
		return nil, fmt.Errorf("%w: run %q is already %s", session.ErrInvalid, invocationID, r.run.Status)
	}
	evs, err := s.appendLocked(rec, ps)
	if err != nil {
		return nil, err
	}
	r.run.Status = core.KnownStatus(status)
	r.run.UpdatedAt = rec.row.UpdatedAt
	rec.active = ""
	return evs, nil
}

// GetRun returns a run of the session by invocation id (deleted responses included).
func (s *Store) GetRun(ctx context.Context, key session.Key, invocationID string) (session.Run, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return session.Run{}, err
	}
	rec, err := s.lookup(key)
	if err != nil {
		return session.Run{}, err
	}
	r, ok := rec.runs.get(invocationID)
	if !ok {
		return session.Run{}, fmt.Errorf("run %q: %w", invocationID, session.ErrNotFound)
	}
	return core.CopyRun(r.run), nil
}

// responseLocked finds a live (not deleted) response of user; the caller holds mu.
func (s *Store) responseLocked(user, responseID string) (*runRec, error) {
	if err := core.ValidResponseLookup(user, responseID); err != nil {
		return nil, err
	}
	r, ok := s.responses[responseID]
	if !ok || r.run.Key.User != user || r.run.Deleted {
		return nil, fmt.Errorf("response %q: %w", responseID, session.ErrNotFound)
	}
	return r, nil
}

// GetRunByResponseID finds the user's run by response id; deleted ones are ErrNotFound.
func (s *Store) GetRunByResponseID(ctx context.Context, user, responseID string) (session.Run, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return session.Run{}, err
	}
	r, err := s.responseLocked(user, responseID)
	if err != nil {
		return session.Run{}, err
	}
	return core.CopyRun(r.run), nil
}

// DeleteRunResponse hides the run from response lookups; a second delete is ErrNotFound.
func (s *Store) DeleteRunResponse(ctx context.Context, user, responseID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return err
	}
	r, err := s.responseLocked(user, responseID)
	if err != nil {
		return err
	}
	r.run.Deleted = true
	r.run.UpdatedAt = s.clock.Now()
	return nil
}

// ActiveRuns lists every in-progress run, oldest first.
func (s *Store) ActiveRuns(ctx context.Context) ([]session.Run, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	var recs []*runRec
	for _, rec := range s.sessions {
		if rec.active != "" {
			r, _ := rec.runs.get(rec.active)
			recs = append(recs, r)
		}
	}
	slices.SortFunc(recs, func(a, b *runRec) int { return cmp.Compare(a.order, b.order) })
	out := make([]session.Run, len(recs))
	for i, r := range recs {
		out[i] = core.CopyRun(r.run)
	}
	return out, nil
}
