package actions

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
)

// accessOwner is KsADK's access mode of the agent's owner.
const accessOwner = "Owner"

type bootstrapRequest struct {
	AgentID   string `json:"AgentId"`
	SessionID string `json:"SessionId"`
}

type agentPayload struct {
	AgentID     string `json:"AgentId"`
	Name        string `json:"Name"`
	Description string `json:"Description"`
	Framework   string `json:"Framework"`
}

func agentOf(a host.AgentInfo) agentPayload {
	return agentPayload{AgentID: a.Name, Name: a.Name, Description: a.Description, Framework: a.Framework}
}

// capabilities are the UI's feature switches. Every flag is true only for what this
// runtime does today: a flag the UI trusts but the server lacks is a broken button.
type capabilities struct {
	Attachments    bool           `json:"Attachments"`
	WorkspaceFiles bool           `json:"WorkspaceFiles"`
	Approval       bool           `json:"Approval"`
	ApprovalPolicy approvalPolicy `json:"ApprovalPolicy"`
	// Thinking is the thinking-mode switch; ModelOptions reach the agent untouched but
	// the runtime cannot tell whether the agent honours them.
	Thinking      bool         `json:"Thinking"`
	StopRun       bool         `json:"StopRun"`
	ResumeRun     bool         `json:"ResumeRun"`
	RunLifecycle  runLifecycle `json:"RunLifecycle"`
	Feedback      bool         `json:"Feedback"`
	RenameSession bool         `json:"RenameSession"`
	MCP           bool         `json:"MCP"`
	BuiltinTools  []any        `json:"BuiltinTools"`
	// Traces: GetRunTrace answers (the server keeps its recent traces).
	Traces bool `json:"Traces"`
}

// approvalPolicy: approvals are always asked; the runtime has no auto-approve modes.
type approvalPolicy struct {
	Modes           []string `json:"Modes"`
	DefaultMode     string   `json:"DefaultMode"`
	RuntimeOverride bool     `json:"RuntimeOverride"`
}

type runLifecycle struct {
	Enabled                 bool `json:"Enabled"`
	Resume                  bool `json:"Resume"` // reconnect with SubscribeRunEvents
	Abort                   bool `json:"Abort"`
	Checkpoints             bool `json:"Checkpoints"`
	CheckpointResume        bool `json:"CheckpointResume"`
	CheckpointResumePreview bool `json:"CheckpointResumePreview"`
}

type transport struct {
	Protocol     string           `json:"Protocol"`
	Runtime      string           `json:"Runtime"`
	Endpoint     string           `json:"Endpoint"`
	Version      string           `json:"Version"`
	Capabilities transportAbility `json:"Capabilities"`
}

type transportAbility struct {
	A2UI      bool `json:"A2UI"`
	Interrupt bool `json:"Interrupt"`
	Cancel    bool `json:"Cancel"`
}

type hostedChat struct {
	PreferredTransport string      `json:"PreferredTransport"`
	Transports         []transport `json:"Transports"`
}

type sessionBackend struct {
	Backend        string `json:"Backend"`
	Shared         bool   `json:"Shared"`
	ProductionSafe bool   `json:"ProductionSafe"`
}

type modelRef struct {
	ID     string `json:"id"`
	Source string `json:"source"`
}

type customUI struct {
	Enabled bool `json:"Enabled"`
}

// workspaceFiles describes the workspace panel (KsADK's Data.WorkspaceFiles): the
// owner of a local runtime may browse, upload and delete.
type workspaceFiles struct {
	Enabled        bool   `json:"Enabled"`
	AccessMode     string `json:"AccessMode"`
	MaxUploadBytes int64  `json:"MaxUploadBytes"`
	SupportsDelete bool   `json:"SupportsDelete"`
	RootLabel      string `json:"RootLabel"`
	EntryAction    string `json:"EntryAction"`
	UploadAction   string `json:"UploadAction"`
	ContentPath    string `json:"ContentPath"`
}

type bootstrapPayload struct {
	Agent        agentPayload   `json:"Agent"`
	Agents       []agentPayload `json:"Agents"`
	Modules      []string       `json:"Modules"`
	Capabilities capabilities   `json:"Capabilities"`
	// AccessMode is the caller's access to the agent: the local runtime's user owns it.
	AccessMode     string          `json:"AccessMode"`
	WorkspaceFiles *workspaceFiles `json:"WorkspaceFiles"`
	CustomUI       customUI        `json:"CustomUI"`
	APIFormats     []string        `json:"ApiFormats"`
	HostedChat     hostedChat      `json:"HostedChat"`
	Stream         bool            `json:"Stream"`
	SessionID      *string         `json:"SessionId"`
	SessionBack    sessionBackend  `json:"SessionBackend"`
	Model          modelRef        `json:"Model"`
	// AgentProblems (an agentengine addition) lists the agents that cannot serve, and
	// those serving their last good version because a reload of edited code failed, each
	// with the error to fix: the bundled UI shows them in a banner.
	AgentProblems []agentProblem `json:"AgentProblems,omitempty"`
}

// agentProblem is one entry of AgentProblems; Kind is "unavailable" or "reload_failed".
type agentProblem struct {
	AgentID string `json:"AgentId"`
	Kind    string `json:"Kind"`
	Error   string `json:"Error"`
}

