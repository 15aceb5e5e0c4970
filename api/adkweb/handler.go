package adkweb

import (
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
)

// Defaults.
const (
	DefaultKeepAlive = 15 * time.Second
)

// Config configures the ADK-web surface.
type Config struct {
	Runtime *host.Runtime
	Logger  hclog.Logger
	// KeepAlive is the interval of SSE comments on idle /run_sse streams.
	KeepAlive time.Duration
	// MaxBodyBytes caps request bodies of the surface served on its own (default 32 MiB;
	// under api.NewRouter the router's limit is the only one); larger ones get 413.
	MaxBodyBytes int64
	// Version is what GET /version reports (default "dev").
	Version string
	// Traces, when set, answer the dev UI's debug trace routes (else they answer empty).
	Traces Traces
	// Projects maps ADK apps to their project directories, for the agent builder's
	// routes (builder_handlers.go); apps not in it have nothing to edit.
	Projects map[string]string
}

// Handler serves the ADK-web routes.
type Handler struct {
	rt        *host.Runtime
	log       hclog.Logger
	keepAlive time.Duration
	maxBody   int64
	version   string
	traces    Traces
	projects  map[string]string
}

// New builds the surface. A nil Runtime is a programming error and panics, as in
// api.NewRouter, so that the surface can be built inline in api.Config.Surfaces.
func New(cfg Config) *Handler {
	if cfg.Runtime == nil {
		panic("adkweb: a host runtime is required")
	}
	h := &Handler{rt: cfg.Runtime, log: cfg.Logger, keepAlive: cfg.KeepAlive, maxBody: cfg.MaxBodyBytes, version: cfg.Version, traces: cfg.Traces, projects: cfg.Projects}
	if h.log == nil {
		h.log = hclog.NewNullLogger()
	}
	if h.keepAlive <= 0 {
		h.keepAlive = DefaultKeepAlive
	}
	if h.version == "" {
		h.version = "dev"
	}
	return h
}

// Register mounts the routes on r.
func (h *Handler) Register(r gin.IRouter) {
	r.GET("/list-apps", handle(h.listApps))
	r.GET("/version", handle(h.getVersion))
	r.POST("/run", handle(h.run))
	r.POST("/run_sse", handle(h.runSSE))
	s := r.Group("/apps/:app/users/:user/sessions")
	s.GET("", handle(h.listSessions))
	s.POST("", handle(h.createSession))
	s.GET("/:session", handle(h.getSession))
	s.POST("/:session", handle(h.createSessionWithID))
	s.PATCH("/:session", handle(h.patchSession))
	s.DELETE("/:session", handle(h.deleteSession))
	h.registerTraces(r)
	h.registerDev(r)
	h.registerArtifacts(r)
}

// handle adapts a handler that returns its error, writing it in FastAPI's shape.
func handle(fn func(*gin.Context) *httpError) gin.HandlerFunc {
	return httpx.Handle(writeError, fn)
}

// Owns reports the paths of this surface (api.Surface): everything under /apps/ and
// its routes outside it.
func (h *Handler) Owns(path string) bool {
	switch path {
	case "/run", "/run_sse", "/list-apps", "/version":
		return true
	}
	return strings.HasPrefix(path, "/apps/") || ownsTrace(path) || devOwns(path)
}

// WriteError writes {"detail": message} (api.Surface).
func (h *Handler) WriteError(c *gin.Context, status int, _ string, message string) {
	writeError(c, detail(status, "%s", message))
}

// readJSON reads a JSON request body within the size limit (httpx.ReadJSON).
func (h *Handler) readJSON(c *gin.Context) ([]byte, *httpError) {
	body, e := httpx.ReadJSON(c, h.maxBody)
	if e != nil {
		return nil, &httpError{Status: e.Status, Detail: e.Message, Err: e.Err}
	}
	return body, nil
}
