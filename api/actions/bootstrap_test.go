package actions_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/agentengine/agentengine/api/actions"
)

type bootstrapData struct {
	Agent        struct{ AgentId, Name, Description, Framework string }
	Agents       []struct{ AgentId string }
	Capabilities struct {
		Attachments, WorkspaceFiles, Approval, StopRun, ResumeRun, Thinking bool
		RunLifecycle                                                        struct {
			Enabled, Resume, Abort, Checkpoints, CheckpointResume, CheckpointResumePreview bool
		}
		ApprovalPolicy struct{ Modes []string }
	}
	ApiFormats     []string
	SessionBackend struct{ Backend string }
	Model          struct{ Id string }
	SessionId      *string
	AccessMode     string
	WorkspaceFiles *struct {
		Enabled, SupportsDelete bool
		AccessMode, ContentPath string
		MaxUploadBytes          int64
	}
}

func TestBootstrap(t *testing.T) {
	e := newEnv(t)
	var d bootstrapData
	e.must("GetAgentUiBootstrap", map[string]any{"SessionId": "s1"}, &d)
	if d.WorkspaceFiles != nil {
		t.Errorf("WorkspaceFiles without the workspace actions: %+v", d.WorkspaceFiles)
	}
	if d.Agent.AgentId != "echo" || d.Agent.Framework != "go" || d.Agent.Description == "" {
		t.Errorf("Agent %+v", d.Agent)
	}
	c := d.Capabilities
	if !c.StopRun || !c.Approval || c.Attachments || c.WorkspaceFiles || c.ResumeRun || !c.RunLifecycle.Resume {
		t.Errorf("capabilities %+v", c)
	}
	// Checkpoints are listed and previewed; ResumeRun resumes nothing in place.
	if lc := c.RunLifecycle; !lc.Checkpoints || !lc.CheckpointResumePreview || lc.CheckpointResume {
		t.Errorf("capabilities %+v", c)
	}
	if len(d.ApiFormats) != 2 || d.ApiFormats[0] != "responses" || d.ApiFormats[1] != "chat_completions" {
		t.Errorf("ApiFormats %v", d.ApiFormats)
	}
	if d.SessionBackend.Backend != "memory" || d.Model.Id != "echo" || d.SessionId == nil || *d.SessionId != "s1" {
		t.Errorf("bootstrap %+v", d)
	}

	// Features served elsewhere are switched on by configuration only.
	e2 := newEnv(t, func(o *envOptions) {
		o.cfg.Features = actions.Features{Attachments: true, WorkspaceFiles: true}
	})
	e2.must("GetAgentUiBootstrap", map[string]any{}, &d)
	if !d.Capabilities.Attachments || !d.Capabilities.WorkspaceFiles {
		t.Errorf("features %+v", d.Capabilities)
	}
	// KsADK's UI shows the Workspace button from Data.WorkspaceFiles and AccessMode.
	if w := d.WorkspaceFiles; w == nil || !w.Enabled || w.AccessMode != "Owner" || d.AccessMode != "Owner" ||
		w.MaxUploadBytes != 32<<20-64<<10 || !w.SupportsDelete || w.ContentPath != actions.Prefix+"GetWorkspaceFileContent" {
		t.Errorf("WorkspaceFiles %+v, AccessMode %q", w, d.AccessMode)
	}

	// The limit reported is the one enforced: a file is also bounded by the request body
	// limit (less the form's other parts), and the workspace's own limit may be smaller.
	for _, tt := range []struct{ maxBody, wsMax, want int64 }{
		{1 << 20, 0, 1<<20 - 64<<10},
		{1 << 20, 4096, 4096},
	} {
		e3 := newEnv(t, func(o *envOptions) {
			o.maxBody = tt.maxBody
			o.cfg.Features = actions.Features{WorkspaceFiles: true, WorkspaceMaxUploadBytes: tt.wsMax}
		})
		e3.must("GetAgentUiBootstrap", map[string]any{}, &d)
		if w := d.WorkspaceFiles; w == nil || w.MaxUploadBytes != tt.want {
			t.Errorf("body limit %d, workspace limit %d: WorkspaceFiles %+v, want MaxUploadBytes %d", tt.maxBody, tt.wsMax, w, tt.want)
		}
	}

	wantError(t, e.post("GetAgentUiBootstrap", map[string]any{"AgentId": "nobody"}), 404, actions.CodeNotFound, "nobody")
	wantError(t, e.post("GetAgentUiBootstrap", map[string]any{"AgentId": 7}), 400, actions.CodeInvalidParameter, "AgentId")
}

func TestBootstrapSeveralAgents(t *testing.T) {
	e := newEnv(t, func(o *envOptions) { o.agents = []string{"alpha", "beta"} })
	var d bootstrapData
	e.must("GetAgentUiBootstrap", map[string]any{}, &d)
	if d.Agent.AgentId != "alpha" || len(d.Agents) != 2 {
		t.Errorf("agents %+v %+v", d.Agent, d.Agents)
	}
	e.must("GetAgentUiBootstrap", map[string]any{"AgentId": "beta"}, &d)
	if d.Agent.AgentId != "beta" {
		t.Errorf("agent %+v", d.Agent)
	}
	// Other actions need AgentId when it is ambiguous.
	wantError(t, e.post("GetSession", map[string]any{"SessionId": "s"}), 400, actions.CodeMissingParameter, "AgentId", "alpha", "beta")
}

func TestListAgentModels(t *testing.T) {
	e := newEnv(t, func(o *envOptions) { o.agents = []string{"alpha", "beta"} })
	var d struct {
		Models []struct {
			Id, Object, Name string
		}
		Current, Source string
	}
	e.must("ListAgentModels", map[string]any{"AgentId": "beta"}, &d)
	if len(d.Models) != 2 || d.Models[0].Id != "alpha" || d.Models[0].Object != "model" || d.Current != "beta" {
		t.Errorf("models %+v", d)
	}
	e.must("ListAgentModels", map[string]any{"Name": "alpha"}, &d)
	if len(d.Models) != 1 || d.Current != "" {
		t.Errorf("filtered %+v", d)
	}
	wantError(t, e.post("ListAgentModels", map[string]any{"AgentId": "gamma"}), 404, actions.CodeNotFound, "gamma")
}

// Agents that cannot serve, or whose reload failed, reach the UI with their error.
func TestBootstrapAgentProblems(t *testing.T) {
	e := newEnv(t, func(o *envOptions) { o.agents = []string{"alpha", "beta", "gamma"} })
	var d struct {
		Agents        []struct{ AgentId string }
		AgentProblems []struct{ AgentId, Kind, Error string }
	}
	e.must("GetAgentUiBootstrap", map[string]any{}, &d)
	if d.AgentProblems != nil {
		t.Fatalf("problems with none: %+v", d.AgentProblems)
	}
	e.rt.SetAgentError("beta", errors.New("building the Go runner failed: undefined: x"))
	e.rt.SetReloadError("gamma", errors.New("SyntaxError: invalid syntax (agent.py, line 3)"))
	e.must("GetAgentUiBootstrap", map[string]any{}, &d)
	want := []struct{ AgentId, Kind, Error string }{
		{"beta", "unavailable", "building the Go runner failed: undefined: x"},
		{"gamma", "reload_failed", "SyntaxError: invalid syntax (agent.py, line 3)"},
	}
	if !reflect.DeepEqual(d.AgentProblems, want) {
		t.Fatalf("AgentProblems = %+v", d.AgentProblems)
	}
	if len(d.Agents) != 2 {
		t.Fatalf("an unavailable agent is listed: %+v", d.Agents)
	}
}
