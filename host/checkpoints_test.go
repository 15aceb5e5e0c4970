package host_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
	"github.com/agentengine/agentengine/session/sqlite"
	"github.com/agentengine/agentengine/wire"
)

// ckptAgent saves a checkpoint step by step and interrupts; a resume records the
// checkpoints the host handed it.
type ckptAgent struct {
	caps     pluginsdk.Capabilities
	mu       sync.Mutex
	got      [][]session.Checkpoint
	payloads []pluginsdk.Payload
}

func (a *ckptAgent) Info() pluginsdk.Info { return pluginsdk.Info{Name: "ckpt", Capabilities: a.caps} }

func (a *ckptAgent) Run(_ context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	a.mu.Lock()
	a.got = append(a.got, req.Checkpoints)
	a.payloads = append(a.payloads, req.Payload)
	a.mu.Unlock()
	if req.Context.IsResume {
		return emit.Text("resumed")
	}
	if c := req.Payload.ContinueFrom; c != nil {
		return emit.Text("continued " + c.ThreadID + " " + c.CheckpointID)
	}
	for _, id := range []string{"c1", "c2"} {
		if err := emit.Checkpoint(session.Checkpoint{ThreadID: "t", ID: id, ParentID: "p", Data: []byte("state " + id)}); err != nil {
			return err
		}
	}
	if err := emit.CheckpointWrite(session.CheckpointWrite{ThreadID: "t", CheckpointID: "c1", TaskID: "old", Channel: "x", Data: []byte("stale")}); err != nil {
		return err
	}
	if err := emit.CheckpointWrite(session.CheckpointWrite{ThreadID: "t", CheckpointID: "c2", TaskID: "task", Index: -3, Channel: "__interrupt__", Data: []byte("ask")}); err != nil {
		return err
	}
	if err := emit.ApprovalRequest(pluginsdk.ApprovalRequest{ID: "apr_1", Name: "act"}); err != nil {
		return err
	}
	return emit.ApprovalRequest(pluginsdk.ApprovalRequest{ID: "apr_2", Name: "other"})
}

func (a *ckptAgent) lastPayload() pluginsdk.Payload {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.payloads[len(a.payloads)-1]
}

func (a *ckptAgent) last() []session.Checkpoint {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.got[len(a.got)-1]
}

func newRuntime(t *testing.T, agent *ckptAgent, store session.Store) *host.Runtime {
	t.Helper()
	return startRuntime(t, host.Config{Store: store, Agents: []host.Agent{{Name: "ckpt", Runner: serve(t, agent)}}})
}

func runTurn(t *testing.T, rt *host.Runtime, req host.TurnRequest) (*host.Run, []host.Event) {
	t.Helper()
	r, err := rt.Start(context.Background(), req)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evs, err := r.Wait(ctx)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	return r, evs
}

func resumeOf(sessionID string) host.TurnRequest {
	return host.TurnRequest{App: "ckpt", SessionID: sessionID, Input: host.Input{Resumes: []host.Resume{{ApprovalRequestID: "apr_1", Approve: true}}}}
}

// An interrupted run's checkpoints are kept by the host and handed to the runner that
// resumes it, from a new host process on the same store too.
func TestCheckpointsOutliveTheRunnerAndTheHost(t *testing.T) {
	want := []session.Checkpoint{{ThreadID: "t", ID: "c2", ParentID: "p", Data: []byte("state c2"),
		Writes: []session.CheckpointWrite{{ThreadID: "t", CheckpointID: "c2", TaskID: "task", Index: -3, Channel: "__interrupt__", Data: []byte("ask")}}}}
	caps := pluginsdk.Capabilities{Resume: true, Checkpoints: true}
	for _, name := range []string{"memory", "sqlite", "memory/unannounced", "sqlite/unannounced"} {
		// An unannounced first turn records its start with its end: checkpoints and all.
		backend, unannounced := strings.CutSuffix(name, "/unannounced")
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sessions.sqlite")
			open := func() session.Store {
				if backend == "memory" {
					return memory.New()
				}
				st, err := sqlite.Open(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
			store := open()
			first := &ckptAgent{caps: caps}
			rt := newRuntime(t, first, store)
			r, evs := runTurn(t, rt, host.TurnRequest{App: "ckpt", Input: text("go"), Unannounced: unannounced})
			if st := terminal(t, evs); st.Status != session.StatusInterrupted {
				t.Fatalf("status %q", st.Status)
			}
			if first.last() != nil {
				t.Fatalf("a new session's first turn got checkpoints %+v", first.last())
			}

			// Another runner process (a restart, another process of the pool).
			second := &ckptAgent{caps: caps}
			rt2 := newRuntime(t, second, store)
			if backend == "sqlite" {
				// A host restart: a new store on the same file.
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := rt.Close(ctx); err != nil {
					t.Fatal(err)
				}
				if err := store.Close(); err != nil {
					t.Fatal(err)
				}
				store = open()
				t.Cleanup(func() { store.Close() })
				rt2 = newRuntime(t, second, store)
			}
			_, evs = runTurn(t, rt2, resumeOf(r.Key.ID))
			if st := terminal(t, evs); st.Status != session.StatusCompleted {
				t.Fatalf("resume status %q", st.Status)
			}
			if got := second.last(); !reflect.DeepEqual(got, want) {
				t.Fatalf("resumed runner got checkpoints\n %+v\nwant\n %+v", got, want)
			}
		})
	}
}

