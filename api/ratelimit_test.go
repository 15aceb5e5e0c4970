package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
