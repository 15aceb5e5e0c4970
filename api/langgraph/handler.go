package langgraph

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
)

// DefaultKeepAlive is the interval of SSE comments on idle streams.
const DefaultKeepAlive = 15 * time.Second

// DefaultFrameworks are the frameworks whose agents are LangGraph graphs: each becomes an
// assistant.
var DefaultFrameworks = []string{"langgraph", "langchain", "deepagents"}

// Config configures the surface.
type Config struct {
	Runtime *host.Runtime
	Logger  hclog.Logger
	// KeepAlive is the interval of SSE comments on idle streams.
	KeepAlive time.Duration
	// Frameworks selects the agents served as assistants (default DefaultFrameworks).
	Frameworks []string
	// MaxBodyBytes caps request bodies of the surface served on its own (under
	// api.NewRouter the router's limit is the only one).
	MaxBodyBytes int64
	// Version is what GET /info reports (default "dev").
	Version string
}

// Handler serves the LangGraph server routes.
type Handler struct {
	rt         *host.Runtime
	log        hclog.Logger
	keepAlive  time.Duration
	frameworks map[string]bool
	maxBody    int64
	version    string
	// busy serialises the multitask handling of a thread (reject, interrupt, enqueue):
	// two requests for one thread decide one after the other.
	busy keyedMutex
}

// New builds the surface. A nil Runtime is a programming error and panics.
func New(cfg Config) *Handler {
	if cfg.Runtime == nil {
		panic("langgraph: a host runtime is required")
	}
	h := &Handler{rt: cfg.Runtime, log: cfg.Logger, keepAlive: cfg.KeepAlive, maxBody: cfg.MaxBodyBytes,
		version: cfg.Version, frameworks: map[string]bool{}, busy: newKeyedMutex()}
	if h.log == nil {
		h.log = hclog.NewNullLogger()
	}
	if h.keepAlive <= 0 {
		h.keepAlive = DefaultKeepAlive
	}
	if h.version == "" {
		h.version = "dev"
	}
	fw := cfg.Frameworks
	if len(fw) == 0 {
		fw = DefaultFrameworks
	}
	for _, f := range fw {
		h.frameworks[f] = true
	}
	return h
}

// Register mounts the routes (api.Surface).
func (h *Handler) Register(r gin.IRouter) {
	r.GET("/ok", handle(h.ok))
	r.GET("/info", handle(h.info))

	r.POST("/assistants/search", handle(h.searchAssistants))
	r.POST("/assistants/count", handle(h.countAssistants))
	r.GET("/assistants/:aid", handle(h.getAssistant))
	r.GET("/assistants/:aid/graph", handle(h.assistantGraph))
	r.GET("/assistants/:aid/schemas", handle(h.assistantSchemas))
	r.GET("/assistants/:aid/subgraphs", handle(h.assistantSubgraphs))
	r.GET("/assistants/:aid/subgraphs/:ns", handle(h.assistantSubgraphs))

	r.POST("/threads", handle(h.createThread))
	r.POST("/threads/search", handle(h.searchThreads))
	r.POST("/threads/count", handle(h.countThreads))
	r.GET("/threads/:tid", handle(h.getThread))
	r.PATCH("/threads/:tid", handle(h.patchThread))
	r.DELETE("/threads/:tid", handle(h.deleteThread))
	r.POST("/threads/:tid/copy", handle(h.copyThread))
	r.GET("/threads/:tid/state", handle(h.getState))
	r.POST("/threads/:tid/state", handle(h.updateState))
	r.GET("/threads/:tid/state/:cid", handle(h.getStateAt))
	r.POST("/threads/:tid/state/checkpoint", handle(h.getStateCheckpoint))
	r.POST("/threads/:tid/history", handle(h.history))
	r.GET("/threads/:tid/history", handle(h.history))

	r.POST("/threads/:tid/runs", handle(h.createRun))
	r.POST("/threads/:tid/runs/stream", handle(h.streamRun))
	r.POST("/threads/:tid/runs/wait", handle(h.waitRun))
	r.GET("/threads/:tid/runs", handle(h.listRuns))
	r.GET("/threads/:tid/runs/:rid", handle(h.getRun))
	r.GET("/threads/:tid/runs/:rid/join", handle(h.joinRun))
	r.GET("/threads/:tid/runs/:rid/stream", handle(h.joinStream))
	r.POST("/threads/:tid/runs/:rid/cancel", handle(h.cancelRun))

	r.POST("/runs", handle(h.createStatelessRun))
	r.POST("/runs/stream", handle(h.streamStatelessRun))
	r.POST("/runs/wait", handle(h.waitStatelessRun))

	for _, route := range [][2]string{{"PUT", "/store/items"}, {"GET", "/store/items"}, {"DELETE", "/store/items"},
		{"POST", "/store/items/search"}, {"POST", "/store/namespaces"}} {
		r.Handle(route[0], route[1], handle(h.noStore))
	}
}

// noStore answers the store's routes: graphs get no BaseStore backed by agentengine, so
// there is nothing to read or write (501, in LangGraph's error shape).
func (h *Handler) noStore(*gin.Context) *apiError {
	return detail(http.StatusNotImplemented, "the LangGraph store is not offered by this server: graphs get no BaseStore backed by agentengine")
}

// Owns reports the paths of this surface (api.Surface).
func (h *Handler) Owns(path string) bool {
	switch path {
	case "/ok", "/info", "/assistants", "/threads", "/runs", "/store":
		return true
	}
	for _, p := range []string{"/assistants/", "/threads/", "/runs/", "/store/"} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// WriteError writes {"detail": message} (api.Surface), LangGraph's error shape.
func (h *Handler) WriteError(c *gin.Context, status int, _ string, message string) {
	writeError(c, &apiError{Status: status, Detail: message})
}

func handle(fn func(*gin.Context) *apiError) gin.HandlerFunc {
	return httpx.Handle(writeError, fn)
}

func (h *Handler) ok(c *gin.Context) *apiError {
	httpx.WriteJSON(c, 200, gin.H{"ok": true})
	return nil
}

// info describes the server as langgraph-api's /info does; the flags say which optional
// parts are served (none of them here: no assistant versions, crons or store).
func (h *Handler) info(c *gin.Context) *apiError {
	httpx.WriteJSON(c, 200, gin.H{
		"version":              h.version,
		"langgraph_py_version": nil,
		"flags":                gin.H{"assistants": true, "crons": false, "langsmith": false, "langsmith_tracing_replicas": false},
		"host":                 gin.H{"kind": "agentengine", "project_id": nil, "host_revision_id": nil, "revision_id": nil, "tenant_id": nil},
		"metadata":             gin.H{},
	})
	return nil
}
