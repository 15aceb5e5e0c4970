package main_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/internal/apitest"
)

// --user-header: the named header binds the caller (no header is trusted without the
// flag); --rate-limit: a user over it gets 429 with Retry-After; per-user workspaces by
// default, each under the project's .agentengine/ui/workspaces.
func TestUserHeaderRateLimitAndWorkspaceFlags(t *testing.T) {
	call := func(base, method, path, body string, headers ...string) (int, http.Header, string) {
		t.Helper()
		code, h, b := apitest.Do(t, base, method, path, body, headers...)
		return code, h, string(b)
	}
	respID := func(b string) string {
		var r struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal([]byte(b), &r)
		return r.ID
	}
	bob := []string{"X-AgentEngine-User", "bob"}

	dir := copyProject(t)
	s := startServer(t, dir, "--session-backend", "memory", "--user-header", "X-AgentEngine-User", "--rate-limit", "4")
	code, _, b := call(s.url, "POST", "/v1/responses", `{"model":"echo-go","input":"hi"}`, bob...)
	if code != http.StatusOK {
		t.Fatalf("bob's turn: %d %s", code, b)
	}
	id := respID(b)
	if code, _, b := call(s.url, "GET", "/v1/responses/"+id, ""); code != http.StatusNotFound {
		t.Errorf("the default user reads bob's response: %d %s", code, b)
	}
	if code, _, b := call(s.url, "GET", "/v1/responses/"+id, "", bob...); code != http.StatusOK {
		t.Errorf("bob reads his response: %d %s", code, b)
	}
	if code, _, b := call(s.url, "POST", "/agentengine/api/v1/AddWorkspaceFile?Path=n.txt", "", bob...); code == http.StatusNotFound {
		t.Errorf("workspace actions missing: %s", b)
	}
	// bob has spent 3 requests, this is his 4th; the next is over the limit, the
	// default user's is not.
	if code, _, b := call(s.url, "GET", "/v1/models", "", bob...); code != http.StatusOK {
		t.Errorf("bob's 4th request: %d %s", code, b)
	}
	code, h, b := call(s.url, "GET", "/v1/models", "", bob...)
	if code != http.StatusTooManyRequests || h.Get("Retry-After") == "" || !strings.Contains(b, "rate_limit_exceeded") {
		t.Errorf("bob over the limit: %d %v %s", code, h, b)
	}
	if code, _, b := call(s.url, "GET", "/v1/models", ""); code != http.StatusOK {
		t.Errorf("the default user: %d %s", code, b)
	}
	if _, err := os.Stat(filepath.Join(dir, ".agentengine", "ui", "workspaces")); err != nil {
		t.Errorf("per-user workspace root: %v", err)
	}

	// Without --user-header the header is ignored: bob's claim makes the default user's.
	plain := startServer(t, copyProject(t), "--session-backend", "memory")
	code, _, b = call(plain.url, "POST", "/v1/responses", `{"model":"echo-go","input":"hi"}`, bob...)
	if code != http.StatusOK {
		t.Fatalf("turn: %d %s", code, b)
	}
	if code, _, b := call(plain.url, "GET", "/v1/responses/"+respID(b), ""); code != http.StatusOK {
		t.Errorf("the default user reads the response bob claimed: %d %s", code, b)
	}
}