func TestCheckpointsOnlyGoToRunnersThatKeepThem(t *testing.T) {
	store := memory.New()
	saver := &ckptAgent{caps: pluginsdk.Capabilities{Resume: true, Checkpoints: true}}
	r, _ := runTurn(t, newRuntime(t, saver, store), host.TurnRequest{App: "ckpt", Input: text("go")})
	other := &ckptAgent{caps: pluginsdk.Capabilities{Resume: true}}
	runTurn(t, newRuntime(t, other, store), resumeOf(r.Key.ID))
	if got := other.last(); got != nil {
		t.Fatalf("a runner without the checkpoints capability got %+v", got)
	}
}

func TestResumeToARunnerThatCannotResumeIsRejected(t *testing.T) {
	store := memory.New()
	r, _ := runTurn(t, newRuntime(t, &ckptAgent{caps: pluginsdk.Capabilities{Resume: true}}, store), host.TurnRequest{App: "ckpt", Input: text("go")})
	rt := newRuntime(t, &ckptAgent{}, store)
	before, _ := store.Events(context.Background(), r.Key, session.EventQuery{})
	_, err := rt.Start(context.Background(), resumeOf(r.Key.ID))
	var ce *host.ClientError
	if !errors.Is(err, host.ErrInvalidInput) || !errors.As(err, &ce) || ce.Message == "" {
		t.Fatalf("resume to a runner without resume: %v", err)
	}
	after, _ := store.Events(context.Background(), r.Key, session.EventQuery{})
	if len(after) != len(before) {
		t.Fatalf("the rejected resume stored %d events", len(after)-len(before))
	}
}

// Every answer of a resume reaches the runner, each with the approval it answers.
func TestEveryResumeAnswerIsSent(t *testing.T) {
	agent := &ckptAgent{caps: pluginsdk.Capabilities{Resume: true}}
	rt := newRuntime(t, agent, memory.New())
	r, _ := runTurn(t, rt, host.TurnRequest{App: "ckpt", Input: text("go")})
	req := resumeOf(r.Key.ID)
	req.Input.Resumes = append(req.Input.Resumes, host.Resume{ApprovalRequestID: "apr_2", Reason: "no"})
	runTurn(t, rt, req)
	p := agent.lastPayload()
	if len(p.Resumes) != 2 || p.Resumes[0].ApprovalRequestID != "apr_1" || !p.Resumes[0].Approve || p.Resumes[0].Name != "act" ||
		p.Resumes[1].ApprovalRequestID != "apr_2" || p.Resumes[1].Approve || p.Resumes[1].Reason != "no" || p.Resumes[1].Name != "other" {
		t.Fatalf("resumes = %+v", p.Resumes)
	}
	if p.Resume == nil || !reflect.DeepEqual(*p.Resume, p.Resumes[0]) {
		t.Fatalf("resume = %+v, want the first answer", p.Resume)
	}
}

// threadAgent saves a checkpoint of thread "run" and, when the input says so, is done with
// it afterwards in the same run.
type threadAgent struct{}

func (threadAgent) Info() pluginsdk.Info {
	return pluginsdk.Info{Name: "ckpt", Capabilities: pluginsdk.Capabilities{Checkpoints: true}}
}

