package runnerproc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/host/runnerproc"
	"github.com/agentengine/agentengine/internal/testutil"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
	"github.com/agentengine/agentengine/session/sqlite"
	"github.com/agentengine/agentengine/wire"
)

// An interrupted LangGraph run resumes after its runner process is SIGKILLed and after a
// host restart: the checkpoints live in the host's session store, not in the runner.

const interruptGraph = `
from typing import TypedDict
from langgraph.graph import START, StateGraph
from langgraph.types import interrupt

class S(TypedDict):
    query: str
    answer: str

def node(state: S):
    answer = interrupt({"name": "deploy", "args": {"target": state["query"]}})
    return {"answer": f"deployed {state['query']}={answer['approve']}"}

b = StateGraph(S)
b.add_node("node", node)
b.add_edge(START, "node")
graph = b.compile()
`

// testPythonName is the interpreter the Python tests use: $AGENTENGINE_PYTHON, else
// $PYTHON (what scripts/test.sh and .ci/run set), else python3.
func testPythonName() string {
	for _, name := range []string{"AGENTENGINE_PYTHON", "PYTHON"} {
		if py := os.Getenv(name); py != "" {
			return py
		}
	}
	return "python3"
}

// langgraphPython returns an interpreter with langgraph and the runner SDK's
// dependencies (testPythonName), or skips (fails in CI).
func langgraphPython(t *testing.T, pythonPath string) string {
	t.Helper()
	py := testPythonName()
	cmd := exec.Command(py, "-c", "import grpc, langgraph, agentengine_adapters.langgraph_bridge")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pythonPath)
	out, err := cmd.CombinedOutput()
	if err == nil {
		py, err = exec.LookPath(py) // the supervisor takes absolute interpreter paths only
	}
	if err != nil {
		msg := fmt.Sprintf("%s cannot run the LangGraph bridge (%v):\n%s\nset AGENTENGINE_PYTHON to a Python with langgraph, grpcio and protobuf", py, err, out)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return py
}

type pyAgent struct {
	sup   *runnerproc.Supervisor
	rt    *host.Runtime
	store session.Store
}

func startPyAgent(t *testing.T, py, pythonPath, project string, store session.Store) *pyAgent {
	t.Helper()
	sup, _ := newSupervisor(t, runnerproc.Config{
		Name:    "lg",
		Command: []string{py, "-u", "-m", "agentengine_adapters"},
		Dir:     project,
		Env: []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "PYTHONPATH=" + pythonPath,
			"AGENTENGINE_PROJECT_DIR=" + project, "AGENTENGINE_FRAMEWORK=langgraph", "AGENTENGINE_AGENT_NAME=lg",
			"AGENTENGINE_ENTRY_POINT=agent.py", "AGENTENGINE_AGENT_VARIABLE=graph",
		},
		StartTimeout: 60 * time.Second,
	})
	if err := sup.Start(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	rt, err := host.New(host.Config{Store: store, Agents: []host.Agent{{Name: "lg", Framework: "langgraph", Runner: sup}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Recover(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Close(ctx)
	})
	return &pyAgent{sup: sup, rt: rt, store: store}
}

func (a *pyAgent) turn(t *testing.T, req host.TurnRequest) (*host.Run, session.RunStatusData, string) {
	t.Helper()
	req.App = "lg"
	r, err := a.rt.Start(context.Background(), req)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	evs, err := r.Wait(ctx)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	var st session.RunStatusData
	var text strings.Builder
	for _, e := range evs {
		if e.Kind != host.KindStored {
			continue
		}
		switch e.Stored.Type {
		case session.TypeRunStatus:
			_ = json.Unmarshal(e.Stored.Data, &st)
		case session.TypeAssistantMessage:
			var m session.AssistantMessageData
			_ = json.Unmarshal(e.Stored.Data, &m)
			text.WriteString(m.Text)
		}
	}
	return r, st, text.String()
}

// interrupt runs a turn that stops on the graph's interrupt and returns the session and
// the approval request's id.
func (a *pyAgent) interrupt(t *testing.T, target string) (string, string) {
	t.Helper()
	r, st, _ := a.turn(t, host.TurnRequest{Input: host.Input{Content: []session.ContentBlock{{Type: "input_text", Text: target}}}})
	if st.Status != session.StatusInterrupted {
		t.Fatalf("first turn: status %q, error %+v", st.Status, st.Error)
	}
	pending, err := a.rt.PendingApprovals(context.Background(), r.Key)
	if err != nil || len(pending) != 1 || pending[0].Name != "deploy" {
		t.Fatalf("pending approvals = %+v, %v", pending, err)
	}
	if cps, err := a.store.Checkpoints(context.Background(), r.Key); err != nil || len(cps) == 0 {
		t.Fatalf("the interrupted run left no checkpoints with the host (%v)", err)
	}
	return r.Key.ID, pending[0].ID
}

func (a *pyAgent) resume(t *testing.T, sessionID, approvalID, want string) {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"type": "mcp_approval_response", "approval_request_id": approvalID, "approve": true})
	_, st, text := a.turn(t, host.TurnRequest{SessionID: sessionID, Input: host.Input{Resumes: []host.Resume{{ApprovalRequestID: approvalID, Approve: true, Raw: raw}}}})
	if st.Status != session.StatusCompleted || !strings.Contains(text, want) {
		t.Fatalf("resume: status %q (error %+v), text %q; want completed with %q", st.Status, st.Error, text, want)
	}
	// The finished run's thread is done with: the host keeps nothing for the session.
	key := session.Key{App: "lg", User: a.rt.DefaultUser(), ID: sessionID}
	if cps, err := a.store.Checkpoints(context.Background(), key); err != nil || len(cps) != 0 {
		t.Fatalf("checkpoints after the run finished = %d, %v", len(cps), err)
	}
}

