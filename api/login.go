package api

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// Logins lets a browser use a server that requires a key: the operator opens a one-time
// login URL (printed when the server starts), which sets an HttpOnly, SameSite=Strict
// session cookie. A cookie is as good as the shared token (AuthToken). SameSite=Strict
// and the Origin check keep other sites from riding on it.
type Logins struct {
	mu       sync.Mutex
	code     string
	expires  time.Time
	sessions map[string]bool
}

// LoginCookie names the session cookie.
const LoginCookie = "agentengine_session"

// NewLogins returns the logins of a server with one login code, valid once within ttl.
func NewLogins(ttl time.Duration) *Logins {
	return &Logins{code: randomHex(24), expires: time.Now().Add(ttl), sessions: map[string]bool{}}
}

// Code is the one-time login code (for the URL /login?code=…).
func (l *Logins) Code() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.code
}

// redeem trades the login code for a new session id, once.
func (l *Logins) redeem(code string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.code == "" || time.Now().After(l.expires) || subtle.ConstantTimeCompare([]byte(code), []byte(l.code)) != 1 {
		return "", false
	}
	l.code = "" // one use
	sid := randomHex(32)
	l.sessions[sid] = true
	return sid, true
}

func (l *Logins) valid(sid string) bool {
	if sid == "" {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sessions[sid]
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("api: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// login serves GET /login?code=…: a valid code sets the session cookie and sends the
// browser to the UI.
func (g *guard) login(c *gin.Context) {
	sid, ok := g.cfg.Logins.redeem(c.Query("code"))
	if !ok {
		g.fail(c, http.StatusUnauthorized, "invalid_login", "this login link is invalid, used or expired; restart the server for a new one")
		return
	}
	//nolint:gosec // G124: Secure when the request came over TLS; over plain HTTP the browser would not send a Secure cookie back
	http.SetCookie(c.Writer, &http.Cookie{Name: LoginCookie, Value: sid, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.Request.TLS != nil})
	c.Header("Cache-Control", "no-store")
	c.Redirect(http.StatusSeeOther, "/")
}
