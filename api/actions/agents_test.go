package actions_test

import (
	"net/http"
	"testing"

	"github.com/agentengine/agentengine/api/actions"
	"github.com/agentengine/agentengine/pluginsdk"
)

// ksadk-web knows one agent, the bootstrap's, and names it in every action; its model
// picker lists ListAgentModels and sends the pick as RunAgent's Model. Picking another
// hosted agent must reach it, and the session it starts must stay reachable.
func TestRunAgentModelPicksTheHostedAgent(t *testing.T) {
	// Not in alphabetical order: the first agent given is the default.
	e := newEnv(t, func(o *envOptions) { o.agents = []string{"zeta", "alpha"} })
	var boot bootstrapData
	e.must("GetAgentUiBootstrap", map[string]any{}, &boot)
	if boot.Agent.AgentId != "zeta" || len(boot.Agents) != 2 || boot.Agents[0].AgentId != "zeta" || boot.Agents[1].AgentId != "alpha" || boot.Model.Id != "zeta" {
		t.Fatalf("bootstrap %+v", boot)
	}
	var models struct {
		Models          []struct{ Id string }
		Current, Source string
	}
	e.must("ListAgentModels", map[string]any{"AgentId": "zeta"}, &models)
	if len(models.Models) != 2 || models.Models[0].Id != "zeta" || models.Models[1].Id != "alpha" || models.Current != "zeta" {
		t.Fatalf("models %+v", models)
	}
	if r := e.do(http.MethodGet, "/v1/models", nil); r.status != 200 || r.env["data"].([]any)[0].(map[string]any)["id"] != "zeta" {
		t.Fatalf("/v1/models %d %s", r.status, r.raw)
	}

	type answer struct {
		Model     string `json:"model"`
		SessionID string `json:"session_id"`
		Usage     struct {
			InputTokens int `json:"input_tokens"`
		} `json:"usage"`
	}
	var a answer
	e.must("RunAgent", map[string]any{"AgentId": "zeta", "Model": "alpha", "Messages": userMessages("one two")}, &a)
	if a.Model != "alpha" {
		t.Fatalf("Model alpha answered by %q", a.Model)
	}
	sid := a.SessionID
	// The next turn of that session, sent as ksadk-web sends it: still AgentId zeta.
	var next answer
	e.must("RunAgent", map[string]any{"AgentId": "zeta", "Model": "alpha", "SessionId": sid, "Messages": userMessages("three")}, &next)
	if next.Model != "alpha" || next.SessionID != sid || next.Usage.InputTokens <= 1 {
		t.Fatalf("continued turn %+v: not alpha's session with its history", next)
	}
	// The session's other actions find it under the agent that owns it.
	d := e.messages(map[string]any{"AgentId": "zeta", "SessionId": sid})
	if got := roles(d.Messages); got != "uaua" {
		t.Fatalf("messages of alpha's session through AgentId zeta: %s", got)
	}
	e.must("GetSession", map[string]any{"AgentId": "zeta", "SessionId": sid}, nil)
	// ksadk-web's session list (it names zeta) has it, or the UI would drop the session
	// it shows when it refreshes the list; AgentOnly lists zeta's own.
	type listed struct {
		Sessions []struct{ SessionId, AgentId string }
		Total    int
	}
	var all, own listed
	e.must("ListSessions", map[string]any{"AgentId": "zeta"}, &all)
	if all.Total != 1 || len(all.Sessions) != 1 || all.Sessions[0].SessionId != sid || all.Sessions[0].AgentId != "alpha" {
		t.Fatalf("ListSessions %+v", all)
	}
	e.must("ListSessions", map[string]any{"AgentId": "zeta", "AgentOnly": true}, &own)
	if own.Total != 0 || len(own.Sessions) != 0 {
		t.Fatalf("ListSessions AgentOnly %+v", own)
	}
	// Without Model (or naming the session's own agent) the session goes on with alpha.
	e.must("RunAgent", map[string]any{"AgentId": "zeta", "SessionId": sid, "Messages": userMessages("four")}, &next)
	if next.Model != "alpha" {
		t.Fatalf("turn without Model answered by %q", next.Model)
	}
	// A session is one agent's: picking another for it is refused, naming both.
	wantError(t, e.post("RunAgent", map[string]any{"AgentId": "zeta", "Model": "zeta", "SessionId": sid, "Messages": userMessages("x")}),
		400, actions.CodeInvalidParameter, "alpha", "zeta")
	// The bootstrap agent answers for itself; a Model that is no hosted agent is the
	// agent's model override, as before.
	e.must("RunAgent", map[string]any{"AgentId": "zeta", "Model": "zeta", "Messages": userMessages("x")}, &a)
	if a.Model != "zeta" {
		t.Fatalf("Model zeta answered by %q", a.Model)
	}
	// Both agents' sessions, newest first, paged over the merged list.
	var p1, p2 listed
	e.must("ListSessions", map[string]any{"AgentId": "alpha", "PageSize": 1}, &p1)
	e.must("ListSessions", map[string]any{"AgentId": "alpha", "PageSize": 1, "Page": 2}, &p2)
	if p1.Total != 2 || len(p1.Sessions) != 1 || p1.Sessions[0].SessionId != a.SessionID || len(p2.Sessions) != 1 || p2.Sessions[0].SessionId != sid {
		t.Fatalf("pages %+v %+v", p1, p2)
	}
	e.must("RunAgent", map[string]any{"AgentId": "zeta", "Model": "gpt-x", "Messages": userMessages("x")}, &a)
	if a.Model != "zeta" {
		t.Fatalf("Model gpt-x answered by %q", a.Model)
	}
	// Another user's session stays unknown, whichever agent is named.
	wantError(t, e.post("GetSession", map[string]any{"AgentId": "zeta", "SessionId": sid}, "X-AgentEngine-User", "mallory"), 404, actions.CodeNotFound)
}

