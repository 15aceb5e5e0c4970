package actions_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/api/actions"
	"github.com/agentengine/agentengine/session/memory"
)

type listData struct {
	Sessions       []sessionRow
	Total          int
	Page, PageSize int
}

func TestCreateSession(t *testing.T) {
	e := newEnv(t)
	s := e.createSession(map[string]any{"AgentId": "echo"})
	if !strings.HasPrefix(s.SessionId, "sess_") || s.AgentId != "echo" || s.UserId != "user" || s.CreatedAt == 0 {
		t.Errorf("session %+v", s)
	}
	// A chosen id is created, and creating it again returns the same session.
	a := e.createSession(map[string]any{"SessionId": "chat-1"})
	b := e.createSession(map[string]any{"SessionId": "chat-1"})
	if a.SessionId != "chat-1" || b.CreatedAt != a.CreatedAt {
		t.Errorf("ensure: %+v then %+v", a, b)
	}
	// Another user's id is another session: each user only sees their own.
	c := e.createSession(map[string]any{"SessionId": "chat-1", "UserId": "alice"})
	if c.UserId != "alice" {
		t.Errorf("alice's session %+v", c)
	}
	var l listData
	e.must("ListSessions", map[string]any{"AgentId": "echo"}, &l)
	if l.Total != 2 {
		t.Errorf("user has %d sessions, want 2", l.Total)
	}
	e.must("ListSessions", map[string]any{"AgentId": "echo", "UserId": "alice"}, &l)
	if l.Total != 1 || l.Sessions[0].SessionId != "chat-1" {
		t.Errorf("alice lists %+v", l)
	}
	// A caller bound to a user (the trusted header) is that user whatever UserId says.
	e.must("ListSessions", map[string]any{"AgentId": "echo", "UserId": "user"}, &l, "X-AgentEngine-User", "alice")
	if l.Total != 1 {
		t.Errorf("header tenant lists %d sessions", l.Total)
	}
	wantError(t, e.post("CreateSession", map[string]any{"SessionId": strings.Repeat("x", 300)}), 400, actions.CodeInvalidParameter, "SessionId")
	wantError(t, e.post("CreateSession", map[string]any{"AgentId": "nobody"}), 404, actions.CodeNotFound)
}

func TestListSessions(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 3; i++ {
		e.createSession(map[string]any{})
		time.Sleep(2 * time.Millisecond) // distinct UpdatedAt
	}
	run := e.run(map[string]any{"Messages": userMessages("hello there")})
	var l listData
	e.must("ListSessions", map[string]any{"AgentId": "echo", "PageSize": 2}, &l)
	if l.Total != 4 || len(l.Sessions) != 2 || l.Page != 1 || l.PageSize != 2 {
		t.Fatalf("page 1: %+v", l)
	}
	top := l.Sessions[0]
	if top.SessionId != run.SessionID || top.Title != "hello there" || top.FirstPrompt != "hello there" ||
		top.LastPrompt != "hello there" || top.ActiveRunStatus != "completed" || top.ActiveInvocationId == "" || top.LatestSeqId != 5 {
		t.Errorf("most recent session %+v", top)
	}
	e.must("ListSessions", map[string]any{"AgentId": "echo", "PageSize": 2, "Page": 2}, &l)
	if len(l.Sessions) != 2 || l.Page != 2 {
		t.Errorf("page 2: %+v", l)
	}
	e.must("ListSessions", map[string]any{"AgentId": "echo", "Page": 3, "PageSize": 2}, &l)
	if len(l.Sessions) != 0 || l.Total != 4 {
		t.Errorf("page 3: %+v", l)
	}
	e.must("ListSessions", map[string]any{"AgentId": "echo"}, &l)
	if l.PageSize != 20 || len(l.Sessions) != 4 {
		t.Errorf("defaults: %+v", l)
	}
	for _, tc := range []struct {
		body     map[string]any
		code     string
		mentions string
	}{
		{map[string]any{}, actions.CodeMissingParameter, "AgentId"},
		{map[string]any{"AgentId": "echo", "Page": 0}, actions.CodeInvalidParameter, "Page"},
		{map[string]any{"AgentId": "echo", "PageSize": 0}, actions.CodeInvalidParameter, "PageSize"},
		{map[string]any{"AgentId": "echo", "PageSize": 201}, actions.CodeInvalidParameter, "PageSize"},
	} {
		wantError(t, e.post("ListSessions", tc.body), 400, tc.code, tc.mentions)
	}
}

func TestGetSession(t *testing.T) {
	e := newEnv(t)
	s := e.createSession(map[string]any{"SessionId": "mine"})
	var d sessionData
	e.must("GetSession", map[string]any{"SessionId": "mine", "AgentId": "echo"}, &d)
	if d.Session.SessionId != s.SessionId {
		t.Errorf("got %+v", d.Session)
	}
	wantError(t, e.post("GetSession", map[string]any{}), 400, actions.CodeMissingParameter, "SessionId")
	wantError(t, e.post("GetSession", map[string]any{"SessionId": "nope"}), 404, actions.CodeNotFound, "nope")
	// Another user's session does not exist for the caller.
	wantError(t, e.post("GetSession", map[string]any{"SessionId": "mine", "UserId": "mallory"}), 404, actions.CodeNotFound)
	wantError(t, e.post("GetSession", map[string]any{"SessionId": "mine"}, "X-AgentEngine-User", "mallory"), 404, actions.CodeNotFound)
}

