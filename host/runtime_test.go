package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
	"github.com/agentengine/agentengine/session/postgres"
)

// scripted is a test agent whose behaviour is chosen by the input text. It records the
// requests it receives so tests can check what the runtime sent.
type scripted struct {
	mu   sync.Mutex
	reqs []*pluginsdk.Request
	// started is signalled when a "block" run has begun.
	started chan struct{}
}

func (s *scripted) Info() pluginsdk.Info {
	return pluginsdk.Info{Name: "scripted", Framework: "go", Capabilities: pluginsdk.Capabilities{Resume: true}}
}

func (s *scripted) last() *pluginsdk.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[len(s.reqs)-1]
}

func (s *scripted) Run(ctx context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if req.Context.IsResume {
		verdict := "rejected"
		if req.Payload.Resume != nil && req.Payload.Resume.Approve {
			verdict = "approved"
		}
		return emit.MessageDone(verdict)
	}
	in := req.Payload.InputText()
	switch {
	case in == "block":
		if s.started != nil {
			s.started <- struct{}{}
		}
		<-ctx.Done()
		return ctx.Err()
	case in == "fail":
		return errors.New("the agent broke")
	case in == "approve":
		return emit.ApprovalRequest(pluginsdk.ApprovalRequest{ID: "apr_1", CallID: "call_1", Name: "delete_file", Arguments: `{"path":"a.txt"}`})
	case in == "tool":
		if err := emit.ToolCallDelta("call_7", "lookup", `{"q":`); err != nil {
			return err
		}
		if err := emit.ToolCallDelta("call_7", "", `"x"}`); err != nil {
			return err
		}
		if err := emit.ToolCall("call_7", "lookup", ""); err != nil {
			return err
		}
		if err := emit.ToolResult("call_7", "lookup", "42", false); err != nil {
			return err
		}
		return emit.Text("the answer is 42")
	case strings.HasPrefix(in, "state "):
		k, v, _ := strings.Cut(strings.TrimPrefix(in, "state "), "=")
		return emit.StateDelta(map[string]any{k: v})
	}
	if err := emit.Reasoning("thinking"); err != nil {
		return err
	}
	for _, w := range []string{"you ", "said ", in} {
		if err := emit.Text(w); err != nil {
			return err
		}
	}
	return emit.Usage(pluginsdk.Usage{InputTokens: 3, OutputTokens: 3})
}

type fixture struct {
	rt    *host.Runtime
	store session.Store
	agent *scripted
}

func newFixture(t *testing.T, runner runnerv1.RunnerClient) *fixture {
	t.Helper()
	return newFixtureWith(t, runner, memory.New(), host.CompactionPolicy{})
}

func newFixtureWith(t *testing.T, runner runnerv1.RunnerClient, store session.Store, policy host.CompactionPolicy) *fixture {
	t.Helper()
	f := &fixture{store: store, agent: &scripted{started: make(chan struct{}, 1)}}
	if runner == nil {
		runner = serve(t, f.agent)
	}
	cfg := host.Config{Store: f.store, Agents: []host.Agent{{Name: "scripted", Runner: runner}}, Compaction: policy}
	if pg, ok := store.(*postgres.Store); ok && pg.Clustered() {
		cfg.Cluster = pg
	}
	f.rt = startRuntime(t, cfg)
	return f
}

func text(s string) host.Input {
	return host.Input{Content: []session.ContentBlock{{Type: "input_text", Text: s}}}
}

func (f *fixture) turn(t *testing.T, req host.TurnRequest) (*host.Run, []host.Event) {
	t.Helper()
	if req.App == "" {
		req.App = "scripted"
	}
	r, err := f.rt.Start(context.Background(), req)
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

func storedTypes(evs []host.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Kind == host.KindStored {
			out = append(out, e.Stored.Type)
		}
	}
	return out
}

