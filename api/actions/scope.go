package actions

import (
	"context"
	"errors"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/caller"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// scoped is the scope fields most actions share.
type scoped struct {
	AgentID string `json:"AgentId"`
	UserID  string `json:"UserId"`
}

// agent resolves AgentId; empty means the only hosted agent.
func (s *Surface) agent(id string) (host.AgentInfo, *actionError) {
	if e := checkID("AgentId", id); e != nil {
		return host.AgentInfo{}, e
	}
	a, err := s.rt.ResolveAgent(id)
	if err == nil {
		return a, nil
	}
	names := s.agentNames()
	if id == "" {
		return a, &actionError{Status: 400, Code: CodeMissingParameter, Message: "AgentId is required: this server hosts " + names}
	}
	return a, notFound("agent %q is not hosted here; agents: %s", id, names)
}

func (s *Surface) agentNames() string {
	var names []string
	for _, a := range s.rt.Agents() {
		names = append(names, a.Name)
	}
	return strings.Join(names, ", ")
}

// user resolves the tenant: the caller the router identified (api/internal/caller); a
// bound caller's UserId is ignored, an operator's names the tenant (else the default user).
func (s *Surface) user(c *gin.Context, fromBody string) (string, *actionError) {
	if e := checkID("UserId", fromBody); e != nil {
		return "", e
	}
	return caller.From(c.Request.Context()).Resolve(s.rt.DefaultUser(), fromBody), nil
}

// owner resolves the agent and user of a request.
func (s *Surface) owner(c *gin.Context, sc scoped) (app, user string, e *actionError) {
	a, e := s.agent(sc.AgentID)
	if e != nil {
		return "", "", e
	}
	if user, e = s.user(c, sc.UserID); e != nil {
		return "", "", e
	}
	return a.Name, user, nil
}

// sessionKey resolves the key of a required SessionId.
func (s *Surface) sessionKey(c *gin.Context, sc scoped, sessionID string) (session.Key, *actionError) {
	if e := requireID("SessionId", sessionID); e != nil {
		return session.Key{}, e
	}
	app, user, e := s.sessionOwner(c, sc, sessionID)
	if e != nil {
		return session.Key{}, e
	}
	return s.ownKey(c.Request.Context(), session.Key{App: app, User: user, ID: sessionID}), nil
}

// sessionOwner is owner, except that a request naming a session but no agent, while
// several agents are hosted, goes to the agent whose session it is: ksadk-web restores
// the session it showed before a reload with ListSessionMessages carrying no AgentId
// (KsADK hosts one agent). Without such a session AgentId stays required.
func (s *Surface) sessionOwner(c *gin.Context, sc scoped, sessionID string) (app, user string, e *actionError) {
	if sc.AgentID == "" && sessionID != "" && len(s.rt.Agents()) > 1 && checkID("SessionId", sessionID) == nil {
		if user, e = s.user(c, sc.UserID); e != nil {
			return "", "", e
		}
		if key, ok := s.findSession(c.Request.Context(), session.Key{User: user, ID: sessionID}); ok {
			return key.App, user, nil
		}
	}
	return s.owner(c, sc)
}

// findSession looks key's session up among the hosted agents (key.App is skipped), in
// command-line order.
func (s *Surface) findSession(ctx context.Context, key session.Key) (session.Key, bool) {
	for _, a := range s.rt.Agents() {
		if a.Name == key.App {
			continue
		}
		other := session.Key{App: a.Name, User: key.User, ID: key.ID}
		if _, err := s.rt.Session(ctx, other); err == nil {
			return other, true
		}
	}
	return key, false
}

// ownKey is key with the agent that owns the session. A UI that knows one agent
// (ksadk-web names its bootstrap agent in every action) reaches another through
// RunAgent's Model, which starts the session with that agent; the session's later
// actions still name the first. So with several agents, a session the named agent does
// not have is looked up among the caller's sessions of the others.
func (s *Surface) ownKey(ctx context.Context, key session.Key) session.Key {
	agents := s.rt.Agents()
	if len(agents) < 2 {
		return key
	}
	if _, err := s.rt.Session(ctx, key); !errors.Is(err, host.ErrNotFound) {
		return key
	}
	other, _ := s.findSession(ctx, key)
	return other
}

// routedAgent is the hosted agent RunAgent's Model names, if it names one: ksadk-web's
// model picker lists the hosted agents (ListAgentModels) and sends the pick as Model.
func (s *Surface) routedAgent(model string) (string, bool) {
	if model == "" || checkID("Model", model) != nil {
		return "", false
	}
	for _, a := range s.rt.Agents() {
		if a.Name == model {
			return a.Name, true
		}
	}
	return "", false
}

// rehome moves a blank session of key.App (no event, no session state: ksadk-web creates
// its session with CreateSession for the bootstrap agent before the first RunAgent, whose
// Model may pick another agent) to agent, keeping its id. A session with history stays
// its agent's: talking to another agent takes a new session. A session that is not there
// is left alone (the run creates it).
func (s *Surface) rehome(ctx context.Context, key session.Key, agent string) *actionError {
	sess, err := s.rt.Session(ctx, key)
	if errors.Is(err, host.ErrNotFound) {
		return nil
	}
	if err != nil {
		return s.fromHost("RunAgent", err)
	}
	taken := invalid("session %q belongs to agent %q; start a new session to talk to %q", key.ID, key.App, agent)
	if sess.LastSeq > 0 || sess.ActiveInvocationID != "" {
		return taken
	}
	st, err := s.rt.State(ctx, key)
	if err != nil {
		return s.fromHost("RunAgent", err)
	}
	if len(st.Session) > 0 {
		return taken
	}
	if _, err := s.rt.CreateSession(ctx, session.Key{App: agent, User: key.User, ID: key.ID}); err != nil {
		return s.fromHost("RunAgent", err)
	}
	if err := s.rt.DeleteSession(ctx, key); err != nil && !errors.Is(err, host.ErrNotFound) {
		return s.fromHost("RunAgent", err)
	}
	return nil
}

// existing loads the caller's session; another user's is as absent as an unknown one.
func (s *Surface) existing(ctx context.Context, action string, key session.Key) (session.Session, *actionError) {
	sess, err := s.rt.Session(ctx, key)
	if err != nil {
		return sess, s.fromHost(action, err)
	}
	return sess, nil
}
