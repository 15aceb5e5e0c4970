// Package api assembles agentengine's HTTP surfaces on one gin engine, behind the
// security defaults: loopback Host names only (DNS rebinding), no cross-origin browser
// requests unless allowed, an optional bearer token, and a request body limit.
package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/metrics"
)

// Surface is a protocol surface (the OpenAI-compatible API, ADK's, the Web UI's action
// API, the UI itself), mounted on the router the same way: its routes, the paths it
// owns, and its error shape, in which the router's middleware (auth, origin, size, no
// route) answers requests on those paths.
type Surface interface {
	// Register mounts the surface's routes.
	Register(r gin.IRouter)
	// Owns reports whether the surface owns path: its errors there are the surface's.
	// No two surfaces own a path.
	Owns(path string) bool
	ErrorWriter
}

// ErrorWriter writes an error in a surface's shape.
type ErrorWriter interface {
	WriteError(c *gin.Context, status int, code, message string)
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
	// Tokens). It names no user: its holder is the operator (see UserHeader).
	AuthToken string
	// Tokens, when set, are API keys that each act as one user: a request with one is
	// that user on every surface, whatever it sends.
	Tokens *Tokens
	// UserHeader names a request header a trusted reverse proxy sets to the
	// authenticated user ("X-AgentEngine-User"); a request carrying it acts as that user
	// only. Empty (the default) trusts no header. A Tokens key's user wins over it.
	UserHeader string
	// RateLimit caps each user's requests per minute (a token bucket holding a minute's
	// worth); over it a request gets 429 with Retry-After. 0: no limit.
	RateLimit int
	// Logins, when set, serves GET /login?code=… and accepts its session cookie as the
	// shared token, so that a browser can use a server that requires a key.
	Logins *Logins
	// BodyReadTimeout bounds reading a request's body (default 2 minutes), so that a
	// client sending it slowly cannot hold a connection; it is set before auth, so it
	// also bounds what the server drains of a refused request's body.
	BodyReadTimeout time.Duration
	// Metrics, when set, counts the requests answered and the streams open. With
	// MetricsRoute the router also serves them on GET /metrics, behind its auth (else
	// the caller serves Metrics.Handler on a listener of its own).
	Metrics      *metrics.Metrics
	MetricsRoute bool
	// Trace, when set, runs first on every request: it starts the request's server span
	// (OpenTelemetry's gin middleware), which the turn's spans are children of.
	Trace gin.HandlerFunc
	// Surfaces are mounted in order. The first one's error shape is also that of the
	// paths no surface owns.
	Surfaces []Surface
}

// NewRouter builds the engine with /health and the surfaces. Set gin's mode (gin.SetMode) before calling it. A nil Runtime is
// a programming error and panics.
func NewRouter(cfg Config) *gin.Engine {
	if cfg.Runtime == nil {
		panic("api: NewRouter needs a host runtime")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = httpx.DefaultMaxBodyBytes
	}
	if cfg.BodyReadTimeout <= 0 {
		cfg.BodyReadTimeout = DefaultBodyReadTimeout
	}
	g := &guard{cfg: cfg, surfaces: cfg.Surfaces}
	if cfg.RateLimit > 0 {
		g.limiter = newRateLimiter(cfg.RateLimit, nil)
	}

	r := gin.New()
	r.HandleMethodNotAllowed = true
	if cfg.Trace != nil {
		r.Use(cfg.Trace)
	}
	if cfg.Metrics != nil {
		r.Use(observe(cfg.Metrics)) // first: it also counts the requests the guards refuse
	}
	r.Use(g.recovery, g.bodyDeadline, g.hostCheck, g.originCheck, g.auth, g.rateLimit, g.bodyLimit)
	// The body limit above is the only one: the surfaces read bodies within it.
	r.Use(httpx.Limited(cfg.MaxBodyBytes))
	r.GET("/health", g.health)
	r.GET("/healthz", g.health)
	r.GET("/readyz", g.ready)
	if cfg.Logins != nil {
		r.GET("/login", g.login)
	}
	if cfg.Metrics != nil && cfg.MetricsRoute {
		r.GET("/metrics", gin.WrapH(cfg.Metrics.Handler()))
	}
	for _, s := range cfg.Surfaces {
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

// fail writes an error in the shape of the surface that owns the path (the first
// surface's when none does) and ends the request.
func (g *guard) fail(c *gin.Context, status int, code, message string) {
	defer c.Abort()
	if c.Request.ContentLength != 0 && c.Request.Body != nil && c.Request.Body != http.NoBody {
		// The body is refused unread: the connection is closed rather than drained, so
		// the answer goes out now, not once net/http has read (or waited for) the body.
		c.Header("Connection", "close")
	}
	for _, s := range g.surfaces {
		if s.Owns(c.Request.URL.Path) {
			s.WriteError(c, status, code, message)
			return
		}
	}
	if len(g.surfaces) > 0 {
		g.surfaces[0].WriteError(c, status, code, message)
		return
	}
	c.JSON(status, gin.H{"error": gin.H{"code": code, "message": message}})
}

// health serves GET /health and /healthz, the liveness probe: it answers while the
// process serves. Agent names are only listed to authorised callers.
func (g *guard) health(c *gin.Context) {
	agents := []string{}
	body := gin.H{"status": "ok", "agents": agents}
	if g.authorised(c) {
		for _, a := range g.cfg.Runtime.Agents() {
			agents = append(agents, a.Name)
		}
		body["agents"] = agents
		// Agents that failed to build, import or start, with the error to fix.
		if bad := g.cfg.Runtime.Unavailable(); len(bad) > 0 {
			u := make(map[string]string, len(bad))
			for _, a := range bad {
				u[a.Name] = a.Error
			}
			body["unavailable"] = u
		}
		// Agents serving their last good version because a reload of their edited code
		// failed, with the error to fix.
		if bad := g.cfg.Runtime.ReloadErrors(); len(bad) > 0 {
			u := make(map[string]string, len(bad))
			for _, a := range bad {
				u[a.Name] = a.Error
			}
			body["reload_errors"] = u
		}
	}
	c.JSON(http.StatusOK, body)
}

// ready serves GET /readyz, the readiness probe: 503 while the session store takes no
// writes (a full disk, a database that is gone) or an agent's runner cannot start (it
// failed and waits to retry), so that a load balancer sends turns elsewhere. The reason
// is the runtime's client-safe message; the cause is logged.
func (g *guard) ready(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 5*time.Second)
	defer cancel()
	if err := g.cfg.Runtime.Ready(ctx); err != nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "reason": host.ClientMessage(err)})
		return
	}
	c.JSON(http.StatusOK, gin.H{"status": "ready"})
}
