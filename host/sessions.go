package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentengine/agentengine/session"
)

// Session management for surfaces that expose sessions directly (the Web UI actions,
// ADK-web's /apps/{app}/users/{user}/sessions). Every method is scoped by app and user:
// another user's session does not exist for the caller.

func (rt *Runtime) knownApp(app string) error {
	if _, ok := rt.agents[app]; !ok {
		_, err := rt.agent(app)
		return err
	}
	return nil
}

func notFound(key session.Key, err error) error {
	if errors.Is(err, session.ErrNotFound) {
		return clientErr(ErrNotFound, "", "session %q not found", key.ID)
	}
	return err
}

// CreateSession creates a session, with a generated id when key.ID is empty. An id that
// is taken is an ErrInvalidInput ClientError.
func (rt *Runtime) CreateSession(ctx context.Context, key session.Key) (session.Session, error) {
	if err := rt.knownApp(key.App); err != nil {
		return session.Session{}, err
	}
	if key.User == "" {
		key.User = rt.defUser
	}
	if key.ID == "" {
		key.ID = newID("sess_")
	} else if err := ValidateID(key.ID); err != nil {
		return session.Session{}, clientErr(ErrInvalidInput, "session_id", "invalid session id: %v", err)
	}
	s, err := rt.store.CreateSession(ctx, key)
	if errors.Is(err, session.ErrExists) {
		return s, clientErr(ErrInvalidInput, "session_id", "session %q already exists", key.ID)
	}
	if err != nil {
		return s, fmt.Errorf("create session: %w", err)
	}
	return s, nil
}

// ListSessions pages through a user's sessions of an app, newest first, with the total.
func (rt *Runtime) ListSessions(ctx context.Context, app, user string, q session.ListQuery) ([]session.Session, int, error) {
	if err := rt.knownApp(app); err != nil {
		return nil, 0, err
	}
	if user == "" {
		user = rt.defUser
	}
	return rt.store.ListSessions(ctx, app, user, q)
}

// RenameSession sets a session's title.
func (rt *Runtime) RenameSession(ctx context.Context, key session.Key, title string) (session.Session, error) {
	s, err := rt.store.RenameSession(ctx, key, title)
	if errors.Is(err, session.ErrInvalid) {
		return s, clientErr(ErrInvalidInput, "title", "invalid title: titles are at most 512 characters")
	}
	return s, notFound(key, err)
}