func (threadAgent) Run(_ context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	if err := emit.Checkpoint(session.Checkpoint{ThreadID: "run", ID: "c1", Data: []byte("s")}); err != nil {
		return err
	}
	if req.InputText() == "finish" {
		if err := emit.DeleteCheckpoints("run"); err != nil {
			return err
		}
	}
	return emit.Text("ok")
}

func TestARunnerDoneWithAThreadDeletesItsCheckpoints(t *testing.T) {
	store := memory.New()
	rt := startRuntime(t, host.Config{Store: store, Agents: []host.Agent{{Name: "ckpt", Runner: serve(t, threadAgent{})}}})
	r, _ := runTurn(t, rt, host.TurnRequest{App: "ckpt", Input: text("keep")})
	if got, _ := store.Checkpoints(context.Background(), r.Key); len(got) != 1 {
		t.Fatalf("kept checkpoints = %+v", got)
	}
	runTurn(t, rt, host.TurnRequest{App: "ckpt", SessionID: r.Key.ID, Input: text("finish")})
	if got, _ := store.Checkpoints(context.Background(), r.Key); len(got) != 0 {
		t.Fatalf("checkpoints of a thread the runner is done with = %+v", got)
	}
}

// A run continues a saved checkpoint thread in place: no input, the runner gets the
// thread and the host's checkpoints. Anything else is refused before anything is stored.
func TestContinueACheckpointInPlace(t *testing.T) {
	store := memory.New()
	agent := &ckptAgent{caps: pluginsdk.Capabilities{Resume: true, Checkpoints: true}}
	rt := newRuntime(t, agent, store)
	r, _ := runTurn(t, rt, host.TurnRequest{App: "ckpt", Input: text("go")})
	sid := r.Key.ID
	cont := func(thread, id string) host.TurnRequest {
		return host.TurnRequest{App: "ckpt", SessionID: sid, ContinueFrom: &wire.CheckpointRef{ThreadID: thread, CheckpointID: id}}
	}
	withInput := cont("t", "c2")
	withInput.Input = text("more")
	noSession := cont("t", "")
	noSession.SessionID = ""
	cannot := newRuntime(t, &ckptAgent{caps: pluginsdk.Capabilities{Resume: true}}, store)
	for _, tc := range []struct {
		name string
		rt   *host.Runtime
		req  host.TurnRequest
		want error
	}{
		{"with input", rt, withInput, host.ErrInvalidInput},
		{"without session", rt, noSession, host.ErrInvalidInput},
		{"without thread", rt, cont("", ""), host.ErrInvalidInput},
		{"unknown thread", rt, cont("other", ""), host.ErrNotFound},
		{"not the latest checkpoint", rt, cont("t", "c1"), host.ErrNotFound},
		{"runner keeps no checkpoints", cannot, cont("t", "c2"), host.ErrInvalidInput},
	} {
		before, _ := store.Events(context.Background(), r.Key, session.EventQuery{})
		_, err := tc.rt.Start(context.Background(), tc.req)
		var ce *host.ClientError
		if !errors.Is(err, tc.want) || !errors.As(err, &ce) || ce.Message == "" {
			t.Fatalf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if after, _ := store.Events(context.Background(), r.Key, session.EventQuery{}); len(after) != len(before) {
			t.Fatalf("%s: the refused run stored %d events", tc.name, len(after)-len(before))
		}
	}
	if !rt.CanContinue(context.Background(), "ckpt") || cannot.CanContinue(context.Background(), "ckpt") {
		t.Fatal("CanContinue does not follow the runner's capabilities")
	}

	_, evs := runTurn(t, rt, cont("t", "c2"))
	if st := terminal(t, evs); st.Status != session.StatusCompleted {
		t.Fatalf("continued run status %q", st.Status)
	}
	if p := agent.lastPayload(); p.ContinueFrom == nil || p.ContinueFrom.ThreadID != "t" || len(agent.last()) != 1 || agent.last()[0].ID != "c2" {
		t.Fatalf("runner got continue_from %+v and checkpoints %+v", p.ContinueFrom, agent.last())
	}
	stored, _ := store.Events(context.Background(), r.Key, session.EventQuery{})
	for _, e := range stored[len(stored)-4:] {
		if e.Type == session.TypeUserMessage {
			t.Fatalf("a continued run stored a user message: %+v", e)
		}
	}
}
