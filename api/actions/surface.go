package actions

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/host/workspace"
)

// Prefix is the path prefix of every action.
const Prefix = "/agentengine/api/v1/"

// Defaults.
const (
	DefaultKeepAlive    = 15 * time.Second
	DefaultCancelWait   = 2 * time.Second
	DefaultLiveInterval = 50 * time.Millisecond
)

// Config configures the action surface.
type Config struct {
	Runtime *host.Runtime
	Logger  hclog.Logger
	// KeepAlive is the interval of SSE keep-alive comments on idle streams.
	KeepAlive time.Duration
	// MaxBodyBytes caps request bodies when the surface is served without the router's
	// limit (default httpx.DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// CancelWait bounds how long CancelRun waits for the run to stop before answering.
	CancelWait time.Duration
	// LiveInterval is the minimum spacing of live text frames per SubscribeRunEvents
	// stream; text produced in between is coalesced into the next frame.
	LiveInterval time.Duration
	// SessionBackend names the store ("memory", "local", "postgres") for the bootstrap.
	SessionBackend string
	// Features are capabilities served by the extensions (the bootstrap announces them);
	// Attachments and WorkspaceFiles are also set for extensions that serve them.
	Features Features
	// Extensions serve further actions under Prefix (api/files). This surface mounts
	// them, so that one surface owns the prefix and answers its errors.
	Extensions []Extension
	// Traces, when set, are the recent traces GetRunTrace reads (nil: tracing is off).
	Traces Traces
}

// Extension is a package serving further actions under Prefix.
type Extension interface {
	// Register mounts its actions (Prefix + the action's name).
	Register(r gin.IRouter)
	// Methods returns the HTTP methods of an action it serves (nil for others).
	Methods(action string) []string
}

// Features are bootstrap capability flags of actions this package does not serve.
type Features struct {
	// Attachments: UploadFile and AttachmentContent are mounted.
	Attachments bool
	// WorkspaceFiles: the workspace file actions are mounted.
	WorkspaceFiles bool
	// WorkspaceMaxUploadBytes is the workspace's limit of one file (default
	// workspace.DefaultMaxUploadBytes).
	WorkspaceMaxUploadBytes int64
}

// Surface serves the actions. It holds no mutable state.
type Surface struct {
	rt  *host.Runtime
	log hclog.Logger
	cfg Config
	// started is the "created" of models.
	started int64
}

