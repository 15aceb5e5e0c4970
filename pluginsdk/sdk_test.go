package pluginsdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// funcRunner adapts a function to pluginsdk.Runner.
type funcRunner struct {
	info pluginsdk.Info
	run  func(ctx context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error
}

func (f funcRunner) Info() pluginsdk.Info { return f.info }
func (f funcRunner) Run(ctx context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	return f.run(ctx, req, emit)
}

type summarizingRunner struct{ funcRunner }

func (summarizingRunner) Summarize(_ context.Context, h []pluginsdk.Message, instr string) (string, error) {
	if instr == "fail" {
		return "", errors.New("cannot summarise")
	}
	return strings.Repeat("m", len(h)) + "|" + instr, nil
}

func serve(t *testing.T, r pluginsdk.Runner) runnerv1.RunnerClient {
	t.Helper()
	c, stop := inprocess.Serve(r)
	t.Cleanup(stop)
	return c
}

func collect(t *testing.T, c runnerv1.RunnerClient, req *runnerv1.RunRequest) []*runnerv1.RunEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.Run(ctx, req)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var out []*runnerv1.RunEvent
	for {
		ev, err := st.Recv()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		out = append(out, ev)
	}
}

func TestEventsRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		emit func(e *pluginsdk.Emitter) error
		want *runnerv1.RunEvent
	}{
		{"text", func(e *pluginsdk.Emitter) error { return e.Text("hi ") },
			&runnerv1.RunEvent{Event: &runnerv1.RunEvent_TextDelta{TextDelta: &runnerv1.TextDelta{Text: "hi "}}}},
		{"message done", func(e *pluginsdk.Emitter) error { return e.MessageDone("hi there") },
			&runnerv1.RunEvent{Event: &runnerv1.RunEvent_MessageDone{MessageDone: &runnerv1.MessageDone{Text: "hi there"}}}},
		{"reasoning", func(e *pluginsdk.Emitter) error { return e.Reasoning("hmm") },
			&runnerv1.RunEvent{Event: &runnerv1.RunEvent_ReasoningDelta{ReasoningDelta: &runnerv1.ReasoningDelta{Text: "hmm"}}}},
		{"tool call delta", func(e *pluginsdk.Emitter) error { return e.ToolCallDelta("c1", "lookup", `{"q":`) },
			&runnerv1.RunEvent{Event: &runnerv1.RunEvent_ToolCallDelta{ToolCallDelta: &runnerv1.ToolCallDelta{CallId: "c1", Name: "lookup", ArgumentsDelta: `{"q":`}}}},
		{"tool call", func(e *pluginsdk.Emitter) error { return e.ToolCall("c1", "lookup", `{"q":"x"}`) },
			&runnerv1.RunEvent{Event: &runnerv1.RunEvent_ToolCall{ToolCall: &runnerv1.ToolCall{CallId: "c1", Name: "lookup", Arguments: `{"q":"x"}`}}}},
		{"tool call empty args", func(e *pluginsdk.Emitter) error { return e.ToolCall("c1", "lookup", "") },
			&runnerv1.RunEvent{Event: &runnerv1.RunEvent_ToolCall{ToolCall: &runnerv1.ToolCall{CallId: "c1", Name: "lookup"}}}},
		{"tool result", func(e *pluginsdk.Emitter) error { return e.ToolResult("c1", "lookup", "42", true) },
			&runnerv1.RunEvent{Event: &runnerv1.RunEvent_ToolResult{ToolResult: &runnerv1.ToolResult{CallId: "c1", Name: "lookup", Output: "42", IsError: true}}}},
		{"approval", func(e *pluginsdk.Emitter) error {
			return e.ApprovalRequest(pluginsdk.ApprovalRequest{ID: "apr_1", CallID: "c2", Name: "delete_file", Arguments: `{"path":"a"}`, Message: "ok?", Detail: json.RawMessage(`{"k":1}`)})
		}, &runnerv1.RunEvent{Event: &runnerv1.RunEvent_ApprovalRequest{ApprovalRequest: &runnerv1.ApprovalRequest{
			Id: "apr_1", CallId: "c2", Name: "delete_file", Arguments: `{"path":"a"}`, Message: "ok?", DetailJson: []byte(`{"k":1}`)}}}},
		{"state delta", func(e *pluginsdk.Emitter) error { return e.StateDelta(map[string]any{"k": "v", "gone": nil}) },
			&runnerv1.RunEvent{Event: &runnerv1.RunEvent_StateDelta{StateDelta: &runnerv1.StateDelta{DeltaJson: []byte(`{"gone":null,"k":"v"}`)}}}},
		{"usage", func(e *pluginsdk.Emitter) error {
			return e.Usage(pluginsdk.Usage{InputTokens: 1, OutputTokens: 2, ReasoningTokens: 3, CachedTokens: 4})
		}, &runnerv1.RunEvent{Event: &runnerv1.RunEvent_Usage{Usage: &runnerv1.Usage{InputTokens: 1, OutputTokens: 2, ReasoningTokens: 3, CachedTokens: 4}}}},
		{"usage of a model", func(e *pluginsdk.Emitter) error {
			return e.UsageOf("m1", pluginsdk.Usage{InputTokens: 5, OutputTokens: 6})
		}, &runnerv1.RunEvent{Event: &runnerv1.RunEvent_Usage{Usage: &runnerv1.Usage{InputTokens: 5, OutputTokens: 6, Model: "m1"}}}},
		{"native", func(e *pluginsdk.Emitter) error { return e.Native("chunk", map[string]int{"n": 1}) },
			&runnerv1.RunEvent{Event: &runnerv1.RunEvent_Native{Native: &runnerv1.Native{Framework: "go", Kind: "chunk", DataJson: []byte(`{"n":1}`)}}}},
		{"raw send", func(e *pluginsdk.Emitter) error {
			return e.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_TextDelta{TextDelta: &runnerv1.TextDelta{Text: "raw"}}})
		}, &runnerv1.RunEvent{Event: &runnerv1.RunEvent_TextDelta{TextDelta: &runnerv1.TextDelta{Text: "raw"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, funcRunner{run: func(_ context.Context, _ *pluginsdk.Request, e *pluginsdk.Emitter) error { return tt.emit(e) }})
			got := collect(t, c, &runnerv1.RunRequest{})
			if len(got) != 1 || !proto.Equal(got[0], tt.want) {
				t.Fatalf("got %v, want [%v]", got, tt.want)
			}
		})
	}
}