// agentProblems collects the runtime's unavailable agents and failed reloads.
func (s *Surface) agentProblems() []agentProblem {
	var out []agentProblem
	for _, a := range s.rt.Unavailable() {
		out = append(out, agentProblem{AgentID: a.Name, Kind: "unavailable", Error: a.Error})
	}
	for _, a := range s.rt.ReloadErrors() {
		out = append(out, agentProblem{AgentID: a.Name, Kind: "reload_failed", Error: a.Error})
	}
	return out
}

// bootstrap serves GetAgentUiBootstrap. Without AgentId it describes the only agent,
// or the first of several (Agents lists them all, for a multi-agent UI).
func (s *Surface) bootstrap(ctx context.Context, c *gin.Context, req *bootstrapRequest) (any, *actionError) {
	agents := s.rt.Agents()
	var a host.AgentInfo
	if req.AgentID != "" || len(agents) == 1 {
		var e *actionError
		if a, e = s.agent(req.AgentID); e != nil {
			return nil, e
		}
	} else if len(agents) > 0 {
		a = agents[0]
	}
	list := make([]agentPayload, 0, len(agents))
	for _, ag := range agents {
		list = append(list, agentOf(ag))
	}
	var sid *string
	if req.SessionID != "" {
		sid = &req.SessionID
	}
	var ws *workspaceFiles
	if s.cfg.Features.WorkspaceFiles {
		// An upload is one request: the body limit bounds the file as much as the
		// workspace's own limit does, so the smaller one is what the server enforces.
		maxFile := min(s.cfg.Features.WorkspaceMaxUploadBytes, httpx.BodyLimit(c, s.cfg.MaxBodyBytes)-httpx.FormOverhead)
		ws = &workspaceFiles{Enabled: true, AccessMode: accessOwner, MaxUploadBytes: max(maxFile, 0),
			SupportsDelete: true, RootLabel: "Workspace", EntryAction: "ListWorkspaceFiles", UploadAction: "AddWorkspaceFile",
			ContentPath: Prefix + "GetWorkspaceFileContent"}
	}
	// A failed or cancelled run of an agent whose runner keeps its checkpoints with the
	// host continues in place (ResumeRun); other checkpoints are listed and previewed.
	// The runners say so in their capabilities. Asked for no agent of several, it is
	// whether any of them does: a UI that reads this once (ksadk-web) reaches every
	// agent through its model picker, and each checkpoint's preview says whether it
	// resumes.
	resume := false
	for _, ag := range agents {
		if (ag.Name == a.Name || req.AgentID == "") && s.rt.CanContinue(ctx, ag.Name) {
			resume = true
			break
		}
	}
	return bootstrapPayload{
		Agent:   agentOf(a),
		Agents:  list,
		Modules: []string{"Chat"},
		Capabilities: capabilities{
			Attachments:    s.cfg.Features.Attachments,
			WorkspaceFiles: s.cfg.Features.WorkspaceFiles,
			Approval:       true,
			ApprovalPolicy: approvalPolicy{Modes: []string{"ask"}, DefaultMode: "ask"},
			StopRun:        true,
			ResumeRun:      resume,
			RunLifecycle: runLifecycle{Enabled: true, Resume: true, Abort: true, Checkpoints: true,
				CheckpointResume: resume, CheckpointResumePreview: true},
			Feedback:      true,
			RenameSession: true,
			BuiltinTools:  []any{},
			Traces:        s.cfg.Traces != nil,
		},
		AccessMode:     accessOwner,
		WorkspaceFiles: ws,
		APIFormats:     []string{"responses", "chat_completions"},
		HostedChat: hostedChat{PreferredTransport: "responses", Transports: []transport{{
			Protocol: "responses", Runtime: "agentengine", Endpoint: "/v1/responses", Version: "v1",
			Capabilities: transportAbility{Interrupt: true, Cancel: true},
		}}},
		Stream:        true,
		SessionID:     sid,
		SessionBack:   sessionBackend{Backend: s.cfg.SessionBackend, Shared: s.cfg.SessionBackend == "postgres", ProductionSafe: s.cfg.SessionBackend == "postgres"},
		Model:         modelRef{ID: a.Name, Source: "agent"},
		AgentProblems: s.agentProblems(),
	}, nil
}

type listModelsRequest struct {
	AgentID string `json:"AgentId"`
	Name    string `json:"Name"`
}

type modelPayload struct {
	ID          string `json:"id"`
	Object      string `json:"object"`
	Created     int64  `json:"created"`
	OwnedBy     string `json:"owned_by"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Framework   string `json:"framework"`
}

// listModels serves ListAgentModels: every hosted agent is a model, as on /v1/models.
// Current is the requested agent, else the only one.
func (s *Surface) listModels(_ context.Context, _ *gin.Context, req *listModelsRequest) (any, *actionError) {
	current := ""
	if req.AgentID != "" || len(s.rt.Agents()) == 1 {
		a, e := s.agent(req.AgentID)
		if e != nil {
			return nil, e
		}
		current = a.Name
	}
	models := []modelPayload{}
	for _, a := range s.rt.Agents() {
		if req.Name != "" && a.Name != req.Name {
			continue
		}
		models = append(models, modelPayload{ID: a.Name, Object: "model", Created: s.started, OwnedBy: "agentengine",
			Name: a.Name, Description: a.Description, Framework: a.Framework})
	}
	return struct {
		Models  []modelPayload `json:"Models"`
		Current string         `json:"Current"`
		Source  string         `json:"Source"`
	}{models, current, "agents"}, nil
}
