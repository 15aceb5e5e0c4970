package api

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/caller"
	"github.com/agentengine/agentengine/api/internal/limit"
	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/host"
)

// guard holds the router's middleware.
type guard struct {
	cfg      Config
	surfaces []Surface
	limiter  *rateLimiter // nil: no rate limit
}

// recovery turns a handler panic into a logged 500 instead of a dropped connection.
func (g *guard) recovery(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(v)
			}
			g.cfg.Logger.Error("handler panic", "method", c.Request.Method, "path", c.Request.URL.Path, "panic", v)
			g.fail(c, http.StatusInternalServerError, "server_error", "The server had an error while processing your request.")
		}
	}()
	c.Next()
}

// hostCheck rejects Host names other than loopback (or the configured ones): a web
// page can point its own DNS name at 127.0.0.1 (DNS rebinding) and would then be
// same-origin with this server as far as the browser knows.
func (g *guard) hostCheck(c *gin.Context) {
	h := c.Request.Host
	if name, _, err := net.SplitHostPort(h); err == nil {
		h = name
	}
	h = strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
	if isLoopbackName(h) {
		c.Next()
		return
	}
	for _, a := range g.cfg.AllowedHosts {
		if a == "*" || strings.EqualFold(a, h) {
			c.Next()
			return
		}
	}
	g.fail(c, http.StatusForbidden, "forbidden_host", "requests for host "+c.Request.Host+" are not accepted; configure allowed hosts to serve other names")
}

func isLoopbackName(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// originCheck rejects cross-origin browser requests unless the origin is allowed, and
// answers CORS preflights for allowed ones.
func (g *guard) originCheck(c *gin.Context) {
	origin := c.GetHeader("Origin")
	if origin == "" {
		// Browsers omit Origin on some cross-site GETs but label them.
		if c.GetHeader("Sec-Fetch-Site") == "cross-site" {
			g.fail(c, http.StatusForbidden, "forbidden_origin", "cross-site requests are not accepted")
			return
		}
		c.Next()
		return
	}
	same := sameOrigin(origin, c.Request.Host)
	allowed := same || g.originAllowed(origin)
	if !allowed {
		g.fail(c, http.StatusForbidden, "forbidden_origin", "cross-origin requests from "+origin+" are not accepted; configure allowed origins to permit them")
		return
	}
	if !same {
		h := c.Writer.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "X-AgentEngine-Session-Id, X-AgentEngine-Invocation-Id, X-Request-Id, Content-Location, Location, X-Pagination-Next")
		if c.Request.Method == http.MethodOptions && c.GetHeader("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE, OPTIONS")
			allow := "Authorization, Content-Type, X-AgentEngine-Extensions, X-AgentEngine-Compat, X-AgentEngine-Session-Id, OpenAI-Organization, OpenAI-Project, X-Stainless-Lang, X-Stainless-Package-Version, X-Stainless-OS, X-Stainless-Arch, X-Stainless-Runtime, X-Stainless-Runtime-Version, X-Stainless-Retry-Count, X-Stainless-Timeout, X-Api-Key, Last-Event-ID"
			if g.cfg.UserHeader != "" {
				allow += ", " + g.cfg.UserHeader
			}
			h.Set("Access-Control-Allow-Headers", allow)
			h.Set("Access-Control-Max-Age", "600")
			c.AbortWithStatus(http.StatusNoContent)
			return
		}
	}
	c.Next()
}

func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

func (g *guard) originAllowed(origin string) bool {
	if g.cfg.LoopbackOrigins {
		if u, err := url.Parse(origin); err == nil && (u.Scheme == "http" || u.Scheme == "https") && isLoopbackName(strings.ToLower(u.Hostname())) {
			return true
		}
	}
	for _, a := range g.cfg.AllowedOrigins {
		if a == "*" || strings.EqualFold(strings.TrimSuffix(a, "/"), origin) {
			return true
		}
	}
	return false
}

// auth requires a key when one is configured and stores who the caller is (identify)
// for every surface. The probes stay open (/health hides agent names from unauthorised
// callers).
func (g *guard) auth(c *gin.Context) {
	id, ok, bad := g.identify(c)
	if ok {
		if bad != nil {
			g.fail(c, http.StatusBadRequest, "invalid_value", bad.Error())
			return
		}
		c.Request = c.Request.WithContext(caller.With(c.Request.Context(), id))
		c.Next()
		return
	}
	if (isProbe(c.Request.URL.Path) || (c.Request.URL.Path == "/login" && g.cfg.Logins != nil)) && c.Request.Method == http.MethodGet {
		c.Next()
		return
	}
	c.Header("WWW-Authenticate", `Bearer realm="agentengine"`)
	// The body is not read: the connection is not reused rather than drained.
	c.Header("Connection", "close")
	g.fail(c, http.StatusUnauthorized, "invalid_api_key", "a valid bearer token is required (Authorization: Bearer <token>, or X-Api-Key: <token>)")
}

func isProbe(path string) bool {
	return path == "/health" || path == "/healthz" || path == "/readyz"
}

func (g *guard) authorised(c *gin.Context) bool {
	_, ok, _ := g.identify(c)
	return ok
}

