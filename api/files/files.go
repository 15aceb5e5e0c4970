package files

import (
	"errors"
	"net/http"
	"sort"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api/envelope"
	"github.com/agentengine/agentengine/api/internal/caller"
	"github.com/agentengine/agentengine/api/internal/limit"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/host/attach"
	"github.com/agentengine/agentengine/host/workspace"
)

// Prefix is the action API's path prefix (api/actions.Prefix).
const Prefix = "/agentengine/api/v1/"

// Deps are what the actions serve from. A nil Uploads leaves out UploadFile and
// AttachmentContent; an empty Workspaces map leaves out the workspace actions.
type Deps struct {
	Uploads *attach.Store
	// Workspaces maps agent (project) names to their workspaces. Requests without
	// AgentId use the only one; with several hosted agents AgentId is required. A
	// per-user workspace serves the caller's own (workspace.Workspace.For).
	Workspaces map[string]*workspace.Workspace
	// DefaultUser is the user of the operator's requests that name none (default "user",
	// as the host's).
	DefaultUser string
	Logger      hclog.Logger
}

// Actions returns the handlers by action name; Method tells each one's HTTP method.
func Actions(d Deps) map[string]gin.HandlerFunc {
	if d.Logger == nil {
		d.Logger = hclog.NewNullLogger()
	}
	if d.DefaultUser == "" {
		d.DefaultUser = "user"
	}
	h := &handlers{d: d}
	out := map[string]gin.HandlerFunc{}
	if d.Uploads != nil {
		out["UploadFile"] = h.uploadFile
		out["AttachmentContent"] = h.attachmentContent
	}
	if len(d.Workspaces) > 0 {
		out["ListWorkspaceFiles"] = h.listWorkspace
		out["GetWorkspaceFileContent"] = h.workspaceContent
		out["AddWorkspaceFile"] = h.addWorkspaceFile
		out["DeleteWorkspaceFile"] = h.deleteWorkspaceFile
		out["ExportWorkspaceZip"] = h.exportWorkspace
	}
	return out
}

// Methods returns the HTTP methods an action is served on (nil for unknown ones).
func Methods(action string) []string {
	switch action {
	case "UploadFile", "AddWorkspaceFile", "DeleteWorkspaceFile":
		return []string{http.MethodPost}
	case "AttachmentContent", "GetWorkspaceFileContent", "ExportWorkspaceZip":
		return []string{http.MethodGet, http.MethodHead}
	case "ListWorkspaceFiles":
		return []string{http.MethodPost, http.MethodGet}
	}
	return nil
}

// Surface mounts the actions on a router. In a server it is an extension of api/actions
// (actions.Config.Extensions), which owns the prefix and answers its errors.
type Surface struct{ actions map[string]gin.HandlerFunc }

// NewSurface builds the surface.
func NewSurface(d Deps) *Surface { return &Surface{actions: Actions(d)} }

// Prefix is the path prefix of the actions.
func (s *Surface) Prefix() string { return Prefix }

// Register mounts every action on its methods.
func (s *Surface) Register(r gin.IRouter) {
	names := make([]string, 0, len(s.actions))
	for n := range s.actions {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, m := range Methods(n) {
			r.Handle(m, Prefix+n, s.actions[n])
		}
	}
}

type handlers struct{ d Deps }

// user is who the request acts as (api/internal/caller): a caller bound to a user (its
// API key, the trusted user header) is that user, whatever UserId says; the operator's
// request is the UserId it names, else the default user.
func (h *handlers) user(c *gin.Context, named string) (string, *apiError) {
	if named != "" {
		if err := host.ValidateID(named); err != nil {
			return "", invalid("UserId: %v", err)
		}
	}
	return caller.From(c.Request.Context()).Resolve(h.d.DefaultUser, named), nil
}

// workspaceFor picks the workspace of an agent for the request's user: the agent's
// shared one, or the user's own.
func (h *handlers) workspaceFor(c *gin.Context, agentID, userID string) (*workspace.Workspace, *apiError) {
	w, e := h.agentWorkspace(agentID)
	if e != nil {
		return nil, e
	}
	user, e := h.user(c, userID)
	if e != nil {
		return nil, e
	}
	uw, err := w.For(user)
	if err != nil {
		return nil, h.internal("workspace", err)
	}
	return uw, nil
}

func (h *handlers) agentWorkspace(agentID string) (*workspace.Workspace, *apiError) {
	if agentID == "" {
		if len(h.d.Workspaces) == 1 {
			for _, w := range h.d.Workspaces {
				return w, nil
			}
		}
		return nil, missing("AgentId")
	}
	if w, ok := h.d.Workspaces[agentID]; ok {
		return w, nil
	}
	return nil, notFound("agent %q not found", agentID)
}

// fromWorkspace maps a workspace error to an answer.
func (h *handlers) fromWorkspace(action string, err error) *apiError {
	switch {
	case errors.Is(err, workspace.ErrInvalidPath):
		return invalid("%s", err.Error())
	case errors.Is(err, workspace.ErrNotFound):
		return notFound("no such file or directory in the workspace")
	case errors.Is(err, workspace.ErrNotEmpty):
		return &apiError{Status: http.StatusConflict, Code: codeConflict, Message: "the directory is not empty"}
	case errors.Is(err, workspace.ErrConflict):
		return &apiError{Status: http.StatusConflict, Code: codeConflict, Message: err.Error()}
	case errors.Is(err, workspace.ErrTooLarge):
		return tooLarge("the file is larger than the workspace upload limit")
	}
	return h.internal(action, err)
}

func (h *handlers) internal(action string, err error) *apiError {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge("%s", limit.TooLarge(mbe.Limit))
	}
	h.d.Logger.Error("file action failed", "action", action, "error", err)
	return envelope.Internal()
}
