package adkweb

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/caller"
	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// scope resolves the app and user of a sessions route.
func (h *Handler) scope(c *gin.Context) (app, user string, aerr *httpError) {
	agent, err := h.rt.ResolveAgent(c.Param("app"))
	if err != nil || c.Param("app") == "" {
		return "", "", appNotFound(c.Param("app"))
	}
	user = c.Param("user")
	if err := host.ValidateID(user); err != nil {
		return "", "", detail(http.StatusBadRequest, "invalid user id: %v", err)
	}
	if !callerIs(c, user) {
		if id := c.Param("session"); id != "" {
			return "", "", sessionNotFound(id)
		}
		return "", "", detail(http.StatusNotFound, "Not Found")
	}
	return agent.Name, user, nil
}

// callerIs reports whether user, named by the path or body, may be acted for: by the
// operator always (ADK's own model: the path names the user), by a caller bound to one
// user (a tokens-file key, the trusted user header) only for that user. Another user's
// resources are not found, not forbidden, so that their ids are not confirmed.
func callerIs(c *gin.Context, user string) bool {
	return caller.From(c.Request.Context()).May(user)
}

// sessionKey resolves a session route's key. An id that cannot exist is not found.
func (h *Handler) sessionKey(c *gin.Context) (session.Key, *httpError) {
	app, user, aerr := h.scope(c)
	if aerr != nil {
		return session.Key{}, aerr
	}
	key := session.Key{App: app, User: user, ID: c.Param("session")}
	if host.ValidateID(key.ID) != nil {
		return key, sessionNotFound(key.ID)
	}
	return key, nil
}

// listSessions serves GET .../sessions: the user's sessions of the app, newest first,
// with their state and without events (as ADK lists them).
func (h *Handler) listSessions(c *gin.Context) *httpError {
	app, user, aerr := h.scope(c)
	if aerr != nil {
		return aerr
	}
	ctx := c.Request.Context()
	sessions, _, err := h.rt.ListSessions(ctx, app, user, session.ListQuery{})
	if err != nil {
		return fromHostError(h.log, "list sessions", err)
	}
	out := make([]Session, 0, len(sessions))
	for _, s := range sessions {
		st, err := h.rt.State(ctx, s.Key)
		if errors.Is(err, host.ErrNotFound) {
			continue // deleted while listing
		}
		if err != nil {
			return fromHostError(h.log, "session state", err)
		}
		out = append(out, sessionJSON(s, st, nil))
	}
	httpx.WriteJSON(c, http.StatusOK, out)
	return nil
}

// createSession serves POST .../sessions with an optional body {sessionId, state,
// events}. Initial events cannot be written outside a run, so a non-empty events list
// is rejected.
func (h *Handler) createSession(c *gin.Context) *httpError {
	app, user, aerr := h.scope(c)
	if aerr != nil {
		return aerr
	}
	body, aerr := h.readJSON(c)
	if aerr != nil {
		return aerr
	}
	id, state, raw, aerr := parseCreateSession(body)
	if aerr != nil {
		return aerr
	}
	events, aerr := importEvents(raw, app)
	if aerr != nil {
		return aerr
	}
	return h.create(c, session.Key{App: app, User: user, ID: id}, state, events...)
}

// createSessionWithID serves ADK's deprecated POST .../sessions/{id}, whose body is
// the initial state.
func (h *Handler) createSessionWithID(c *gin.Context) *httpError {
	app, user, aerr := h.scope(c)
	if aerr != nil {
		return aerr
	}
	body, aerr := h.readJSON(c)
	if aerr != nil {
		return aerr
	}
	state, aerr := parseState(body)
	if aerr != nil {
		return aerr
	}
	return h.create(c, session.Key{App: app, User: user, ID: c.Param("session")}, state)
}

// create makes the session, then writes its initial state as a state delta outside any
// run (hidden from its events, as ADK's initial state is). If that write fails the
// session is removed again. Imported events (a session exported from ADK's dev UI)
// follow it, in one write.
func (h *Handler) create(c *gin.Context, key session.Key, state []byte, imported ...session.NewEvent) *httpError {
	if aerr := appStateWrite(c, state); aerr != nil {
		return aerr
	}
	for _, e := range imported {
		if e.StateDelta == nil {
			continue
		}
		if aerr := appStateWrite(c, e.StateDelta); aerr != nil {
			return aerr
		}
	}
	ctx := c.Request.Context()
	if key.ID != "" {
		if _, err := h.rt.Session(ctx, key); err == nil {
			return detail(http.StatusConflict, "Session already exists: %s", key.ID)
		}
	}
	sess, err := h.rt.CreateSession(ctx, key)
	if err != nil {
		return fromHostError(h.log, "create session", err)
	}
	if len(state) > 2 { // not {}
		if _, err := h.rt.AppendEvents(ctx, sess.Key, session.NewEvent{Type: session.TypeStateDelta, Author: "user", Data: state, StateDelta: state}); err != nil {
			aerr := fromHostError(h.log, "initial state", err)
			if derr := h.rt.DeleteSession(context.WithoutCancel(ctx), sess.Key); derr != nil {
				h.log.Error("remove session after failed initial state", "session", sess.ID, "error", derr)
			}
			return aerr
		}
	}
	if len(imported) > 0 {
		if _, err := h.rt.ImportEvents(ctx, sess.Key, imported...); err != nil {
			aerr := fromHostError(h.log, "import events", err)
			if derr := h.rt.DeleteSession(context.WithoutCancel(ctx), sess.Key); derr != nil {
				h.log.Error("remove session after a failed import", "session", sess.ID, "error", derr)
			}
			return aerr
		}
	}
	// An imported session is answered with its events, as ADK answers (the dev UI shows them).
	return h.respondSession(c, sess.Key, len(imported) > 0)
}

