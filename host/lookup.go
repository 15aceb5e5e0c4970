package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentengine/agentengine/session"
)

// Session returns a session of the user, for surfaces that resolve ids.
func (rt *Runtime) Session(ctx context.Context, key session.Key) (session.Session, error) {
	s, err := rt.store.GetSession(ctx, key)
	if errors.Is(err, session.ErrNotFound) {
		return s, clientErr(ErrNotFound, "", "session %q not found", key.ID)
	}
	return rt.withHeldEnd(s), err
}

// RunByResponseID finds the run of a response id among the user's runs.
func (rt *Runtime) RunByResponseID(ctx context.Context, user, responseID string) (session.Run, error) {
	r, err := rt.store.GetRunByResponseID(ctx, user, responseID)
	if errors.Is(err, session.ErrNotFound) {
		return r, clientErr(ErrNotFound, "", "response %q not found", responseID)
	}
	return r, err
}

// DeleteResponse hides a response from lookups; the session's events stay.
func (rt *Runtime) DeleteResponse(ctx context.Context, user, responseID string) error {
	err := rt.store.DeleteRunResponse(ctx, user, responseID)
	if errors.Is(err, session.ErrNotFound) {
		return clientErr(ErrNotFound, "", "response %q not found", responseID)
	}
	return err
}

// FindItem resolves an item id (item_reference) among the user's sessions of app.
func (rt *Runtime) FindItem(ctx context.Context, app, user, itemID string) (session.Event, error) {
	e, err := rt.store.FindItem(ctx, app, user, itemID)
	if errors.Is(err, session.ErrNotFound) {
		return e, clientErr(ErrNotFound, "input", "item %q not found", itemID)
	}
	return e, err
}

// Open returns the run of an invocation: the live one if it is still in memory, else one
// rebuilt from the store whose journal holds the stored events only.
func (rt *Runtime) Open(ctx context.Context, key session.Key, invocationID string) (*Run, error) {
	rt.mu.Lock()
	r, ok := rt.runs[runKey{key, invocationID}]
	rt.mu.Unlock()
	if ok {
		return r, nil
	}
	if rt.cluster != nil {
		if r, ok, err := rt.follow(ctx, key, invocationID); ok || err != nil {
			return r, err
		}
	}
	rec, err := rt.store.GetRun(ctx, key, invocationID)
	if errors.Is(err, session.ErrNotFound) {
		return nil, clientErr(ErrNotFound, "", "run %q not found", invocationID)
	}
	if err != nil {
		return nil, fmt.Errorf("load run: %w", err)
	}
	evs, err := rt.store.Events(ctx, key, session.EventQuery{InvocationID: invocationID})
	if err != nil {
		return nil, fmt.Errorf("load run events: %w", err)
	}
	r = &Run{Key: key, InvocationID: invocationID, ResponseID: rec.ResponseID, Agent: key.App,
		CreatedAt: rec.CreatedAt, Meta: rec.Meta, status: rec.Status, j: newJournal(), done: make(chan struct{})}
	for i := range evs {
		r.j.Add(Event{Kind: KindStored, Stored: &evs[i]})
	}
	r.j.Close()
	close(r.done)
	return r, nil
}

// Cancel stops a live run; it ends with run_status=cancelled.
func (rt *Runtime) Cancel(ctx context.Context, key session.Key, invocationID string) error {
	rt.mu.Lock()
	r, ok := rt.runs[runKey{key, invocationID}]
	rt.mu.Unlock()
	if ok && r.cancel != nil {
		select {
		case <-r.done:
		default:
			r.cancel(errCancelled)
			return nil
		}
	}
	if rt.cluster != nil {
		// Executed by another replica: the request goes to it.
		sent, err := rt.cluster.RequestCancel(ctx, key, invocationID)
		if err != nil {
			return fmt.Errorf("cancel run: %w", err)
		}
		if sent {
			return nil
		}
	}
	rec, err := rt.store.GetRun(ctx, key, invocationID)
	if errors.Is(err, session.ErrNotFound) {
		return clientErr(ErrNotFound, "", "run %q not found", invocationID)
	}
	if err != nil {
		return fmt.Errorf("load run: %w", err)
	}
	if rec.Status == session.StatusInProgress {
		// Recorded in progress, executed by no one (its end was lost): cancelling ends it.
		if err := rt.endStuckRun(ctx, key, invocationID); err != nil {
			return fmt.Errorf("end stuck run: %w", err)
		}
		return nil
	}
	return clientErr(ErrRunNotActive, "", "run %q is not in progress (status %s)", invocationID, rec.Status)
}