func terminal(t *testing.T, evs []host.Event) session.RunStatusData {
	t.Helper()
	var terms []session.RunStatusData
	for _, e := range evs {
		if e.Terminal() {
			var d session.RunStatusData
			if err := json.Unmarshal(e.Stored.Data, &d); err != nil {
				t.Fatal(err)
			}
			terms = append(terms, d)
		}
	}
	if len(terms) != 1 {
		t.Fatalf("want exactly one terminal run_status, got %d", len(terms))
	}
	if !evs[len(evs)-1].Terminal() {
		t.Fatalf("the terminal run_status must be the last event")
	}
	return terms[0]
}

func TestTextTurnJournalsDeltasAndStoresCoarseEvents(t *testing.T) {
	f := newFixture(t, nil)
	r, evs := f.turn(t, host.TurnRequest{Input: text("hello")})

	want := []string{"user_message", "run_status", "reasoning", "assistant_message", "run_status"}
	if got := storedTypes(evs); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("stored events = %v, want %v", got, want)
	}
	var deltas string
	var msgID string
	for i, e := range evs {
		if e.Index != i {
			t.Fatalf("event %d has index %d", i, e.Index)
		}
		if e.Kind == host.KindTextDelta {
			deltas += e.Text
			msgID = e.ItemID
		}
	}
	if deltas != "you said hello" {
		t.Fatalf("text deltas = %q", deltas)
	}
	for _, e := range evs {
		if e.Kind == host.KindStored && e.Stored.Type == session.TypeAssistantMessage {
			var d session.AssistantMessageData
			_ = json.Unmarshal(e.Stored.Data, &d)
			if d.Text != "you said hello" || e.Stored.ItemID != msgID || !strings.HasPrefix(msgID, "msg_") {
				t.Fatalf("assistant_message %+v item %q, deltas item %q", d, e.Stored.ItemID, msgID)
			}
		}
	}
	st := terminal(t, evs)
	if st.Status != session.StatusCompleted || st.Usage == nil || st.Usage.OutputTokens != 3 {
		t.Fatalf("terminal = %+v", st)
	}
	if r.Status() != session.StatusCompleted {
		t.Fatalf("run status %q", r.Status())
	}
	// The store holds exactly the coarse events, in the same order.
	stored, err := f.store.Events(context.Background(), r.Key, session.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 5 || stored[4].Type != session.TypeRunStatus {
		t.Fatalf("store has %d events", len(stored))
	}
	rec, err := f.store.GetRun(context.Background(), r.Key, r.InvocationID)
	if err != nil || rec.Status != session.StatusCompleted {
		t.Fatalf("run record %+v, %v", rec, err)
	}
}

func TestSecondTurnSeesProjectedHistoryWithoutControlEvents(t *testing.T) {
	f := newFixture(t, nil)
	r1, _ := f.turn(t, host.TurnRequest{Input: text("one")})
	f.turn(t, host.TurnRequest{SessionID: r1.Key.ID, Input: text("two")})
	req := f.agent.last()
	if req.SessionID != r1.Key.ID || req.Payload.InputText() != "two" {
		t.Fatalf("request %+v", req)
	}
	h := req.Payload.History
	if len(h) != 2 || h[0].Role != "user" || h[0].Content != "one" || h[1].Role != "assistant" || h[1].Content != "you said one" {
		t.Fatalf("history = %+v", h)
	}
	if len(req.Context.History) != 2 || req.Context.PlatformContext.SessionID != r1.Key.ID || req.Context.PlatformContext.UserID != "user" {
		t.Fatalf("session context = %+v", req.Context)
	}
}

