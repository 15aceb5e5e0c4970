package langgraph

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/internal/apitest"
	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session/memory"
)

// LangGraph's clients send their key as X-Api-Key: a tokens-file key is its user there,
// as on every surface, and errors keep the surface's shape.
func TestAPIKeysAreUsers(t *testing.T) {
	client, stop := inprocess.Serve(echoagent.New())
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "echo", Framework: "langgraph", Runner: client}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("alice-key-0123456789 alice\nbob-key-0123456789ab bob\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := api.LoadTokens(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := api.NewRouter(api.Config{Runtime: rt, Tokens: tokens, Surfaces: []api.Surface{New(Config{Runtime: rt})}})
	e := &env{t: t, rt: rt, url: apitest.Serve(t, r, rt, stop).URL}
	alice, bob := []string{"X-Api-Key", "alice-key-0123456789"}, []string{"X-Api-Key", "bob-key-0123456789ab"}

	e.fail("POST", "/threads", `{}`, http.StatusUnauthorized, "a valid bearer token is required")
	e.fail("POST", "/threads", `{}`, http.StatusUnauthorized, "X-Api-Key", "X-Api-Key", "wrong-key-0123456789")
	tid := e.thread(`{}`, alice...)
	e.obj("POST", "/threads/"+tid+"/runs/wait", runBody("echo", "hi"), http.StatusOK, alice...)
	e.fail("GET", "/threads/"+tid, "", http.StatusNotFound, "not found", bob...)
	if l := e.list("POST", "/threads/search", `{}`, http.StatusOK, bob...); len(l) != 0 {
		t.Fatalf("bob sees %v", l)
	}
	// The key's user wins over the user header a client might send.
	e.fail("GET", "/threads/"+tid, "", http.StatusNotFound, "not found", "X-Api-Key", "bob-key-0123456789ab", "X-AgentEngine-User", "alice")
	sessions, _, err := rt.ListSessions(t.Context(), "echo", "alice", sessionsQuery())
	if err != nil || len(sessions) != 1 || sessions[0].ID != tid {
		t.Fatalf("alice's sessions: %v %v", sessions, err)
	}
}
