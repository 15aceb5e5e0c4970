package adkweb

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api/internal/limit"
	"github.com/agentengine/agentengine/host"
)

// Defaults.
const (
	DefaultKeepAlive    = 15 * time.Second
	DefaultMaxBodyBytes = 32 << 20
)

// Config configures the ADK-web surface.
type Config struct {
	Runtime *host.Runtime
	Logger  hclog.Logger
	// KeepAlive is the interval of SSE comments on idle /run_sse streams.
	KeepAlive time.Duration
	// MaxBodyBytes caps request bodies; larger ones get 413.
	MaxBodyBytes int64
	// Version is what GET /version reports (default "dev").
	Version string
}

// Handler serves the ADK-web routes.
type Handler struct {
	rt        *host.Runtime
	log       hclog.Logger
	keepAlive time.Duration
	maxBody   int64
	version   string
}

// New builds the surface. A nil Runtime is a programming error and panics, as in
// api.NewRouter, so that the surface can be built inline in api.Config.Surfaces.
func New(cfg Config) *Handler {
	if cfg.Runtime == nil {
		panic("adkweb: a host runtime is required")
	}
	h := &Handler{rt: cfg.Runtime, log: cfg.Logger, keepAlive: cfg.KeepAlive, maxBody: cfg.MaxBodyBytes, version: cfg.Version}
	if h.log == nil {
		h.log = hclog.NewNullLogger()
	}
	if h.keepAlive <= 0 {
		h.keepAlive = DefaultKeepAlive
	}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	if h.version == "" {
		h.version = "dev"
	}
	return h
}

// Register mounts the routes on r.
func (h *Handler) Register(r gin.IRouter) {
	r.GET("/list-apps", h.listApps)
	r.GET("/version", h.getVersion)
	r.POST("/run", h.run)
	r.POST("/run_sse", h.runSSE)
	s := r.Group("/apps/:app/users/:user/sessions")
	s.GET("", h.listSessions)
	s.POST("", h.createSession)
	s.GET("/:session", h.getSession)
	s.POST("/:session", h.createSessionWithID)
	s.PATCH("/:session", h.patchSession)
	s.DELETE("/:session", h.deleteSession)
}

// Prefix is the path prefix whose middleware errors (auth, origin, size) are written in
// this surface's shape; Owns adds the routes outside it.
func (h *Handler) Prefix() string { return "/apps/" }

// Owns reports the paths besides Prefix whose middleware errors are written in this
// surface's shape (api.PathOwner).
func (h *Handler) Owns(path string) bool {
	switch path {
	case "/run", "/run_sse", "/list-apps", "/version":
		return true
	}
	return false
}

// WriteError writes {"detail": message} (api.ErrorWriter).
func (h *Handler) WriteError(c *gin.Context, status int, _ string, message string) {
	writeError(c, detail(status, "%s", message))
}

// readJSON reads a request body within the size limit. Bodies must be JSON (or carry no
// Content-Type): a browser can send text/plain or form bodies cross-site without a
// preflight, so accepting them would open the run endpoints to forged requests.
func (h *Handler) readJSON(c *gin.Context) ([]byte, *httpError) {
	if ct := c.GetHeader("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return nil, detail(http.StatusUnsupportedMediaType, "the request body must be JSON (Content-Type: application/json)")
		}
	}
	tooLarge := detail(http.StatusRequestEntityTooLarge, "%s", limit.TooLarge(h.maxBody))
	if c.Request.ContentLength > h.maxBody {
		return nil, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, h.maxBody))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, tooLarge
	}
	if err != nil {
		return nil, &httpError{Status: http.StatusBadRequest, Detail: "could not read the request body", Err: err}
	}
	return body, nil
}

// writeJSON writes v without HTML escaping.
func writeJSON(c *gin.Context, status int, v any) {
	c.Render(status, jsonRender{v})
}

type jsonRender struct{ v any }

func (r jsonRender) Render(w http.ResponseWriter) error {
	r.WriteContentType(w)
	return newJSONEncoder(w).Encode(r.v)
}

func (r jsonRender) WriteContentType(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
}