// DeleteSession cancels the session's live run, if any, then deletes the session with
// its events.
func (rt *Runtime) DeleteSession(ctx context.Context, key session.Key) error {
	sess, err := rt.store.GetSession(ctx, key)
	if err != nil {
		return notFound(key, err)
	}
	if sess.ActiveRunStatus == session.StatusInProgress && sess.ActiveInvocationID != "" {
		rt.mu.Lock()
		r, ok := rt.runs[runKey{key, sess.ActiveInvocationID}]
		rt.mu.Unlock()
		if ok && r.cancel != nil {
			r.cancel(errCancelled)
			select {
			case <-r.done:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return notFound(key, rt.store.DeleteSession(ctx, key))
}

// Events reads a session's stored events.
func (rt *Runtime) Events(ctx context.Context, key session.Key, q session.EventQuery) ([]session.Event, error) {
	if _, err := rt.store.GetSession(ctx, key); err != nil {
		return nil, notFound(key, err)
	}
	evs, err := rt.store.Events(ctx, key, q)
	return evs, notFound(key, err)
}

// State returns a session's state tiers.
func (rt *Runtime) State(ctx context.Context, key session.Key) (session.State, error) {
	if _, err := rt.store.GetSession(ctx, key); err != nil {
		return session.State{}, notFound(key, err)
	}
	return rt.store.State(ctx, key)
}

// Checkpoints returns the framework checkpoints the host keeps for a session (the
// latest of each thread and namespace, saved when a run ends), for surfaces that list
// them.
func (rt *Runtime) Checkpoints(ctx context.Context, key session.Key) ([]session.Checkpoint, error) {
	if _, err := rt.store.GetSession(ctx, key); err != nil {
		return nil, notFound(key, err)
	}
	return rt.store.Checkpoints(ctx, key)
}

// AppendEvents records events that are not part of a run (feedback, for instance) in a
// session. Run events are appended by the runtime only.
func (rt *Runtime) AppendEvents(ctx context.Context, key session.Key, evs ...session.NewEvent) ([]session.Event, error) {
	for _, e := range evs {
		switch e.Type {
		case session.TypeFeedback, session.TypeStateDelta, session.TypeAttachmentRef:
		default:
			return nil, clientErr(ErrInvalidInput, "", "events of type %q are written by runs only", e.Type)
		}
	}
	if hasStateDelta(evs) {
		defer rt.stateLocks.lock(key.App)()
		if _, err := rt.store.GetSession(ctx, key); err != nil {
			return nil, notFound(key, err)
		}
		if err := rt.checkStateBudget(ctx, key, false, evs); err != nil {
			return nil, err
		}
	}
	out, err := rt.store.Append(ctx, key, evs...)
	if errors.Is(err, session.ErrInvalid) {
		return nil, clientErr(ErrInvalidInput, "", "invalid event: %v", err)
	}
	return out, notFound(key, err)
}

// ImportEvents writes a conversation recorded elsewhere (a session exported from Google
// ADK's dev UI) into a session: its messages, reasoning, tool calls and results and
// state deltas, as if runs had written them, so that the next turn continues it. It is
// meant for a session just created for the import; no run may be in progress in it.
func (rt *Runtime) ImportEvents(ctx context.Context, key session.Key, evs ...session.NewEvent) ([]session.Event, error) {
	for _, e := range evs {
		switch e.Type {
		case session.TypeUserMessage, session.TypeAssistantMessage, session.TypeReasoning, session.TypeToolCall,
			session.TypeToolResult, session.TypeStateDelta:
		default:
			return nil, clientErr(ErrInvalidInput, "", "events of type %q cannot be imported", e.Type)
		}
		if e.InvocationID == "" {
			return nil, clientErr(ErrInvalidInput, "", "an imported event needs an invocation id")
		}
	}
	rt.mu.Lock()
	for rk, r := range rt.runs {
		if rk.session != key {
			continue
		}
		select {
		case <-r.Done():
		default:
			rt.mu.Unlock()
			return nil, clientErr(ErrRunActive, "", "a run is in progress in session %s", key.ID)
		}
	}
	rt.mu.Unlock()
	out, err := rt.store.Append(ctx, key, evs...)
	if errors.Is(err, session.ErrInvalid) {
		return nil, clientErr(ErrInvalidInput, "", "invalid event: %v", err)
	}
	return out, notFound(key, err)
}

// LiveRun returns the in-memory run of an invocation if it is still there (live or
// recently finished); surfaces that follow runs use Open otherwise.
func (rt *Runtime) LiveRun(key session.Key, invocationID string) (*Run, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	r, ok := rt.runs[runKey{key, invocationID}]
	return r, ok
}

// AppendItems records conversation items written outside any run (OpenAI's
// Conversations API adds messages and tool calls to a conversation between turns, sets
// its metadata and deletes items): transcript events, which later turns see as history,
// conversation_metadata and item_deleted events.
func (rt *Runtime) AppendItems(ctx context.Context, key session.Key, evs ...session.NewEvent) ([]session.Event, error) {
	for _, e := range evs {
		switch e.Type {
		case session.TypeUserMessage, session.TypeAssistantMessage, session.TypeToolCall, session.TypeToolResult,
			session.TypeConversationItem, session.TypeConversationMetadata, session.TypeItemDeleted:
		default:
			return nil, clientErr(ErrInvalidInput, "", "events of type %q cannot be added as conversation items", e.Type)
		}
		if e.InvocationID != "" {
			return nil, clientErr(ErrInvalidInput, "", "conversation items belong to no run")
		}
	}
	out, err := rt.store.Append(ctx, key, evs...)
	if errors.Is(err, session.ErrInvalid) {
		return nil, clientErr(ErrInvalidInput, "", "invalid item: %v", err)
	}
	return out, notFound(key, err)
}