// killRunner SIGKILLs the runner's process group and waits until the supervisor sees it
// gone; the next turn starts a new process.
func (a *pyAgent) killRunner(t *testing.T) {
	t.Helper()
	pid := a.sup.PID()
	if pid == 0 {
		t.Fatal("no runner process to kill")
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() error {
		if a.sup.PID() == pid {
			return errors.New("the supervisor still reports the killed runner")
		}
		return nil
	})
}

// bridgePython returns the repository root, the PYTHONPATH of the runner SDK and the
// adapters, and an interpreter that runs the LangGraph bridge with them (or skips).
func bridgePython(t *testing.T) (repo, pythonPath, py string) {
	t.Helper()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pythonPath = filepath.Join(repo, "pluginsdk", "python", "src") + string(os.PathListSeparator) + filepath.Join(repo, "adapters")
	return repo, pythonPath, langgraphPython(t, pythonPath)
}

func TestPythonInterruptSurvivesRunnerKillAndHostRestart(t *testing.T) {
	_, pythonPath, py := bridgePython(t)
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "agent.py"), []byte(interruptGraph), 0o644); err != nil {
		t.Fatal(err)
	}
	noProjectFiles := func(t *testing.T) {
		t.Helper()
		entries, _ := os.ReadDir(project)
		for _, e := range entries {
			if e.Name() != "agent.py" && e.Name() != "__pycache__" {
				t.Errorf("the runner wrote %s into the project", e.Name())
			}
		}
	}

	t.Run("memory/runner killed", func(t *testing.T) {
		a := startPyAgent(t, py, pythonPath, project, memory.New())
		sess, apr := a.interrupt(t, "prod")
		a.killRunner(t)
		a.resume(t, sess, apr, "deployed prod=True")
		noProjectFiles(t)
	})

	path := filepath.Join(t.TempDir(), "sessions.sqlite")
	openStore := func(t *testing.T) session.Store {
		st, err := sqlite.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	t.Run("sqlite/runner killed", func(t *testing.T) {
		a := startPyAgent(t, py, pythonPath, project, openStore(t))
		sess, apr := a.interrupt(t, "staging")
		a.killRunner(t)
		a.resume(t, sess, apr, "deployed staging=True")
	})
	t.Run("sqlite/host restarted", func(t *testing.T) {
		store := openStore(t)
		a := startPyAgent(t, py, pythonPath, project, store)
		sess, apr := a.interrupt(t, "eu")
		// The whole host goes: runtime, runner and store; a new one opens the same file.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.rt.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := a.sup.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if err := store.Close(); err != nil {
			t.Fatal(err)
		}
		b := startPyAgent(t, py, pythonPath, project, openStore(t))
		b.resume(t, sess, apr, "deployed eu=True")
		noProjectFiles(t)
	})
}

// A LangGraph run that failed half-way continues in place (TurnRequest.ContinueFrom)
// in a new runner process, from the checkpoint the host kept: the node that had
// finished does not run again.
func TestPythonFailedRunContinuesInPlaceAfterRunnerKill(t *testing.T) {
	repo, pythonPath, py := bridgePython(t)
	project := t.TempDir()
	// The graph the adapters' tests continue too: its solve node fails while FAIL exists.
	flakyGraph, err := os.ReadFile(filepath.Join(repo, "adapters", "tests", "graphs", "flaky_graph.py"))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"agent.py": string(flakyGraph), "FAIL": ""} {
		if err := os.WriteFile(filepath.Join(project, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := startPyAgent(t, py, pythonPath, project, memory.New())
	r, st, _ := a.turn(t, host.TurnRequest{Input: host.Input{Content: []session.ContentBlock{{Type: "input_text", Text: "paris"}}}})
	if st.Status != session.StatusFailed || st.Error == nil || !strings.Contains(st.Error.Message, "solve failed") {
		t.Fatalf("first run: status %q, error %+v", st.Status, st.Error)
	}
	cps, err := a.store.Checkpoints(context.Background(), r.Key)
	if err != nil {
		t.Fatal(err)
	}
	var ref *wire.CheckpointRef
	for _, cp := range cps {
		if cp.Namespace == "" {
			ref = &wire.CheckpointRef{ThreadID: cp.ThreadID, CheckpointID: cp.ID}
		}
	}
	if ref == nil {
		t.Fatalf("the failed run left no top-level checkpoint with the host: %+v", cps)
	}
	a.killRunner(t)
	if err := os.Remove(filepath.Join(project, "FAIL")); err != nil {
		t.Fatal(err)
	}
	_, st, text := a.turn(t, host.TurnRequest{SessionID: r.Key.ID, ContinueFrom: ref})
	if st.Status != session.StatusCompleted || text != "solved PARIS" {
		t.Fatalf("continued run: status %q (error %+v), text %q", st.Status, st.Error, text)
	}
	if runs, _ := os.ReadFile(filepath.Join(project, "fetch-runs")); string(runs) != "x" {
		t.Fatalf("fetch ran %d times, want once", len(runs))
	}
}
