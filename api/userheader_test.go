package api

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/api/actions"
	"github.com/agentengine/agentengine/api/adkweb"
)

// The user header is trusted only when configured (Config.UserHeader). Unconfigured, a
// client's X-AgentEngine-User changes nothing: the request is the operator's (the
// default user, or the user it names). Configured, the header binds the request to its
// user on every surface, and a malformed one is a 400 in the surface's shape; a
// tokens-file key's user wins over it.
func TestUserHeaderTrustedOnlyWhenConfigured(t *testing.T) {
	rt := newRuntime(t)
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("alice-key-0123456789 alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := LoadTokens(tokens, nil)
	if err != nil {
		t.Fatal(err)
	}
	router := func(header string) http.Handler {
		ui, err := actions.New(actions.Config{Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		return newRouter(Config{Runtime: rt, UserHeader: header, AuthToken: "shared-token-0123456789", Tokens: keys,
			Surfaces: []Surface{adkweb.New(adkweb.Config{Runtime: rt}), ui}})
	}
	shared := []string{"Authorization", "Bearer shared-token-0123456789"}
	claimBob := append([]string{"X-AgentEngine-User", "bob"}, shared...)
	respOf := func(r http.Handler, headers ...string) string {
		t.Helper()
		res := serve(t, r, "POST", "/v1/responses", `{"model":"echo","input":"hi"}`, headers...)
		if res.status != http.StatusOK {
			t.Fatalf("create: %d %v", res.status, res.body)
		}
		return res.body["id"].(string)
	}

	open := router("")
	// The header is ignored: the response is the default user's.
	id := respOf(open, claimBob...)
	if res := serve(t, open, "GET", "/v1/responses/"+id, "", shared...); res.status != http.StatusOK {
		t.Errorf("unconfigured: the default user reads it: %d", res.status)
	}
	// A malformed header is not looked at either.
	if res := serve(t, open, "GET", "/v1/models", "", append([]string{"X-AgentEngine-User", "a\x01b"}, shared...)...); res.status != http.StatusOK {
		t.Errorf("unconfigured, malformed header: %d", res.status)
	}
	// The operator names the ADK user in the path, header or not.
	if res := serve(t, open, "POST", "/apps/echo/users/alice/sessions", `{}`, claimBob...); res.status != http.StatusOK {
		t.Errorf("unconfigured ADK path: %d %v", res.status, res.body)
	}

	proxied := router("X-AgentEngine-User")
	id = respOf(proxied, claimBob...)
	if res := serve(t, proxied, "GET", "/v1/responses/"+id, "", claimBob...); res.status != http.StatusOK {
		t.Errorf("configured: bob reads his: %d", res.status)
	}
	if res := serve(t, proxied, "GET", "/v1/responses/"+id, "", shared...); res.status != http.StatusNotFound {
		t.Errorf("configured: the default user reads bob's: %d", res.status)
	}
	if res := serve(t, proxied, "POST", "/apps/echo/users/alice/sessions", `{}`, claimBob...); res.status != http.StatusNotFound {
		t.Errorf("configured: bob creates alice's ADK session: %d", res.status)
	}
	// alice's key wins over the header.
	id = respOf(proxied, "Authorization", "Bearer alice-key-0123456789", "X-AgentEngine-User", "bob")
	if res := serve(t, proxied, "GET", "/v1/responses/"+id, "", claimBob...); res.status != http.StatusNotFound {
		t.Errorf("a key's response read by the header's user: %d", res.status)
	}
	if res := serve(t, proxied, "GET", "/v1/responses/"+id, "", "Authorization", "Bearer alice-key-0123456789"); res.status != http.StatusOK {
		t.Errorf("alice reads hers: %d", res.status)
	}
	// A malformed header is a 400 in each surface's shape.
	bad := append([]string{"X-AgentEngine-User", strings.Repeat("u", 300)}, shared...)
	if res := serve(t, proxied, "GET", "/v1/models", "", bad...); res.status != http.StatusBadRequest || errCode(res) != "invalid_value" {
		t.Errorf("openai: %d %v", res.status, res.body)
	}
	if res := serve(t, proxied, "GET", "/list-apps", "", bad...); res.status != http.StatusBadRequest || !strings.Contains(res.body["detail"].(string), "X-AgentEngine-User") {
		t.Errorf("adk: %d %v", res.status, res.body)
	}
	if res := serve(t, proxied, "POST", actions.Prefix+"ListSessions", `{"AgentId":"echo"}`, bad...); res.status != http.StatusBadRequest || res.body["Code"] != actions.CodeInvalidParameter {
		t.Errorf("actions: %d %v", res.status, res.body)
	}
}
