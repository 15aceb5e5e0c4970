package api

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/caller"
)

// rateLimiter is a token bucket per user: each holds a minute's worth of requests and
// refills at perMinute a minute, so a user may burst up to the limit and then keeps to
// the rate. Buckets that have refilled are dropped, so memory follows the active users.
type rateLimiter struct {
	perMinute float64
	now       func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newRateLimiter(perMinute int, now func() time.Time) *rateLimiter {
	if now == nil {
		now = time.Now
	}
	return &rateLimiter{perMinute: float64(perMinute), now: now, buckets: map[string]*bucket{}, swept: now()}
}

// take spends one of user's tokens; when none is left it reports how long until one is.
func (l *rateLimiter) take(user string) (ok bool, retry time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b := l.buckets[user]
	if b == nil {
		b = &bucket{tokens: l.perMinute, last: now}
		l.buckets[user] = b
	}
	b.tokens = math.Min(l.perMinute, b.tokens+now.Sub(b.last).Minutes()*l.perMinute)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.perMinute * float64(time.Minute))
}

// sweep drops, once a minute, the buckets that are full again (idle a minute or more):
// a new bucket starts full, so nothing is lost.
func (l *rateLimiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	for u, b := range l.buckets {
		if now.Sub(b.last) >= time.Minute {
			delete(l.buckets, u)
		}
	}
}

// rateLimit answers 429 with Retry-After, in the surface's error shape, to a user over
// the request rate. A request bound to a user (its key, the trusted user header) counts
// against that user; the operator's requests share one bucket. The probes, the login
// and the browser UI's static files are not counted.
func (g *guard) rateLimit(c *gin.Context) {
	if g.limiter == nil || rateExempt(c.Request.URL.Path) {
		c.Next()
		return
	}
	id := caller.From(c.Request.Context())
	user := id.User
	if !id.Bound {
		user = "" // the operator
	}
	ok, retry := g.limiter.take(user)
	if ok {
		c.Next()
		return
	}
	secs := max(1, int(math.Ceil(retry.Seconds())))
	c.Header("Retry-After", strconv.Itoa(secs)) // the surfaces' error writers keep it
	g.fail(c, http.StatusTooManyRequests, "rate_limit_exceeded",
		fmt.Sprintf("too many requests: the limit is %d a minute per user; retry after %d s", g.cfg.RateLimit, secs))
}

func rateExempt(path string) bool {
	return isProbe(path) || path == "/login" || path == "/" || strings.HasPrefix(path, "/static/")
}