// After a reload ksadk-web rebuilds a paused turn from ListSessionMessages: it keys the
// turn's ToolEvents by Name (by ToolCallId when a name repeats and the event has one)
// and shows a tool block's approval buttons from the entry named like the block.
func TestPendingApprovalComesBackAfterReload(t *testing.T) {
	e := newEnv(t)
	ask := e.run(map[string]any{"Messages": userMessages("please approve deleting notes.txt")})
	var approvalID string
	for _, o := range ask.Output {
		if o.Type == "mcp_approval_request" {
			approvalID = o.ID
		}
	}
	d := e.messages(map[string]any{"SessionId": ask.SessionID, "IncludeReasoning": true, "IncludeToolEvents": true})
	if len(d.Messages) != 2 {
		t.Fatalf("messages %+v", d.Messages)
	}
	m := d.Messages[1]
	// ksadk-web's mapToolEvents.
	counts := map[string]int{}
	for _, te := range m.ToolEvents {
		counts[te.Name]++
	}
	tools := map[string]blockRow{}
	for _, te := range m.ToolEvents {
		key := te.Name
		if counts[te.Name] > 1 && te.ToolCallId != "" {
			key = te.ToolCallId
		}
		tools[key] = te
	}
	var toolBlock *blockRow
	for i, b := range m.Blocks {
		if b.Type == "tool" {
			toolBlock = &m.Blocks[i]
		}
	}
	if toolBlock == nil || toolBlock.Name != "delete_file" {
		t.Fatalf("no tool block for the paused call: %+v", m.Blocks)
	}
	got, ok := tools[toolBlock.Name]
	if !ok || got.ApprovalRequestId != approvalID || got.Status != "paused" {
		t.Fatalf("the tool block's entry %+v (ok %v): no pending approval to answer; ToolEvents %+v", got, ok, m.ToolEvents)
	}
	// Answering it from the reloaded page resumes the run. ksadk-web's tool card sends
	// the block's ToolCallId as PreviousResponseId; KsADK only keeps it as metadata.
	if toolBlock.ToolCallId == "" {
		t.Fatalf("tool block without its call id: %+v", toolBlock)
	}
	res := e.run(map[string]any{"SessionId": ask.SessionID, "PreviousResponseId": toolBlock.ToolCallId,
		"ResponsesInput": []map[string]any{{"type": "mcp_approval_response", "approval_request_id": got.ApprovalRequestId, "approve": true}}})
	if res.OutputText != "Approved: deleted notes.txt." {
		t.Fatalf("resume %+v", res)
	}
}

// CheckpointResume (and ResumeRun) come from the runners' capabilities: the asked
// agent's, or with several agents and none asked for, any agent's.
func TestBootstrapCheckpointResumeFromCapabilities(t *testing.T) {
	e := newEnv(t, func(o *envOptions) {
		o.agents = []string{"echo", "graph"}
		o.runners = map[string]pluginsdk.Runner{"graph": &graphAgent{}}
	})
	for _, c := range []struct {
		agent string
		want  bool
	}{{"", true}, {"echo", false}, {"graph", true}} {
		var d bootstrapData
		e.must("GetAgentUiBootstrap", map[string]any{"AgentId": c.agent}, &d)
		lc := d.Capabilities.RunLifecycle
		if lc.CheckpointResume != c.want || d.Capabilities.ResumeRun != c.want || !lc.Checkpoints || !lc.Enabled {
			t.Errorf("AgentId %q: CheckpointResume %v ResumeRun %v, want %v", c.agent, lc.CheckpointResume, d.Capabilities.ResumeRun, c.want)
		}
	}
}

