package openai

import (
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api/internal/caller"
	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
)

// Request headers this surface reads.
const (
	// HeaderUser is the conventional name of the trusted user header a reverse proxy
	// sets (api.Config.UserHeader, off by default); the router, not this surface, reads it.
	HeaderUser = "X-AgentEngine-User"
	// HeaderExtensions opts in to KsADK extension events: a comma-separated list of
	// tool_result (Responses) and reasoning (chat reasoning_content deltas).
	HeaderExtensions = "X-AgentEngine-Extensions"
	// HeaderSession carries the session id of a chat completion.
	HeaderSession = "X-AgentEngine-Session-Id"
	// HeaderCompat selects the shapes of one request: "ksadk" for KsADK's (tool calls
	// as function_call items, approval pauses incomplete, KsADK's stream), "openai"
	// for OpenAI's even when the agent's project selects KsADK's.
	HeaderCompat = "X-AgentEngine-Compat"
)

// Values of HeaderCompat and of a project's openai_compat.
const (
	CompatOpenAI = "openai"
	CompatKsadk  = "ksadk"
)

// Defaults.
const (
	DefaultKeepAlive  = 15 * time.Second
	DefaultCancelWait = 10 * time.Second
)

// Config configures the OpenAI-compatible surface.
type Config struct {
	Runtime *host.Runtime
	Logger  hclog.Logger
	// KeepAlive is the interval of ": ping" comments on idle streams.
	KeepAlive time.Duration
	// MaxBodyBytes caps request bodies of the surface served on its own (default 32 MiB;
	// under api.NewRouter the router's limit is the only one); larger ones get 413.
	MaxBodyBytes int64
	// CancelWait bounds how long POST /v1/responses/{id}/cancel waits for the run to
	// end before answering with its current state.
	CancelWait time.Duration
	// KsadkAgents are the agents whose project selects KsADK's shapes by default
	// (openai_compat: ksadk); a request's X-AgentEngine-Compat header overrides it.
	KsadkAgents []string
}

// Handler serves /v1/responses, /v1/chat/completions, /v1/models and /v1/conversations.
type Handler struct {
	rt         *host.Runtime
	log        hclog.Logger
	keepAlive  time.Duration
	maxBody    int64
	cancelWait time.Duration
	started    int64 // the "created" of models
	ksadk      map[string]bool
}

// New builds the surface. A nil Runtime is a programming error and panics, as in
// api.NewRouter, so that the surface can be built inline in api.Config.Surfaces.
func New(cfg Config) *Handler {
	if cfg.Runtime == nil {
		panic("openai: a host runtime is required")
	}
	h := &Handler{rt: cfg.Runtime, log: cfg.Logger, keepAlive: cfg.KeepAlive, maxBody: cfg.MaxBodyBytes,
		cancelWait: cfg.CancelWait, started: time.Now().Unix(), ksadk: map[string]bool{}}
	for _, a := range cfg.KsadkAgents {
		h.ksadk[a] = true
	}
	if h.log == nil {
		h.log = hclog.NewNullLogger()
	}
	if h.keepAlive <= 0 {
		h.keepAlive = DefaultKeepAlive
	}
	if h.cancelWait <= 0 {
		h.cancelWait = DefaultCancelWait
	}
	return h
}

// Owns reports the paths of this surface (api.Surface): everything under /v1/.
func (h *Handler) Owns(path string) bool { return strings.HasPrefix(path, "/v1/") }

// WriteError writes an error in this surface's shape (api.Surface).
func (h *Handler) WriteError(c *gin.Context, status int, code, message string) {
	WriteError(c, status, code, message)
}

// Register mounts the routes on r.
func (h *Handler) Register(r gin.IRouter) {
	v1 := r.Group("/v1")
	v1.POST("/responses", handleBody(h, parseResponsesRequest, h.createResponse))
	v1.GET("/responses/:id", handle(h.getResponse))
	v1.DELETE("/responses/:id", handle(h.deleteResponse))
	v1.POST("/responses/:id/cancel", handle(h.cancelResponse))
	v1.GET("/responses/:id/input_items", handle(h.listInputItems))
	v1.POST("/chat/completions", handleBody(h, parseChatRequest, h.createChatCompletion))
	v1.GET("/models", handle(h.listModels))
	v1.GET("/models/:id", handle(h.getModel))
	h.registerConversations(v1)
}

// handle adapts a handler that returns its error, writing it as an envelope.
func handle(fn func(*gin.Context) *apiError) gin.HandlerFunc {
	return httpx.Handle(writeAPIError, fn)
}

// readJSON reads a JSON request body within the size limit.
func (h *Handler) readJSON(c *gin.Context) ([]byte, *apiError) {
	body, e := httpx.ReadJSON(c, h.maxBody)
	if e != nil {
		return nil, &apiError{Status: e.Status, Type: typeInvalidRequest, Code: e.Code, Message: e.Message}
	}
	return body, nil
}

// user resolves the tenant: the caller the router identified (api/internal/caller);
// an operator's request may name one in the body (the first non-empty field), else the
// runtime's default user.
func (h *Handler) user(c *gin.Context, fromBody ...string) (string, *apiError) {
	return caller.From(c.Request.Context()).Resolve(h.rt.DefaultUser(), fromBody...), nil
}

// ksadkShapes reports whether a request about agent gets KsADK's shapes: the
// X-AgentEngine-Compat header, else the agent's project setting.
func (h *Handler) ksadkShapes(c *gin.Context, agent string) (bool, *apiError) {
	switch v := strings.ToLower(strings.TrimSpace(c.GetHeader(HeaderCompat))); v {
	case CompatKsadk:
		return true, nil
	case CompatOpenAI:
		return false, nil
	case "":
		return h.ksadk[agent], nil
	default:
		return false, badRequest("", "unsupported_value", "the %s header must be %s or %s, not %q", HeaderCompat, CompatOpenAI, CompatKsadk, v)
	}
}

// extension reports whether the client opted in to an extension by header.
func extension(c *gin.Context, name string) bool {
	for _, v := range c.Request.Header.Values(HeaderExtensions) {
		for _, tok := range strings.Split(v, ",") {
			if t := strings.TrimSpace(tok); strings.EqualFold(t, name) || t == "*" {
				return true
			}
		}
	}
	return false
}