func TestRenameSession(t *testing.T) {
	e := newEnv(t)
	run := e.run(map[string]any{"Messages": userMessages("what is the weather")})
	var d sessionData
	e.must("RenameSession", map[string]any{"SessionId": run.SessionID, "Title": "Weather chat"}, &d)
	if d.Session.Title != "Weather chat" {
		t.Errorf("renamed %+v", d.Session)
	}
	var l listData
	e.must("ListSessions", map[string]any{"AgentId": "echo"}, &l)
	if l.Sessions[0].Title != "Weather chat" {
		t.Errorf("list shows %q", l.Sessions[0].Title)
	}
	// Another user can neither rename it nor learn that it exists.
	wantError(t, e.post("RenameSession", map[string]any{"SessionId": run.SessionID, "Title": "pwned", "UserId": "mallory"}), 404, actions.CodeNotFound)
	wantError(t, e.post("RenameSession", map[string]any{"SessionId": run.SessionID}), 400, actions.CodeMissingParameter, "Title")
	wantError(t, e.post("RenameSession", map[string]any{"SessionId": run.SessionID, "Title": 5}), 400, actions.CodeInvalidParameter, "Title")
	wantError(t, e.post("RenameSession", map[string]any{"SessionId": run.SessionID, "Title": strings.Repeat("t", 600)}), 400, actions.CodeInvalidParameter, "title")
	e.must("GetSession", map[string]any{"SessionId": run.SessionID}, &d)
	if d.Session.Title != "Weather chat" {
		t.Errorf("rejected renames changed the title to %q", d.Session.Title)
	}
	// An empty title goes back to the automatic one.
	e.must("RenameSession", map[string]any{"SessionId": run.SessionID, "Title": ""}, &d)
	if d.Session.Title != "what is the weather" {
		t.Errorf("reset title %q", d.Session.Title)
	}
}

func TestDeleteSession(t *testing.T) {
	e := newEnv(t)
	s := e.createSession(map[string]any{"SessionId": "doomed"})
	wantError(t, e.post("DeleteSession", map[string]any{"SessionId": "doomed", "UserId": "mallory"}), 404, actions.CodeNotFound)
	e.must("GetSession", map[string]any{"SessionId": s.SessionId}, nil)
	var d struct{ Deleted bool }
	e.must("DeleteSession", map[string]any{"SessionId": "doomed"}, &d)
	if !d.Deleted {
		t.Error("not deleted")
	}
	wantError(t, e.post("GetSession", map[string]any{"SessionId": "doomed"}), 404, actions.CodeNotFound)
	wantError(t, e.post("DeleteSession", map[string]any{"SessionId": "doomed"}), 404, actions.CodeNotFound)
	wantError(t, e.post("DeleteSession", map[string]any{}), 400, actions.CodeMissingParameter, "SessionId")
}

func TestDeleteSessionCancelsItsRun(t *testing.T) {
	e := newEnv(t)
	var bg struct{ SessionId, InvocationId string }
	e.must("RunAgent", map[string]any{"Messages": userMessages("take your time"), "Background": true, "ModelOptions": slow(200, 20)}, &bg)
	run, ok := e.rt.LiveRun(sessionKey(bg.SessionId), bg.InvocationId)
	if !ok {
		t.Fatal("run is not live")
	}
	e.must("DeleteSession", map[string]any{"SessionId": bg.SessionId}, nil)
	select {
	case <-run.Done():
	case <-ctxTimeout(t, 5*time.Second).Done():
		t.Fatal("run still going after its session was deleted")
	}
	if run.Status() != "cancelled" {
		t.Errorf("run status %s", run.Status())
	}
}

func TestListSessionsReadsNoEventLog(t *testing.T) {
	cs := &countingStore{Store: memory.New()}
	e := newEnv(t, func(o *envOptions) {
		o.store = cs
		o.compact.Disabled = true // compaction after a run reads the history in the background
	})
	for i := 0; i < 3; i++ {
		e.run(map[string]any{"Messages": userMessages("hello there")})
	}
	before := cs.events.Load()
	var l listData
	e.must("ListSessions", map[string]any{"AgentId": "echo"}, &l)
	e.must("GetSession", map[string]any{"SessionId": l.Sessions[0].SessionId}, nil)
	if l.Sessions[0].ActiveRunStatus != "completed" || l.Sessions[0].Title == "" {
		t.Errorf("summary %+v", l.Sessions[0])
	}
	if n := cs.events.Load() - before; n != 0 {
		t.Errorf("ListSessions and GetSession read event logs %d times", n)
	}
}