// New builds the surface.
func New(cfg Config) (*Surface, error) {
	if cfg.Runtime == nil {
		return nil, errors.New("actions: a host runtime is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	if cfg.CancelWait <= 0 {
		cfg.CancelWait = DefaultCancelWait
	}
	if cfg.LiveInterval <= 0 {
		cfg.LiveInterval = DefaultLiveInterval
	}
	if cfg.SessionBackend == "" {
		cfg.SessionBackend = "local"
	}
	for _, e := range cfg.Extensions {
		cfg.Features.Attachments = cfg.Features.Attachments || e.Methods("UploadFile") != nil
		cfg.Features.WorkspaceFiles = cfg.Features.WorkspaceFiles || e.Methods("ListWorkspaceFiles") != nil
	}
	if cfg.Features.WorkspaceMaxUploadBytes <= 0 {
		cfg.Features.WorkspaceMaxUploadBytes = workspace.DefaultMaxUploadBytes
	}
	return &Surface{rt: cfg.Runtime, log: cfg.Logger, cfg: cfg, started: time.Now().Unix()}, nil
}

// Owns reports the paths of this surface (api.Surface): everything under Prefix, the
// actions of its extensions included.
func (s *Surface) Owns(path string) bool { return strings.HasPrefix(path, Prefix) }

// Register mounts one route per action, then the extensions' actions. Unknown actions
// fall through to the router's NoRoute, which answers with WriteError.
func (s *Surface) Register(r gin.IRouter) {
	for _, e := range s.cfg.Extensions {
		e.Register(r)
	}
	r.POST(Prefix+"GetAgentUiBootstrap", handle(s, "GetAgentUiBootstrap", s.bootstrap))
	r.POST(Prefix+"ListAgentModels", handle(s, "ListAgentModels", s.listModels))
	r.POST(Prefix+"CreateSession", handle(s, "CreateSession", s.createSession))
	r.POST(Prefix+"ListSessions", handle(s, "ListSessions", s.listSessions))
	r.POST(Prefix+"GetSession", handle(s, "GetSession", s.getSession))
	r.POST(Prefix+"DeleteSession", handle(s, "DeleteSession", s.deleteSession))
	r.POST(Prefix+"RenameSession", handle(s, "RenameSession", s.renameSession))
	r.POST(Prefix+"ListSessionEvents", handle(s, "ListSessionEvents", s.listEvents))
	r.POST(Prefix+"ListSessionMessages", handle(s, "ListSessionMessages", s.listMessages))
	r.POST(Prefix+"RunAgent", handle(s, "RunAgent", s.runAgent))
	r.POST(Prefix+"CancelRun", handle(s, "CancelRun", s.cancelRun))
	r.POST(Prefix+"GetResponseFeedback", handle(s, "GetResponseFeedback", s.getFeedback))
	r.POST(Prefix+"UpsertResponseFeedback", handle(s, "UpsertResponseFeedback", s.upsertFeedback))
	r.POST(Prefix+"DeleteResponseFeedback", handle(s, "DeleteResponseFeedback", s.deleteFeedback))
	r.POST(Prefix+"ListSessionCheckpoints", handle(s, "ListSessionCheckpoints", s.listCheckpoints))
	r.POST(Prefix+"GetCheckpointResumePreview", handle(s, "GetCheckpointResumePreview", s.previewCheckpoint))
	r.POST(Prefix+"ResumeRun", handle(s, "ResumeRun", s.resumeRun))
	r.POST(Prefix+"ListToolReceipts", handle(s, "ListToolReceipts", s.listReceipts))
	r.POST(Prefix+"GetRunTrace", handle(s, "GetRunTrace", s.getRunTrace))
	r.GET(Prefix+"SubscribeRunEvents", s.subscribe)
}

// methodsOf words the HTTP methods of an action of this surface or of an extension
// ("" if none serves it).
func (s *Surface) methodsOf(action string) string {
	if m := methodOf(action); m != "" {
		return m
	}
	for _, e := range s.cfg.Extensions {
		if ms := e.Methods(action); len(ms) > 0 {
			return strings.Join(ms, " or ")
		}
	}
	return ""
}

// methodOf is the HTTP method of an action this surface serves ("" if none).
func methodOf(action string) string {
	switch action {
	case "SubscribeRunEvents":
		return http.MethodGet
	case "GetAgentUiBootstrap", "ListAgentModels", "CreateSession", "ListSessions", "GetSession",
		"DeleteSession", "RenameSession", "ListSessionEvents", "ListSessionMessages", "RunAgent",
		"CancelRun", "GetResponseFeedback", "UpsertResponseFeedback", "DeleteResponseFeedback",
		"ListSessionCheckpoints", "GetCheckpointResumePreview", "ResumeRun", "ListToolReceipts",
		"GetRunTrace":
		return http.MethodPost
	}
	return ""
}

// handle adapts an action to gin: decode the body into a fresh T, run fn, answer with
// the envelope (unless fn already wrote a response, as streams do).
func handle[T any](s *Surface, action string, fn func(ctx context.Context, c *gin.Context, req *T) (any, *actionError)) gin.HandlerFunc {
	return func(c *gin.Context) {
		requestID(c)
		body, be := httpx.ReadJSON(c, s.cfg.MaxBodyBytes)
		if be != nil {
			fail(c, action, bodyError(be))
			return
		}
		req := new(T)
		if e := decodeJSON(body, req); e != nil {
			fail(c, action, e)
			return
		}
		data, e := fn(c.Request.Context(), c, req)
		switch {
		case e != nil:
			fail(c, action, e)
		case !c.Writer.Written():
			ok(c, action, data)
		}
	}
}
