package actions

import (
	"context"
	"errors"
	"sort"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

type sessionRequest struct {
	scoped
	SessionID string `json:"SessionId"`
}

type sessionData struct {
	Session sessionPayload `json:"Session"`
}

// createSession serves CreateSession. A given SessionId that the caller already owns
// is returned as is (KsADK's "ensure" semantics, so retries are harmless).
func (s *Surface) createSession(ctx context.Context, c *gin.Context, req *sessionRequest) (any, *actionError) {
	if e := checkID("SessionId", req.SessionID); e != nil {
		return nil, e
	}
	app, user, e := s.owner(c, req.scoped)
	if e != nil {
		return nil, e
	}
	key := session.Key{App: app, User: user, ID: req.SessionID}
	for attempt := 0; ; attempt++ {
		if key.ID != "" {
			sess, err := s.rt.Session(ctx, key)
			if err == nil {
				return sessionData{sessionOf(sess)}, nil
			}
			if !errors.Is(err, host.ErrNotFound) {
				return nil, s.fromHost("CreateSession", err)
			}
		}
		sess, err := s.rt.CreateSession(ctx, key)
		if err == nil {
			return sessionData{sessionOf(sess)}, nil
		}
		// A concurrent create of the same id won: read what it made.
		if attempt > 0 || key.ID == "" || !errors.Is(err, host.ErrInvalidInput) {
			return nil, s.fromHost("CreateSession", err)
		}
	}
}

type listSessionsRequest struct {
	scoped
	Page     *int `json:"Page"`
	PageSize *int `json:"PageSize"`
	// AgentOnly lists AgentId's sessions only; by default, with several agents hosted,
	// the caller's sessions of every agent are listed (see listSessions).
	AgentOnly bool `json:"AgentOnly"`
}

type listSessionsData struct {
	Sessions               []sessionPayload `json:"Sessions"`
	Total                  int              `json:"Total"`
	Page                   int              `json:"Page"`
	PageSize               int              `json:"PageSize"`
	DataSource             string           `json:"DataSource"`
	Degraded               bool             `json:"Degraded"`
	SessionContractVersion int              `json:"SessionContractVersion"`
}

// listSessions serves ListSessions, most recently updated first, from the store's
// summary rows: no event log is read.
func (s *Surface) listSessions(ctx context.Context, c *gin.Context, req *listSessionsRequest) (any, *actionError) {
	if req.AgentID == "" {
		return nil, missing("AgentId")
	}
	if e := checkRange("Page", req.Page, 1, 1<<20); e != nil {
		return nil, e
	}
	if e := checkRange("PageSize", req.PageSize, 1, 200); e != nil {
		return nil, e
	}
	app, user, e := s.owner(c, req.scoped)
	if e != nil {
		return nil, e
	}
	page, size := orDefault(req.Page, 1), orDefault(req.PageSize, 20)
	rows, total, err := s.sessionsOf(ctx, app, user, req.AgentOnly, session.ListQuery{Offset: (page - 1) * size, Limit: size})
	if err != nil {
		return nil, s.fromHost("ListSessions", err)
	}
	out := listSessionsData{Sessions: make([]sessionPayload, 0, len(rows)), Total: total, Page: page, PageSize: size,
		DataSource: "runtime", SessionContractVersion: 2}
	for _, r := range rows {
		out.Sessions = append(out.Sessions, sessionOf(r))
	}
	return out, nil
}

// sessionsOf pages through the sessions ListSessions lists: app's, or with several
// agents (and not agentOnly) the caller's sessions of every agent, merged newest first.
// A UI that knows one agent (ksadk-web) starts sessions with the others through
// RunAgent's Model and keeps naming its own: they must be in its list, or it drops the
// one it shows when it refreshes the list.
func (s *Surface) sessionsOf(ctx context.Context, app, user string, agentOnly bool, q session.ListQuery) ([]session.Session, int, error) {
	agents := s.rt.Agents()
	if agentOnly || len(agents) < 2 {
		return s.rt.ListSessions(ctx, app, user, q)
	}
	var all []session.Session
	total := 0
	for _, a := range agents {
		rows, n, err := s.rt.ListSessions(ctx, a.Name, user, session.ListQuery{Limit: q.Offset + q.Limit})
		if err != nil {
			return nil, 0, err
		}
		all, total = append(all, rows...), total+n
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].UpdatedAt.After(all[j].UpdatedAt) })
	if q.Offset >= len(all) {
		return nil, total, nil
	}
	return all[q.Offset:min(len(all), q.Offset+q.Limit)], total, nil
}

// getSession serves GetSession.
func (s *Surface) getSession(ctx context.Context, c *gin.Context, req *sessionRequest) (any, *actionError) {
	_, sess, e := s.callerSession(ctx, c, "GetSession", req.scoped, req.SessionID)
	if e != nil {
		return nil, e
	}
	return sessionData{sessionOf(sess)}, nil
}

// deleteSession serves DeleteSession; the runtime cancels a live run of the session
// first.
func (s *Surface) deleteSession(ctx context.Context, c *gin.Context, req *sessionRequest) (any, *actionError) {
	key, e := s.sessionKey(c, req.scoped, req.SessionID)
	if e != nil {
		return nil, e
	}
	if err := s.rt.DeleteSession(ctx, key); err != nil {
		return nil, s.fromHost("DeleteSession", err)
	}
	return struct {
		Deleted   bool   `json:"Deleted"`
		SessionID string `json:"SessionId"`
	}{true, key.ID}, nil
}

type renameRequest struct {
	sessionRequest
	Title *string `json:"Title"`
}

// renameSession serves RenameSession (new: KsADK only derives titles). An empty Title
// goes back to the automatic one.
func (s *Surface) renameSession(ctx context.Context, c *gin.Context, req *renameRequest) (any, *actionError) {
	if req.Title == nil {
		return nil, missing("Title")
	}
	key, e := s.sessionKey(c, req.scoped, req.SessionID)
	if e != nil {
		return nil, e
	}
	sess, err := s.rt.RenameSession(ctx, key, *req.Title)
	if err != nil {
		return nil, s.fromHost("RenameSession", err)
	}
	return sessionData{sessionOf(sess)}, nil
}

// callerSession resolves the session a request names for its caller (sessionKey) and
// loads it (existing): another user's is as absent as an unknown one.
func (s *Surface) callerSession(ctx context.Context, c *gin.Context, action string, sc scoped, id string) (session.Key, session.Session, *actionError) {
	key, e := s.sessionKey(c, sc, id)
	if e != nil {
		return key, session.Session{}, e
	}
	sess, e := s.existing(ctx, action, key)
	return key, sess, e
}
