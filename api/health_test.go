package api

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// fullDisk is a session store whose session writes fail while full is set.
type fullDisk struct {
	session.Store
	full atomic.Bool
}

func (s *fullDisk) CreateSession(ctx context.Context, key session.Key) (session.Session, error) {
	if s.full.Load() {
		return session.Session{}, errors.New("database or disk is full")
	}
	return s.Store.CreateSession(ctx, key)
}

// Liveness (/health, /healthz) answers while the store is full; readiness (/readyz)
// says 503 then, without the cause, and 200 again once the store takes writes. All
// three are open without the token.
func TestLivenessAndReadiness(t *testing.T) {
	st := &fullDisk{Store: memory.New()}
	client, stop := inprocess.Serve(echoagent.New())
	rt, err := host.New(host.Config{Store: st, Agents: []host.Agent{{Name: "echo", Runner: client}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Close(ctx)
		stop()
	})
	r := newRouter(Config{Runtime: rt, AuthToken: "secret"})
	for _, full := range []bool{false, true, false} {
		st.full.Store(full)
		want := http.StatusOK
		if full {
			want = http.StatusServiceUnavailable
		}
		for path, code := range map[string]int{"/health": http.StatusOK, "/healthz": http.StatusOK, "/readyz": want} {
			if res := serve(t, r, "GET", path, ""); res.status != code {
				t.Errorf("full=%v: GET %s = %d %v, want %d", full, path, res.status, res.body, code)
			}
		}
	}
	if res := serve(t, r, "GET", "/readyz", ""); res.body["status"] != "ready" {
		t.Errorf("ready body %v", res.body)
	}
	// The probe leaves no session behind.
	if list, _, err := st.ListSessions(context.Background(), "agentengine:ready", "agentengine:ready", session.ListQuery{}); err != nil || len(list) != 0 {
		t.Errorf("probe sessions left: %v %v", list, err)
	}
}