func TestRunIsDetachedFromTheCallersContext(t *testing.T) {
	f := newFixture(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	r, err := f.rt.Start(ctx, host.TurnRequest{App: "scripted", Input: text("hello")})
	if err != nil {
		t.Fatal(err)
	}
	cancel() // the client went away
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	evs, err := r.Wait(wctx)
	if err != nil {
		t.Fatal(err)
	}
	if st := terminal(t, evs); st.Status != session.StatusCompleted {
		t.Fatalf("status %q", st.Status)
	}
}

func TestCancelEndsTheRunCancelled(t *testing.T) {
	f := newFixture(t, nil)
	r, err := f.rt.Start(context.Background(), host.TurnRequest{App: "scripted", Input: text("block")})
	if err != nil {
		t.Fatal(err)
	}
	<-f.agent.started
	if err := f.rt.Cancel(context.Background(), r.Key, r.InvocationID); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	evs, _ := r.Wait(ctx)
	if st := terminal(t, evs); st.Status != session.StatusCancelled {
		t.Fatalf("status %q", st.Status)
	}
	if err := f.rt.Cancel(context.Background(), r.Key, r.InvocationID); !errors.Is(err, host.ErrRunNotActive) {
		t.Fatalf("second cancel: %v", err)
	}
	other := r.Key
	other.User = "mallory"
	if err := f.rt.Cancel(context.Background(), other, r.InvocationID); !errors.Is(err, host.ErrNotFound) {
		t.Fatalf("cancel by another user: %v", err)
	}
}

func TestAgentErrorFailsTheRunWithItsMessage(t *testing.T) {
	f := newFixture(t, nil)
	_, evs := f.turn(t, host.TurnRequest{Input: text("fail")})
	st := terminal(t, evs)
	if st.Status != session.StatusFailed || st.Error == nil || !strings.Contains(st.Error.Message, "the agent broke") {
		t.Fatalf("terminal = %+v", st)
	}
}

// brokenRunner is a runner whose stream dies the way a killed process's does.
type brokenRunner struct{ runnerv1.RunnerClient }

type brokenStream struct {
	grpc.ServerStreamingClient[runnerv1.RunEvent]
}

func (brokenStream) Recv() (*runnerv1.RunEvent, error) {
	return nil, status.Error(codes.Unavailable, "connection closed")
}

func (brokenRunner) Describe(context.Context, *runnerv1.DescribeRequest, ...grpc.CallOption) (*runnerv1.DescribeResponse, error) {
	return nil, status.Error(codes.Unavailable, "connection closed")
}

func (b brokenRunner) Run(context.Context, *runnerv1.RunRequest, ...grpc.CallOption) (grpc.ServerStreamingClient[runnerv1.RunEvent], error) {
	return brokenStream{}, nil
}

func TestBrokenRunnerStreamFailsTheRunWithAClearError(t *testing.T) {
	f := newFixture(t, brokenRunner{})
	_, evs := f.turn(t, host.TurnRequest{Input: text("hello")})
	st := terminal(t, evs)
	if st.Status != session.StatusFailed || st.Error == nil || !strings.Contains(st.Error.Message, "runner process exited") {
		t.Fatalf("terminal = %+v", st)
	}
}

func TestToolCallIsAggregatedFromDeltas(t *testing.T) {
	f := newFixture(t, nil)
	_, evs := f.turn(t, host.TurnRequest{Input: text("tool")})
	var call session.ToolCallData
	var callItem, deltaItem string
	for _, e := range evs {
		if e.Kind == host.KindToolArgsDelta {
			deltaItem = e.ItemID
		}
		if e.Kind == host.KindStored && e.Stored.Type == session.TypeToolCall {
			_ = json.Unmarshal(e.Stored.Data, &call)
			callItem = e.Stored.ItemID
		}
	}
	if call.CallID != "call_7" || call.Name != "lookup" || call.Arguments != `{"q":"x"}` {
		t.Fatalf("tool call = %+v", call)
	}
	if callItem == "" || callItem != deltaItem || !strings.HasPrefix(callItem, "fc_") {
		t.Fatalf("item ids: stored %q, deltas %q", callItem, deltaItem)
	}
	want := "user_message,run_status,tool_call,tool_result,assistant_message,run_status"
	if got := strings.Join(storedTypes(evs), ","); got != want {
		t.Fatalf("stored = %s", got)
	}
}

func TestApprovalInterruptsAndAResumeAnswersIt(t *testing.T) {
	f := newFixture(t, nil)
	r, evs := f.turn(t, host.TurnRequest{Input: text("approve")})
	if st := terminal(t, evs); st.Status != session.StatusInterrupted {
		t.Fatalf("status %q", st.Status)
	}
	ctx := context.Background()
	_, err := f.rt.Start(ctx, host.TurnRequest{App: "scripted", SessionID: r.Key.ID, Input: host.Input{Resumes: []host.Resume{{ApprovalRequestID: "apr_nope", Approve: true}}}})
	if !errors.Is(err, host.ErrNoPendingApproval) {
		t.Fatalf("unknown approval id: %v", err)
	}
	raw := json.RawMessage(`{"type":"mcp_approval_response","approval_request_id":"apr_1","approve":true}`)
	_, evs = f.turn(t, host.TurnRequest{SessionID: r.Key.ID, Input: host.Input{Resumes: []host.Resume{{ApprovalRequestID: "apr_1", Approve: true, Raw: raw}}}})
	if st := terminal(t, evs); st.Status != session.StatusCompleted {
		t.Fatalf("resume status %q", st.Status)
	}
	req := f.agent.last()
	if !req.Context.IsResume || req.Payload.Resume == nil || req.Payload.Resume.Name != "delete_file" || req.Payload.Resume.CallID != "call_1" || string(req.Payload.Input) != string(raw) {
		t.Fatalf("resume request: %+v / %+v / %s", req.Context, req.Payload.Resume, req.Payload.Input)
	}
	if got := storedTypes(evs)[0]; got != session.TypeApprovalResponse {
		t.Fatalf("resume turn starts with %s", got)
	}
	// Answered: a second resume finds nothing pending.
	_, err = f.rt.Start(ctx, host.TurnRequest{App: "scripted", SessionID: r.Key.ID, Input: host.Input{Resumes: []host.Resume{{ApprovalRequestID: "apr_1", Approve: true}}}})
	if !errors.Is(err, host.ErrNoPendingApproval) {
		t.Fatalf("second resume: %v", err)
	}
}

func TestSecondConcurrentRunIsRejectedAndStoresNothing(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	r, err := f.rt.Start(ctx, host.TurnRequest{App: "scripted", Input: text("block")})
	if err != nil {
		t.Fatal(err)
	}
	<-f.agent.started
	before, _ := f.store.Events(ctx, r.Key, session.EventQuery{})
	_, err = f.rt.Start(ctx, host.TurnRequest{App: "scripted", SessionID: r.Key.ID, Input: text("again")})
	if !errors.Is(err, host.ErrRunActive) {
		t.Fatalf("want ErrRunActive, got %v", err)
	}
	after, _ := f.store.Events(ctx, r.Key, session.EventQuery{})
	if len(after) != len(before) {
		t.Fatalf("rejected request stored events: %d → %d", len(before), len(after))
	}
	_ = f.rt.Cancel(ctx, r.Key, r.InvocationID)
}

func TestLateSubscriberSeesTheSameSequence(t *testing.T) {
	f := newFixture(t, nil)
	r, evs := f.turn(t, host.TurnRequest{Input: text("hello")})
	sub := r.Subscribe(2)
	ctx := context.Background()
	for i := 2; ; i++ {
		e, err := sub.Next(ctx)
		if errors.Is(err, io.EOF) {
			if i != len(evs) {
				t.Fatalf("EOF after %d events, want %d", i, len(evs))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Index != i || e.Kind != evs[i].Kind {
			t.Fatalf("event %d differs", i)
		}
	}
	// A run rebuilt from the store holds its stored events only, same order.
	opened, err := f.rt.Open(ctx, r.Key, r.InvocationID)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := opened.Wait(ctx)
	if strings.Join(storedTypes(got), ",") != strings.Join(storedTypes(evs), ",") {
		t.Fatalf("reopened run: %v", storedTypes(got))
	}
}

func TestStateDeltaReachesTheNextTurn(t *testing.T) {
	f := newFixture(t, nil)
	r, _ := f.turn(t, host.TurnRequest{Input: text("state color=blue")})
	f.turn(t, host.TurnRequest{SessionID: r.Key.ID, Input: text("hi")})
	if got := f.agent.last().Context.State["color"]; got != "blue" {
		t.Fatalf("state color = %v", got)
	}
}

func TestRecoverInterruptsOrphanedRuns(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	key := session.Key{App: "scripted", User: "user", ID: "s1"}
	if _, err := f.store.CreateSession(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.StartRun(ctx, session.Run{InvocationID: "run_orphan", Key: key, Status: session.StatusInProgress},
		session.NewEvent{InvocationID: "run_orphan", Type: session.TypeRunStatus, Data: session.MustJSON(session.RunStatusData{Status: session.StatusInProgress})}); err != nil {
		t.Fatal(err)
	}
	if err := f.rt.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	rec, err := f.store.GetRun(ctx, key, "run_orphan")
	if err != nil || rec.Status != session.StatusInterrupted {
		t.Fatalf("run %+v %v", rec, err)
	}
	evs, _ := f.store.Events(ctx, key, session.EventQuery{})
	if host.RunStatusOf(&evs[len(evs)-1]) != session.StatusInterrupted {
		t.Fatalf("last event %+v", evs[len(evs)-1])
	}
}

func TestCloseInterruptsLiveRuns(t *testing.T) {
	f := newFixture(t, nil)
	r, err := f.rt.Start(context.Background(), host.TurnRequest{App: "scripted", Input: text("block")})
	if err != nil {
		t.Fatal(err)
	}
	<-f.agent.started
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.rt.Close(ctx); err != nil {
		t.Fatal(err)
	}
	evs, _ := r.Wait(ctx)
	if st := terminal(t, evs); st.Status != session.StatusInterrupted {
		t.Fatalf("status %q", st.Status)
	}
}

func TestStartRejectsBadRequests(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	cases := []struct {
		name string
		req  host.TurnRequest
		kind error
	}{
		{"unknown agent", host.TurnRequest{App: "nope", Input: text("x")}, host.ErrUnknownAgent},
		{"empty input", host.TurnRequest{App: "scripted"}, host.ErrInvalidInput},
		{"unknown session", host.TurnRequest{App: "scripted", SessionID: "missing", Input: text("x")}, host.ErrNotFound},
		{"control characters in id", host.TurnRequest{App: "scripted", SessionID: "a\nb", Input: text("x")}, host.ErrInvalidInput},
		{"resume without pending approval", host.TurnRequest{App: "scripted", SessionID: "fresh", CreateIfMissing: true, Input: host.Input{Resumes: []host.Resume{{ApprovalRequestID: "apr_1"}}}}, host.ErrNoPendingApproval},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.rt.Start(ctx, c.req)
			if !errors.Is(err, c.kind) {
				t.Fatalf("got %v, want %v", err, c.kind)
			}
			if host.ClientMessage(err) == "internal error" {
				t.Fatalf("no client message for %v", err)
			}
		})
	}
	if _, err := f.rt.Start(ctx, host.TurnRequest{App: "nope", Input: text("x")}); !strings.Contains(host.ClientMessage(err), "scripted") {
		t.Fatalf("unknown agent message should list hosted agents: %q", host.ClientMessage(err))
	}
}

func TestClientTranscriptItemsBecomeHistory(t *testing.T) {
	f := newFixture(t, nil)
	in := text("delta")
	in.Items = []json.RawMessage{
		json.RawMessage(`{"role":"user","content":"alpha beta"}`),
		json.RawMessage(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Echo: alpha beta"}]}`),
		json.RawMessage(`{"type":"function_call","call_id":"c1","name":"lookup","arguments":"{}"}`),
		json.RawMessage(`{"type":"function_call_output","call_id":"c1","output":"42"}`),
		json.RawMessage(`{"type":"reasoning","summary":[]}`),
	}
	f.turn(t, host.TurnRequest{Input: in})
	h := f.agent.last().Payload.History
	want := []struct{ role, content string }{
		{"user", "alpha beta"}, {"assistant", "Echo: alpha beta"},
		{"assistant", "[tool_call] lookup({})"}, {"user", "[tool_result] 42"},
	}
	if len(h) != len(want) {
		t.Fatalf("history = %+v", h)
	}
	for i, w := range want {
		if h[i].Role != w.role || h[i].Content != w.content {
			t.Fatalf("history[%d] = %+v, want %v", i, h[i], w)
		}
	}
	// The next turn of the same session sees that transcript too, before the stored turn.
	r := f.agent.last()
	f.turn(t, host.TurnRequest{SessionID: r.SessionID, Input: text("next")})
	if h2 := f.agent.last().Payload.History; len(h2) != len(want)+2 || h2[0].Content != "alpha beta" || h2[4].Content != "delta" {
		t.Fatalf("second-turn history = %+v", h2)
	}
}

func TestSessionManagementIsScopedByUser(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	s, err := f.rt.CreateSession(ctx, session.Key{App: "scripted", User: "alice"})
	if err != nil || !strings.HasPrefix(s.ID, "sess_") {
		t.Fatalf("create: %+v %v", s, err)
	}
	if _, err := f.rt.CreateSession(ctx, s.Key); !errors.Is(err, host.ErrInvalidInput) {
		t.Fatalf("duplicate id: %v", err)
	}
	if _, err := f.rt.CreateSession(ctx, session.Key{App: "nope", User: "alice"}); !errors.Is(err, host.ErrUnknownAgent) {
		t.Fatalf("unknown app: %v", err)
	}
	bob := s.Key
	bob.User = "bob"
	if _, err := f.rt.Events(ctx, bob, session.EventQuery{}); !errors.Is(err, host.ErrNotFound) {
		t.Fatalf("bob reads alice's events: %v", err)
	}
	if err := f.rt.DeleteSession(ctx, bob); !errors.Is(err, host.ErrNotFound) {
		t.Fatalf("bob deletes alice's session: %v", err)
	}
	if _, err := f.rt.RenameSession(ctx, s.Key, "Trip planning"); err != nil {
		t.Fatal(err)
	}
	list, total, err := f.rt.ListSessions(ctx, "scripted", "alice", session.ListQuery{Limit: 10})
	if err != nil || total != 1 || list[0].Title != "Trip planning" {
		t.Fatalf("list %+v %d %v", list, total, err)
	}
	if _, err := f.rt.AppendEvents(ctx, s.Key, session.NewEvent{Type: session.TypeAssistantMessage, Data: json.RawMessage(`{}`)}); !errors.Is(err, host.ErrInvalidInput) {
		t.Fatalf("appending run events from outside a run: %v", err)
	}
	if err := f.rt.DeleteSession(ctx, s.Key); err != nil {
		t.Fatal(err)
	}
	if _, total, _ := f.rt.ListSessions(ctx, "scripted", "alice", session.ListQuery{}); total != 0 {
		t.Fatalf("%d sessions left", total)
	}
}

func TestDeleteSessionCancelsItsLiveRun(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	r, err := f.rt.Start(ctx, host.TurnRequest{App: "scripted", Input: text("block")})
	if err != nil {
		t.Fatal(err)
	}
	<-f.agent.started
	if err := f.rt.DeleteSession(ctx, r.Key); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("run still live after its session was deleted")
	}
	if _, err := f.rt.Session(ctx, r.Key); !errors.Is(err, host.ErrNotFound) {
		t.Fatalf("session after delete: %v", err)
	}
}

// summarizing is the scripted agent with a runner-side Summarize.
type summarizing struct{ *scripted }

func (summarizing) Summarize(_ context.Context, history []session.Message, _ string) (string, error) {
	return fmt.Sprintf("SUMMARY of %d messages", len(history)), nil
}

func TestLongHistoryIsCompactedIntoACheckpoint(t *testing.T) {
	for _, c := range []struct {
		name        string
		summarize   bool
		wantSummary string
		// unannounced turns, written as any other
		unannounced bool
	}{
		{"extractive", false, "Summary of the earlier conversation (extractive):\nuser: turn 0\nassistant: you said turn 0", false},
		{"runner summary", true, "SUMMARY of 6 messages", false},
		{"unannounced turns", false, "Summary of the earlier conversation (extractive):\nuser: turn 0\nassistant: you said turn 0", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := memory.New()
			policy := host.CompactionPolicy{MaxMessages: 6, KeepMessages: 2}
			var runner runnerv1.RunnerClient
			if c.summarize {
				client, stop := inprocess.Serve(summarizing{&scripted{}})
				t.Cleanup(stop)
				runner = client
			}
			f := newFixtureWith(t, runner, store, policy)
			r, _ := f.turn(t, host.TurnRequest{Input: text("turn 0"), Unannounced: c.unannounced})
			for i := 1; i < 4; i++ {
				f.turn(t, host.TurnRequest{SessionID: r.Key.ID, Input: text(fmt.Sprintf("turn %d", i)), Unannounced: c.unannounced})
			}
			// Compaction runs after the run ends.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := f.rt.Idle(ctx); err != nil {
				t.Fatal(err)
			}
			cps, _ := store.Events(ctx, r.Key, session.EventQuery{Types: []string{session.TypeContextCheckpoint, session.TypeCompactionBound}})
			if len(cps) != 2 || cps[0].Type != session.TypeCompactionBound {
				t.Fatalf("compaction events = %+v", cps)
			}
			var cp session.ContextCheckpointData
			_ = json.Unmarshal(cps[1].Data, &cp)
			if !strings.HasPrefix(cp.Summary, c.wantSummary) || cp.FromSeq != 1 || cp.UntilSeq >= cps[1].Seq {
				t.Fatalf("checkpoint = %+v", cp)
			}

			// A new runtime on the same store: the next turn sees the summary and the tail.
			g := newFixtureWith(t, nil, store, policy)
			g.turn(t, host.TurnRequest{SessionID: r.Key.ID, Input: text("turn 4")})
			h := g.agent.last().Payload.History
			if len(h) != 3 || h[0].Type != session.TypeContextCheckpoint || h[1].Content != "turn 3" || h[2].Content != "you said turn 3" {
				t.Fatalf("history after compaction = %+v", h)
			}
		})
	}
}