// getSession serves GET .../sessions/{id} with its events.
func (h *Handler) getSession(c *gin.Context) *httpError {
	key, aerr := h.sessionKey(c)
	if aerr != nil {
		return aerr
	}
	return h.respondSession(c, key, true)
}

// patchSession serves PATCH .../sessions/{id} {stateDelta}: a user-authored state
// change outside any run, recorded under a "p-" invocation as ADK does.
func (h *Handler) patchSession(c *gin.Context) *httpError {
	key, aerr := h.sessionKey(c)
	if aerr != nil {
		return aerr
	}
	body, aerr := h.readJSON(c)
	if aerr != nil {
		return aerr
	}
	delta, aerr := parsePatch(body)
	if aerr == nil {
		aerr = appStateWrite(c, delta)
	}
	if aerr != nil {
		return aerr
	}
	_, err := h.rt.AppendEvents(c.Request.Context(), key, session.NewEvent{InvocationID: "p-" + host.NewID(""),
		Type: session.TypeStateDelta, Author: "user", Data: delta, StateDelta: delta})
	if err != nil {
		return h.sessionError("patch session", key, err)
	}
	return h.respondSession(c, key, true)
}

// deleteSession serves DELETE .../sessions/{id}; ADK answers null.
func (h *Handler) deleteSession(c *gin.Context) *httpError {
	key, aerr := h.sessionKey(c)
	if aerr != nil {
		return aerr
	}
	if err := h.rt.DeleteSession(c.Request.Context(), key); err != nil {
		return h.sessionError("delete session", key, err)
	}
	c.Data(http.StatusOK, "application/json", []byte("null"))
	return nil
}

// sessionError maps a host error about the session key; not found is ADK's answer for
// a session that does not exist (sessionNotFound).
func (h *Handler) sessionError(op string, key session.Key, err error) *httpError {
	aerr := fromHostError(h.log, op, err)
	if aerr.Status == http.StatusNotFound {
		aerr = sessionNotFound(key.ID)
	}
	return aerr
}

// respondSession writes a session as ADK's Session JSON.
func (h *Handler) respondSession(c *gin.Context, key session.Key, withEvents bool) *httpError {
	ctx := c.Request.Context()
	sess, err := h.rt.Session(ctx, key)
	if err != nil {
		return h.sessionError("load session", key, err)
	}
	st, err := h.rt.State(ctx, key)
	if err != nil {
		return h.sessionError("session state", key, err)
	}
	var evs []session.Event
	if withEvents {
		if evs, err = h.rt.Events(ctx, key, session.EventQuery{}); err != nil {
			return h.sessionError("session events", key, err)
		}
	}
	httpx.WriteJSON(c, http.StatusOK, sessionJSON(sess, st, evs))
	return nil
}

// sessionJSON projects a session: its state as ADK merges the tiers (app: and user:
// keys prefixed) and its stored events as ADK events.
func sessionJSON(s session.Session, st session.State, evs []session.Event) Session {
	out := Session{ID: s.ID, AppName: s.App, UserID: s.User, State: map[string]any{}, Events: []Event{}, LastUpdateTime: seconds(s.UpdatedAt)}
	for k, v := range st.App {
		out.State[session.TierAppPrefix+k] = v
	}
	for k, v := range st.User {
		out.State[session.TierUserPrefix+k] = v
	}
	for k, v := range st.Session {
		out.State[k] = v
	}
	opts := encodeOptions{UserEvents: true}
	for i := range evs {
		if m := storedMeta(&evs[i]); m != nil && m.NodeInfo != nil {
			opts.NodeInfo = true // events before the first that has one get it too
			break
		}
	}
	enc := newEncoder(s.App, "", opts)
	for i := range evs {
		out.Events = append(out.Events, enc.Add(host.Event{Index: i, Kind: host.KindStored, Stored: &evs[i]})...)
	}
	out.Events = append(out.Events, enc.Flush()...)
	return out
}

// appStateWrite refuses app: keys in a state change from a caller bound to one user
// (its API key, the trusted user header): app: state is shared by every user of the agent, so only the agent (its
// runs' state deltas) or the operator (the shared token) may write it.
func appStateWrite(c *gin.Context, delta []byte) *httpError {
	if !caller.From(c.Request.Context()).Bound || len(delta) <= 2 {
		return nil
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(delta, &keys) != nil {
		return nil // validated by the parsers
	}
	for k := range keys {
		if strings.HasPrefix(k, session.TierAppPrefix) {
			return detail(http.StatusForbidden, "%s is app state, shared by every user of the agent: only the agent or the operator can write it", k)
		}
	}
	return nil
}
