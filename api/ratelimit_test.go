package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/api/actions"
	"github.com/agentengine/agentengine/api/adkweb"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session/memory"
)

// A user over the cap of runs in progress gets 429 with Retry-After.
func TestTooManyRunsIs429(t *testing.T) {
	client, stop := inprocess.Serve(echoagent.New())
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "echo", Runner: client}}, MaxRunsPerUser: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Close(ctx)
		stop()
	})
	r := newRouter(Config{Runtime: rt})
	post := func(body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/v1/responses", strings.NewReader(body))
		req.Host = "127.0.0.1"
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		return w
	}
	if w := post(`{"model":"echo","background":true,"input":"a b c d e f","model_options":{"delay_ms":2000}}`); w.Code != http.StatusOK {
		t.Fatalf("first run: %d %s", w.Code, w.Body)
	}
	w := post(`{"model":"echo","input":"hi"}`)
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "rate_limit_exceeded") {
		t.Errorf("second run: %d %v %s", w.Code, w.Header(), w.Body)
	}
}

// The token bucket: a minute's worth of requests at once, then one per 60/N seconds;
// Retry-After says when the next one is due; users do not share buckets.
func TestRateLimiterBucket(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	l := newRateLimiter(3, func() time.Time { return now })
	for _, step := range []struct {
		advance   time.Duration
		user      string
		ok        bool
		wantRetry time.Duration
	}{
		{0, "alice", true, 0},
		{0, "alice", true, 0},
		{0, "alice", true, 0},
		{0, "alice", false, 20 * time.Second}, // 3 a minute: one token every 20 s
		{0, "bob", true, 0},                   // another user's bucket is full
		{5 * time.Second, "alice", false, 15 * time.Second},
		{15 * time.Second, "alice", true, 0},
		{0, "alice", false, 20 * time.Second},
		{10 * time.Minute, "alice", true, 0}, // refilled, never above the minute's worth
		{0, "alice", true, 0},
		{0, "alice", true, 0},
		{0, "alice", false, 20 * time.Second},
	} {
		now = now.Add(step.advance)
		ok, retry := l.take(step.user)
		if ok != step.ok || (!ok && (retry < step.wantRetry-time.Millisecond || retry > step.wantRetry+time.Millisecond)) {
			t.Fatalf("at %v %s: ok=%v retry=%v, want ok=%v retry=%v", now, step.user, ok, retry, step.ok, step.wantRetry)
		}
	}
	// Idle users' buckets are dropped once they have refilled.
	now = now.Add(2 * time.Minute)
	l.take("carol")
	if _, kept := l.buckets["alice"]; kept || len(l.buckets) != 1 {
		t.Errorf("buckets after a sweep: %v", l.buckets)
	}
}

// Over the rate, every surface answers 429 in its own error shape with a Retry-After of
// when the next request is due (not the generic 1 s); the limit is per user, and the
// probes are not counted.
func TestRateLimitPerSurface(t *testing.T) {
	rt := newRuntime(t)
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("alice-key-0123456789 alice\nbob-key-0123456789ab bob\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := LoadTokens(tokens, nil)
	if err != nil {
		t.Fatal(err)
	}
	ui, err := actions.New(actions.Config{Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, method, path, body string
		shape                    func(map[string]any) bool
	}{
		{"openai", "GET", "/v1/models", "", func(b map[string]any) bool { return errCode(result{body: b}) == "rate_limit_exceeded" }},
		{"adk", "GET", "/version", "", func(b map[string]any) bool {
			d, _ := b["detail"].(string)
			return strings.Contains(d, "2 a minute")
		}},
		{"actions", "POST", actions.Prefix + "ListSessions", `{"AgentId":"echo"}`, func(b map[string]any) bool {
			return b["Code"] == actions.CodeTooManyRequests && strings.Contains(b["Message"].(string), "2 a minute")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRouter(Config{Runtime: rt, Tokens: keys, RateLimit: 2,
				Surfaces: []Surface{adkweb.New(adkweb.Config{Runtime: rt}), ui}})
			alice := []string{"Authorization", "Bearer alice-key-0123456789"}
			for i := 0; i < 2; i++ {
				if res := serve(t, r, tt.method, tt.path, tt.body, alice...); res.status != http.StatusOK {
					t.Fatalf("request %d: %d %v", i, res.status, res.body)
				}
			}
			res := serve(t, r, tt.method, tt.path, tt.body, alice...)
			if res.status != http.StatusTooManyRequests || !tt.shape(res.body) {
				t.Fatalf("third request: %d %v", res.status, res.body)
			}
			// 2 a minute: the next token is due in (just under) 30 s.
			if s, err := strconv.Atoi(res.header.Get("Retry-After")); err != nil || s < 20 || s > 30 {
				t.Errorf("Retry-After %q", res.header.Get("Retry-After"))
			}
			if res := serve(t, r, tt.method, tt.path, tt.body, "Authorization", "Bearer bob-key-0123456789ab"); res.status != http.StatusOK {
				t.Errorf("bob: %d %v", res.status, res.body)
			}
			if res := serve(t, r, "GET", "/healthz", "", alice...); res.status != http.StatusOK {
				t.Errorf("probe: %d", res.status)
			}
		})
	}
	// Without a limit nothing is refused.
	r := newRouter(Config{Runtime: rt})
	for i := 0; i < 50; i++ {
		if res := serve(t, r, "GET", "/v1/models", ""); res.status != http.StatusOK {
			t.Fatalf("unlimited request %d: %d", i, res.status)
		}
	}
}
