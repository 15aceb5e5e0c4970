// Package api assembles agentengine's HTTP surfaces on one gin engine, behind the
// security defaults: loopback Host names only (DNS rebinding), no cross-origin browser
// requests unless allowed, an optional bearer token, and a request body limit.
package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/host"
)

// Surface is a protocol surface mounted on the router.
type Surface interface {
	// Register mounts the surface's routes.
	Register(r gin.IRouter)
	// Prefix is the path prefix the surface owns ("/v1/").
	Prefix() string
}

// ErrorWriter is implemented by surfaces whose errors have their own shape; the
// security middleware answers requests under the surface's prefix with it.
type ErrorWriter interface {
	WriteError(c *gin.Context, status int, code, message string)
}

// PathOwner is implemented by surfaces that own paths outside their Prefix (ADK's /run);
// middleware errors on those paths are written in the surface's shape too.
type PathOwner interface {
	Owns(path string) bool
}

// Server timeouts for an http.Server serving the router (see NewServer).
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultBodyReadTimeout   = 2 * time.Minute
)

// NewServer returns an http.Server for h with the timeouts slow clients need: headers
// within ReadHeaderTimeout, idle keep-alive connections closed after IdleTimeout. There is
// no ReadTimeout: it would also cut the long streams (SSE) this server answers with
// (net/http cancels a request whose connection read times out); the router bounds body
// reads per request instead (Config.BodyReadTimeout).
func NewServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: DefaultReadHeaderTimeout, IdleTimeout: DefaultIdleTimeout}
}

// Config configures the router.
type Config struct {
	Runtime *host.Runtime
	Logger  hclog.Logger
	// MaxBodyBytes caps request bodies (default 32 MiB); larger ones get 413.
	MaxBodyBytes int64
	// AllowedOrigins lists browser origins ("http://localhost:5173") allowed to call
	// the API cross-origin; "*" allows any. Same-origin requests are always allowed.
	AllowedOrigins []string
	// LoopbackOrigins also allows every loopback origin (http://127.0.0.1, localhost,
	// [::1], any port), for a server bound to loopback: such pages (a UI's dev server)
	// run on the same machine.
	LoopbackOrigins bool
	// AllowedHosts lists extra Host header names (without port) accepted besides the
	// loopback names; "*" accepts any (for deployments behind a trusted proxy).
	AllowedHosts []string
	// AuthToken, when set, is required as "Authorization: Bearer <token>" (or a key of
	// Tokens). It does not name a user: requests choose theirs (X-AgentEngine-User).
	AuthToken string
	// Tokens, when set, are API keys that each act as one user: a request with one is
	// that user on every surface, whatever it sends.
	Tokens *Tokens
	// Logins, when set, serves GET /login?code=… and accepts its session cookie as the
	// shared token, so that a browser can use a server that requires a key.
	Logins *Logins
	// BodyReadTimeout bounds reading a request's body (default 2 minutes), so that a
	// client sending it slowly cannot hold a connection; it is set before auth, so it
	// also bounds what the server drains of a refused request's body.
	BodyReadTimeout time.Duration
	// KeepAlive is the SSE keep-alive interval (default 15 s).
	KeepAlive time.Duration
	// Surfaces are mounted after the OpenAI-compatible one.
	Surfaces []Surface
	// KsadkAgents are the agents whose project selects KsADK's shapes on the
	// OpenAI-compatible API (openai_compat: ksadk).
	KsadkAgents []string
}

// NewRouter builds the engine with /health, the OpenAI-compatible surface and any
// further surfaces. Set gin's mode (gin.SetMode) before calling it. A nil Runtime is
// a programming error and panics.
func NewRouter(cfg Config) *gin.Engine {
	if cfg.Runtime == nil {
		panic("api: NewRouter needs a host runtime")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = openai.DefaultMaxBodyBytes
	}
	if cfg.BodyReadTimeout <= 0 {
		cfg.BodyReadTimeout = DefaultBodyReadTimeout
	}
	oa, err := openai.New(openai.Config{Runtime: cfg.Runtime, Logger: cfg.Logger.Named("openai"),
		KeepAlive: cfg.KeepAlive, MaxBodyBytes: cfg.MaxBodyBytes, KsadkAgents: cfg.KsadkAgents})
	if err != nil {
		panic("api: " + err.Error()) // only a nil runtime fails, checked above
	}
	surfaces := append([]Surface{oa}, cfg.Surfaces...)
	g := &guard{cfg: cfg, surfaces: surfaces}

	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.Use(g.recovery, g.bodyDeadline, g.hostCheck, g.originCheck, g.auth, g.bodyLimit)
	r.GET("/health", g.health)
	r.GET("/healthz", g.health)
	r.GET("/readyz", g.ready)
	if cfg.Logins != nil {
		r.GET("/login", g.login)
	}
	for _, s := range surfaces {
		s.Register(r)
	}
	r.NoRoute(func(c *gin.Context) {
		g.fail(c, http.StatusNotFound, "not_found", "no route for "+c.Request.Method+" "+c.Request.URL.Path)
	})
	r.NoMethod(func(c *gin.Context) {
		g.fail(c, http.StatusMethodNotAllowed, "method_not_allowed", "method "+c.Request.Method+" is not allowed on "+c.Request.URL.Path)
	})
	return r
}

// fail writes an error in the shape of the surface that owns the path (OpenAI's
// envelope by default).
func (g *guard) fail(c *gin.Context, status int, code, message string) {
	for _, s := range g.surfaces {
		ew, ok := s.(ErrorWriter)
		if !ok {
			continue
		}
		po, _ := s.(PathOwner)
		if strings.HasPrefix(c.Request.URL.Path, s.Prefix()) || (po != nil && po.Owns(c.Request.URL.Path)) {
			ew.WriteError(c, status, code, message)
			c.Abort()
			return
		}
	}
	openai.WriteError(c, status, code, message)
	c.Abort()
}

// health serves GET /health and /healthz, the liveness probe: it answers while the
// process serves. Agent names are only listed to authorised callers.
func (g *guard) health(c *gin.Context) {
	agents := []string{}
	if g.authorised(c) {
		for _, a := range g.cfg.Runtime.Agents() {
			agents = append(agents, a.Name)
		}
	}
	c.JSON(http.StatusOK, gin.H{"status": "ok", "agents": agents})
}

// ready serves GET /readyz, the readiness probe: 503 while the session store takes no
// writes (a full disk, a database that is gone), so that a load balancer sends turns
// elsewhere. The cause is logged, not shown.
func (g *guard) ready(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 5*time.Second)
	defer cancel()
	if err := g.cfg.Runtime.Ready(ctx); err != nil {
		g.cfg.Logger.Warn("not ready", "error", err)
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "reason": "the session store does not take writes"})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready"})
}