func TestEmitterRejectsInvalidEvents(t *testing.T) {
	tests := []struct {
		name string
		emit func(e *pluginsdk.Emitter) error
	}{
		{"tool call bad json", func(e *pluginsdk.Emitter) error { return e.ToolCall("c", "n", "{") }},
		{"tool call no id", func(e *pluginsdk.Emitter) error { return e.ToolCall("", "n", "{}") }},
		{"approval no id", func(e *pluginsdk.Emitter) error { return e.ApprovalRequest(pluginsdk.ApprovalRequest{Name: "n"}) }},
		{"approval bad detail", func(e *pluginsdk.Emitter) error {
			return e.ApprovalRequest(pluginsdk.ApprovalRequest{ID: "a", Name: "n", Detail: json.RawMessage("{")})
		}},
		{"state unencodable", func(e *pluginsdk.Emitter) error { return e.StateDelta(map[string]any{"f": func() {}}) }},
		{"nil event", func(e *pluginsdk.Emitter) error { return e.Send(nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errc := make(chan error, 1)
			c := serve(t, funcRunner{run: func(_ context.Context, _ *pluginsdk.Request, e *pluginsdk.Emitter) error {
				errc <- tt.emit(e)
				return nil
			}})
			if got := collect(t, c, &runnerv1.RunRequest{}); len(got) != 0 {
				t.Fatalf("events sent: %v", got)
			}
			if err := <-errc; err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestRequestDecoding(t *testing.T) {
	got := make(chan *pluginsdk.Request, 1)
	c := serve(t, funcRunner{run: func(_ context.Context, req *pluginsdk.Request, _ *pluginsdk.Emitter) error {
		got <- req
		return nil
	}})
	collect(t, c, &runnerv1.RunRequest{
		AppName: "app", UserId: "u", SessionId: "s", InvocationId: "inv",
		PayloadJson:        []byte(`{"input":"","input_content":[{"type":"input_text","text":"hello"}],"model_options":{"x":1},"resume":{"approval_request_id":"apr_1","approve":true}}`),
		SessionContextJson: []byte(`{"is_resume":true,"state":{"k":"v"},"platform_context":{"user_id":"u"}}`),
	})
	req := <-got
	if req.AppName != "app" || req.UserID != "u" || req.SessionID != "s" || req.InvocationID != "inv" {
		t.Errorf("ids: %+v", req)
	}
	if req.InputText() != "hello" {
		t.Errorf("InputText = %q", req.InputText())
	}
	if !req.Context.IsResume || req.Payload.Resume == nil || !req.Payload.Resume.Approve || req.Context.State["k"] != "v" {
		t.Errorf("context/resume not decoded: %+v %+v", req.Context, req.Payload.Resume)
	}
	if req.Logger == nil {
		t.Error("nil Logger")
	}
}

func TestRunFailuresBecomeErrorEvents(t *testing.T) {
	tests := []struct {
		name       string
		run        func(ctx context.Context, req *pluginsdk.Request, e *pluginsdk.Emitter) error
		req        *runnerv1.RunRequest
		wantCode   string
		wantMsg    string
		wantDetail string
		before     int // events before the Error
	}{
		{
			name: "error",
			run: func(_ context.Context, _ *pluginsdk.Request, e *pluginsdk.Emitter) error {
				_ = e.Text("partial")
				return errors.New("model quota exceeded")
			},
			wantCode: pluginsdk.CodeAgentError, wantMsg: "model quota exceeded", before: 1,
		},
		{
			name: "run error",
			run: func(context.Context, *pluginsdk.Request, *pluginsdk.Emitter) error {
				return &pluginsdk.RunError{Code: "quota", Message: "try later", Detail: "secret stack"}
			},
			wantCode: "quota", wantMsg: "try later", wantDetail: "secret stack",
		},
		{
			name:       "panic",
			run:        func(context.Context, *pluginsdk.Request, *pluginsdk.Emitter) error { panic("boom") },
			wantCode:   pluginsdk.CodePanic,
			wantMsg:    "agent panicked: boom",
			wantDetail: "goroutine ",
		},
		{
			name:     "bad payload",
			run:      func(context.Context, *pluginsdk.Request, *pluginsdk.Emitter) error { panic("not reached") },
			req:      &runnerv1.RunRequest{PayloadJson: []byte(`{"input":`)},
			wantCode: pluginsdk.CodeInvalidRequest, wantMsg: "payload_json",
		},
		{
			name:     "bad session context",
			run:      func(context.Context, *pluginsdk.Request, *pluginsdk.Emitter) error { panic("not reached") },
			req:      &runnerv1.RunRequest{SessionContextJson: []byte(`[]`)},
			wantCode: pluginsdk.CodeInvalidRequest, wantMsg: "session_context_json",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, funcRunner{run: tt.run})
			req := tt.req
			if req == nil {
				req = &runnerv1.RunRequest{}
			}
			evs := collect(t, c, req)
			if len(evs) != tt.before+1 {
				t.Fatalf("got %d events, want %d: %v", len(evs), tt.before+1, evs)
			}
			e := evs[len(evs)-1].GetError()
			if e == nil {
				t.Fatalf("last event is not an Error: %v", evs[len(evs)-1])
			}
			if e.Code != tt.wantCode || !strings.Contains(e.Message, tt.wantMsg) || !strings.Contains(e.Detail, tt.wantDetail) {
				t.Errorf("Error = %+v, want code %q message ~%q detail ~%q", e, tt.wantCode, tt.wantMsg, tt.wantDetail)
			}
			if strings.Contains(e.Message, "goroutine ") {
				t.Errorf("stack leaked into message: %q", e.Message)
			}
		})
	}
}

func TestCancelReachesRun(t *testing.T) {
	started := make(chan struct{})
	observed := make(chan error, 1)
	late := make(chan error, 1)
	c := serve(t, funcRunner{run: func(ctx context.Context, _ *pluginsdk.Request, e *pluginsdk.Emitter) error {
		close(started)
		<-ctx.Done()
		observed <- ctx.Err()
		// The stream is gone: emitting must fail instead of blocking or panicking.
		late <- e.Text("too late")
		return ctx.Err()
	}})
	ctx, cancel := context.WithCancel(context.Background())
	st, err := c.Run(ctx, &runnerv1.RunRequest{})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	cancel()
	if _, err := st.Recv(); status.Code(err) != codes.Canceled {
		t.Fatalf("Recv after cancel: %v", err)
	}
	select {
	case err := <-observed:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run saw %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancellation did not reach Run")
	}
	if err := <-late; !errors.Is(err, pluginsdk.ErrStreamClosed) {
		t.Fatalf("emit after cancel = %v, want ErrStreamClosed", err)
	}
}

func TestEmitterConcurrentAndClosedAfterReturn(t *testing.T) {
	const goroutines, each = 8, 50
	leftover := make(chan *pluginsdk.Emitter, 1)
	c := serve(t, funcRunner{run: func(_ context.Context, _ *pluginsdk.Request, e *pluginsdk.Emitter) error {
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				for range each {
					if err := e.Text("x"); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		leftover <- e
		return nil
	}})
	if got := collect(t, c, &runnerv1.RunRequest{}); len(got) != goroutines*each {
		t.Fatalf("got %d events, want %d", len(got), goroutines*each)
	}
	if err := (<-leftover).Text("after return"); !errors.Is(err, pluginsdk.ErrStreamClosed) {
		t.Fatalf("emit after Run returned = %v, want ErrStreamClosed", err)
	}
}

func TestDescribeAndSummarize(t *testing.T) {
	plain := funcRunner{info: pluginsdk.Info{Name: "a", Description: "d", Capabilities: pluginsdk.Capabilities{Resume: true}}}
	tests := []struct {
		name        string
		runner      pluginsdk.Runner
		instr       string
		wantCaps    *runnerv1.Capabilities
		wantSummary string
		wantCode    codes.Code
	}{
		{"plain", plain, "x", &runnerv1.Capabilities{Resume: true, ExpandsPayload: true}, "", codes.Unimplemented},
		{"summarizer", summarizingRunner{plain}, "short", &runnerv1.Capabilities{Resume: true, Summarize: true, ExpandsPayload: true}, "mm|short", codes.OK},
		{"summarizer error", summarizingRunner{plain}, "fail", &runnerv1.Capabilities{Resume: true, Summarize: true, ExpandsPayload: true}, "", codes.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, tt.runner)
			ctx := context.Background()
			d, err := c.Describe(ctx, &runnerv1.DescribeRequest{})
			if err != nil {
				t.Fatal(err)
			}
			want := &runnerv1.DescribeResponse{ProtocolVersion: "1", Framework: "go", AgentName: "a", Description: "d", Capabilities: tt.wantCaps}
			if !proto.Equal(d, want) {
				t.Errorf("Describe = %v, want %v", d, want)
			}
			s, err := c.Summarize(ctx, &runnerv1.SummarizeRequest{HistoryJson: []byte(`[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]`), Instructions: tt.instr})
			if status.Code(err) != tt.wantCode {
				t.Fatalf("Summarize error %v, want code %v", err, tt.wantCode)
			}
			if err == nil && s.Summary != tt.wantSummary {
				t.Errorf("summary %q, want %q", s.Summary, tt.wantSummary)
			}
		})
	}
}

// TestCallIsUnimplemented: a Go runner offers no framework-native operations, so the
// host's Call gets Unimplemented, which it reports as an operation the agent lacks.
func TestCallIsUnimplemented(t *testing.T) {
	c := serve(t, funcRunner{info: pluginsdk.Info{Name: "a"}})
	_, err := c.Call(context.Background(), &runnerv1.CallRequest{Method: "adk.eval.run", Json: []byte(`{}`)})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("Call error %v, want Unimplemented", err)
	}
}
