package host_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/host/workspace"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// fileAgent reports files the way the DeepAgents bridge does.
type fileAgent struct{}

func (fileAgent) Info() pluginsdk.Info { return pluginsdk.Info{Name: "files", Framework: "deepagents"} }

func (fileAgent) Run(_ context.Context, _ *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	for _, f := range []map[string]any{
		{"path": "/notes/plan.md", "content": "# Plan", "encoding": "utf-8", "deleted": false},
		{"path": "/bin.dat", "content": "AAEC", "encoding": "base64", "deleted": false},
		{"path": "/gone.txt", "content": "x", "encoding": "utf-8", "deleted": false},
		{"path": "/gone.txt", "content": nil, "encoding": nil, "deleted": true},
		{"path": "/never.txt", "content": nil, "deleted": true}, // deleting nothing is fine
		{"path": "../escape.txt", "content": "no", "encoding": "utf-8"},
	} {
		if err := emit.Native(host.NativeWorkspaceFile, f); err != nil {
			return err
		}
	}
	return emit.Text("done")
}

func TestWorkspaceFileEventsLandInTheAgentsWorkspace(t *testing.T) {
	dir := t.TempDir()
	ws, err := workspace.Open(workspace.Config{Dir: filepath.Join(dir, "ws")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "files", Runner: serve(t, fileAgent{}), Workspace: ws}}})
	_, evs := runTurn(t, rt, host.TurnRequest{App: "files", Input: text("write")})
	if st := terminal(t, evs); st.Status != session.StatusCompleted {
		t.Fatalf("status %q", st.Status)
	}
	entries, _, err := ws.List(context.Background(), ".", true)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range entries {
		if !e.IsDir() {
			paths = append(paths, e.Path)
		}
	}
	sort.Strings(paths)
	if len(paths) != 2 || paths[0] != "bin.dat" || paths[1] != "notes/plan.md" {
		t.Fatalf("workspace files = %q", paths)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "ws", "bin.dat")); string(b) != "\x00\x01\x02" {
		t.Errorf("base64 file = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "ws", "notes", "plan.md")); string(b) != "# Plan" {
		t.Errorf("text file = %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "escape.txt")); err == nil {
		t.Error("a path outside the workspace was written")
	}
}

// With per-user workspaces, the files an agent writes land in the workspace of the user
// whose turn it is.
func TestWorkspaceFileEventsLandInTheUsersWorkspace(t *testing.T) {
	ws, err := workspace.Open(workspace.Config{Dir: filepath.Join(t.TempDir(), "workspaces"), PerUser: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "files", Runner: serve(t, fileAgent{}), Workspace: ws}}})
	_, evs := runTurn(t, rt, host.TurnRequest{App: "files", User: "alice", Input: text("write")})
	if st := terminal(t, evs); st.Status != session.StatusCompleted {
		t.Fatalf("status %q", st.Status)
	}
	alice, _ := ws.For("alice")
	f, ent, err := alice.Open("notes/plan.md")
	if err != nil || ent.Path != "notes/plan.md" {
		t.Fatalf("alice's workspace: %v", err)
	}
	f.Close()
	bob, _ := ws.For("bob")
	if entries, _, err := bob.List(context.Background(), ".", true); err != nil || len(entries) != 0 {
		t.Errorf("bob's workspace: %v, %v", entries, err)
	}
}