// ksadk-web creates its session with CreateSession for the bootstrap agent, then sends the
// first RunAgent with the picked agent as Model: that blank session moves to the picked
// agent (same id) and the picked agent answers; a session with history does not move.
func TestRunAgentModelTakesOverABlankSession(t *testing.T) {
	e := newEnv(t, func(o *envOptions) { o.agents = []string{"zeta", "alpha"} })
	var created struct {
		Session struct{ SessionId, AgentId string }
	}
	e.must("CreateSession", map[string]any{"AgentId": "zeta"}, &created)
	sid := created.Session.SessionId
	if sid == "" || created.Session.AgentId != "zeta" {
		t.Fatalf("CreateSession %+v", created)
	}
	var a struct {
		Model     string `json:"model"`
		SessionID string `json:"session_id"`
	}
	e.must("RunAgent", map[string]any{"AgentId": "zeta", "Model": "alpha", "SessionId": sid, "Messages": userMessages("one")}, &a)
	if a.Model != "alpha" || a.SessionID != sid {
		t.Fatalf("first turn of a blank session with Model alpha: %+v", a)
	}
	var got struct {
		Session struct{ SessionId, AgentId string }
	}
	e.must("GetSession", map[string]any{"AgentId": "zeta", "SessionId": sid}, &got)
	if got.Session.AgentId != "alpha" {
		t.Fatalf("session after the move %+v", got)
	}
	var own struct{ Total int }
	e.must("ListSessions", map[string]any{"AgentId": "zeta", "AgentOnly": true}, &own)
	if own.Total != 0 {
		t.Fatalf("zeta still lists the moved session: %+v", own)
	}
	// zeta's session with a turn in it stays zeta's.
	e.must("CreateSession", map[string]any{"AgentId": "zeta"}, &created)
	used := created.Session.SessionId
	e.must("RunAgent", map[string]any{"AgentId": "zeta", "SessionId": used, "Messages": userMessages("hi")}, &a)
	wantError(t, e.post("RunAgent", map[string]any{"AgentId": "zeta", "Model": "alpha", "SessionId": used, "Messages": userMessages("x")}),
		400, actions.CodeInvalidParameter, "zeta", "alpha")
	// Another user's blank session is not there for the caller, and stays mallory's.
	e.must("CreateSession", map[string]any{"AgentId": "zeta", "SessionId": "sess_mallory"}, nil, "X-AgentEngine-User", "mallory")
	wantError(t, e.post("RunAgent", map[string]any{"AgentId": "zeta", "Model": "alpha", "SessionId": "sess_mallory", "Messages": userMessages("x")}),
		404, actions.CodeNotFound)
	e.must("GetSession", map[string]any{"AgentId": "zeta", "SessionId": "sess_mallory"}, &got, "X-AgentEngine-User", "mallory")
	if got.Session.AgentId != "zeta" {
		t.Fatalf("mallory's session %+v", got)
	}
}

// After a reload ksadk-web restores the session it showed with ListSessionMessages and no
// AgentId: with several agents hosted, a session's actions without AgentId go to the
// agent whose session it is; without such a session AgentId is still required.
func TestSessionActionsWithoutAgentIdFindTheSessionsAgent(t *testing.T) {
	e := newEnv(t, func(o *envOptions) { o.agents = []string{"zeta", "alpha"} })
	var a struct {
		SessionID string `json:"session_id"`
	}
	e.must("RunAgent", map[string]any{"AgentId": "alpha", "Messages": userMessages("one two")}, &a)
	d := e.messages(map[string]any{"SessionId": a.SessionID})
	if got := roles(d.Messages); got != "ua" {
		t.Fatalf("messages without AgentId: %s", got)
	}
	var got struct{ Session struct{ AgentId string } }
	e.must("GetSession", map[string]any{"SessionId": a.SessionID}, &got)
	if got.Session.AgentId != "alpha" {
		t.Fatalf("GetSession without AgentId: %+v", got)
	}
	var next struct {
		Model     string `json:"model"`
		SessionID string `json:"session_id"`
	}
	e.must("RunAgent", map[string]any{"SessionId": a.SessionID, "Messages": userMessages("three")}, &next)
	if next.Model != "alpha" || next.SessionID != a.SessionID {
		t.Fatalf("RunAgent without AgentId in alpha's session: %+v", next)
	}
	for _, body := range []map[string]any{
		{"SessionId": "sess_unknown"},
		{"SessionId": a.SessionID, "UserId": "mallory"},
	} {
		headers := []string{}
		if body["UserId"] != nil {
			headers = []string{"X-AgentEngine-User", "mallory"}
			delete(body, "UserId")
		}
		wantError(t, e.post("ListSessionMessages", body, headers...), 400, actions.CodeMissingParameter, "AgentId", "zeta", "alpha")
	}
}