func TestEstimateTokens(t *testing.T) {
	for in, want := range map[string]int{"": 0, "abcd": 1, "abcde": 2, "你好": 2, "hi 你好": 3} {
		if got := host.EstimateTokens(in); got != want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestModelNamingNoAgentIsTheOnlyAgentsModelOverride(t *testing.T) {
	f := newFixture(t, nil)
	for _, tc := range []struct{ model, wantApp, wantOverride string }{
		{"scripted", "scripted", ""},
		{"", "scripted", ""},
		{"gpt-4o-mini", "scripted", "gpt-4o-mini"},
	} {
		a, override, err := f.rt.ResolveModel(tc.model)
		if err != nil || a.Name != tc.wantApp || override != tc.wantOverride {
			t.Fatalf("ResolveModel(%q) = %q, %q, %v", tc.model, a.Name, override, err)
		}
	}
	// The override reaches the runner as payload.model; the session stays the agent's.
	r, _ := f.turn(t, host.TurnRequest{Model: "gpt-4o-mini", Input: text("hi")})
	if got := f.agent.last().Payload.Model; got != "gpt-4o-mini" || r.Key.App != "scripted" {
		t.Fatalf("payload.model %q, session app %q", got, r.Key.App)
	}
	f.turn(t, host.TurnRequest{Input: text("again")})
	if got := f.agent.last().Payload.Model; got != "scripted" {
		t.Fatalf("without an override payload.model is %q, want the agent name", got)
	}
	// With several agents an unknown model is an error naming them.
	client, stop := inprocess.Serve(&scripted{started: make(chan struct{}, 1)})
	t.Cleanup(stop)
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "a", Runner: client}, {Name: "b", Runner: client}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := rt.ResolveModel("gpt-4o-mini"); !errors.Is(err, host.ErrUnknownAgent) || !strings.Contains(err.Error(), "a, b") {
		t.Fatalf("several agents: %v", err)
	}
}