// identify is the one place that decides who a request is, for every surface: a
// tokens-file key binds the request to its user (a user header is ignored); else, when
// a trusted user header is configured (UserHeader) and sent, its user is bound; else
// the request is the operator's (no key configured, the shared token, a login cookie).
// ok is false when a key is required and no valid one came; bad is a malformed header.
func (g *guard) identify(c *gin.Context) (id caller.Identity, ok bool, bad error) {
	user, pinned, ok := g.key(c)
	switch {
	case !ok:
		return id, false, nil
	case pinned:
		return caller.Identity{User: user, Bound: true}, true, nil
	}
	if g.cfg.UserHeader == "" {
		return id, true, nil
	}
	u := c.GetHeader(g.cfg.UserHeader)
	if u == "" {
		return id, true, nil
	}
	if err := host.ValidateID(u); err != nil {
		return id, true, fmt.Errorf("the %s header is not a valid user id: %w", g.cfg.UserHeader, err)
	}
	return caller.Identity{User: u, Bound: true}, true, nil
}

// key checks the request's key and returns the user a tokens-file key acts as (pinned);
// the shared token, a login cookie or no key configured pin nobody.
func (g *guard) key(c *gin.Context) (user string, pinned, ok bool) {
	if g.cfg.AuthToken == "" && g.cfg.Tokens == nil {
		return "", false, true
	}
	// The scheme is case-insensitive (RFC 9110 §11.1): "bearer" is as good as "Bearer".
	scheme, tok, found := strings.Cut(strings.TrimSpace(c.GetHeader("Authorization")), " ")
	found = found && strings.EqualFold(scheme, "Bearer")
	if !found {
		// LangGraph's clients (langgraph-sdk, RemoteGraph) send their API key as X-Api-Key.
		// A custom header: a browser sends it cross-origin only after the origin check's
		// preflight.
		tok = c.GetHeader("X-Api-Key")
		found = strings.TrimSpace(tok) != ""
	}
	if !found {
		if g.cfg.Logins != nil {
			if sid, err := c.Cookie(LoginCookie); err == nil && g.cfg.Logins.valid(sid) {
				return "", false, true
			}
		}
		return "", false, false
	}
	tok = strings.TrimSpace(tok)
	if g.cfg.AuthToken != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(g.cfg.AuthToken)) == 1 {
		return "", false, true
	}
	if g.cfg.Tokens != nil {
		user, ok = g.cfg.Tokens.User(tok)
		return user, ok, ok
	}
	return "", false, false
}

// bodyDeadline sets a read deadline on the connection for the request's body and lifts
// it once the body has been read to its end. A body not read to its end (a refused
// request) keeps the deadline, which bounds what the server drains of it.
func (g *guard) bodyDeadline(c *gin.Context) {
	if c.Request.Body == nil || c.Request.Body == http.NoBody || c.Request.ContentLength == 0 {
		c.Next()
		return
	}
	rc := http.NewResponseController(c.Writer)
	if err := rc.SetReadDeadline(time.Now().Add(g.cfg.BodyReadTimeout)); err != nil {
		c.Next() // not a net/http connection (a test recorder)
		return
	}
	c.Request.Body = &deadlineBody{ReadCloser: c.Request.Body, rc: rc}
	c.Next()
}

// deadlineBody lifts the connection's read deadline at the body's end, so that the
// server's wait for the client going away (while a long response streams) never times out.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// bodyLimit rejects bodies over the limit: at once when Content-Length says so, and
// while reading otherwise (handlers map the read error to 413).
func (g *guard) bodyLimit(c *gin.Context) {
	if c.Request.ContentLength > g.cfg.MaxBodyBytes {
		// fail closes the connection, which lets the answer go out now: net/http would
		// otherwise try to drain the unread body before writing it, waiting on a client
		// that sends only headers (one waiting on "Expect: 100-continue") until the body
		// read deadline.
		rc := http.NewResponseController(c.Writer)
		_ = rc.EnableFullDuplex() // reading after the answer is sent (linger below)
		g.fail(c, http.StatusRequestEntityTooLarge, "request_too_large", limit.TooLarge(g.cfg.MaxBodyBytes))
		g.linger(c, rc)
		return
	}
	if c.Request.Body != nil {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, g.cfg.MaxBodyBytes)
	}
	c.Next()
}

// lingerTimeout bounds how long a refused body is read and dropped after the answer.
const lingerTimeout = time.Second

// linger sends the answer, then reads and drops what a client already sending the body
// sends for a moment before the connection closes: closing a socket with unread data
// resets it, and the reset can destroy the answer before the client reads it. A client
// that sends nothing (it waits on "Expect: 100-continue", which it is never sent) is
// waited for no longer than lingerTimeout.
func (g *guard) linger(c *gin.Context, rc *http.ResponseController) {
	if err := rc.Flush(); err != nil || c.Request.Body == nil {
		return
	}
	if err := rc.SetReadDeadline(time.Now().Add(lingerTimeout)); err != nil {
		return
	}
	_, _ = io.CopyN(io.Discard, c.Request.Body, 2*g.cfg.MaxBodyBytes)
}

var _ ErrorWriter = (*openai.Handler)(nil)
