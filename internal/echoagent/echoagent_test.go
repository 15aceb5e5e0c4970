package echoagent_test

import (
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentengine/agentengine/internal/echoagent"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// summary flattens a run's events into comparable facts.
type summary struct {
	kinds     []string
	text      string
	done      string
	reasoning string
	toolArgs  string // concatenated argument deltas
	calls     []*runnerv1.ToolCall
	results   []*runnerv1.ToolResult
	approvals []*runnerv1.ApprovalRequest
	state     map[string]any
	usage     *runnerv1.Usage
	err       *runnerv1.Error
	textDelta int
}

func run(t *testing.T, c runnerv1.RunnerClient, payload, sctx string) summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.Run(ctx, &runnerv1.RunRequest{SessionId: "s1", InvocationId: "inv1", PayloadJson: []byte(payload), SessionContextJson: []byte(sctx)})
	if err != nil {
		t.Fatal(err)
	}
	var s summary
	for {
		ev, err := st.Recv()
		if err == io.EOF {
			return s
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		switch e := ev.Event.(type) {
		case *runnerv1.RunEvent_TextDelta:
			s.kinds = appendKind(s.kinds, "text")
			s.text += e.TextDelta.Text
			s.textDelta++
		case *runnerv1.RunEvent_MessageDone:
			s.kinds = append(s.kinds, "done")
			s.done = e.MessageDone.Text
		case *runnerv1.RunEvent_ReasoningDelta:
			s.kinds = appendKind(s.kinds, "reasoning")
			s.reasoning += e.ReasoningDelta.Text
		case *runnerv1.RunEvent_ToolCallDelta:
			s.kinds = appendKind(s.kinds, "tool_delta")
			s.toolArgs += e.ToolCallDelta.ArgumentsDelta
		case *runnerv1.RunEvent_ToolCall:
			s.kinds = append(s.kinds, "tool_call")
			s.calls = append(s.calls, e.ToolCall)
		case *runnerv1.RunEvent_ToolResult:
			s.kinds = append(s.kinds, "tool_result")
			s.results = append(s.results, e.ToolResult)
		case *runnerv1.RunEvent_ApprovalRequest:
			s.kinds = append(s.kinds, "approval")
			s.approvals = append(s.approvals, e.ApprovalRequest)
		case *runnerv1.RunEvent_StateDelta:
			s.kinds = append(s.kinds, "state")
			if err := json.Unmarshal(e.StateDelta.DeltaJson, &s.state); err != nil {
				t.Fatal(err)
			}
		case *runnerv1.RunEvent_Usage:
			s.kinds = append(s.kinds, "usage")
			s.usage = e.Usage
		case *runnerv1.RunEvent_Error:
			s.kinds = append(s.kinds, "error")
			s.err = e.Error
		case *runnerv1.RunEvent_Native:
			s.kinds = append(s.kinds, "native")
		}
	}
}

// appendKind collapses runs of the same delta kind.
func appendKind(k []string, kind string) []string {
	if len(k) > 0 && k[len(k)-1] == kind {
		return k
	}
	return append(k, kind)
}

func input(s string) string {
	b, _ := json.Marshal(map[string]any{"input": s})
	return string(b)
}

func TestEchoBehaviours(t *testing.T) {
	c, stop := inprocess.Serve(echoagent.NewWithOptions(echoagent.Options{}))
	t.Cleanup(stop)
	apr := regexp.MustCompile(`^apr_[0-9a-f]{12}$`)

	tests := []struct {
		name      string
		payload   string
		sctx      string
		wantKinds string
		check     func(t *testing.T, s summary)
	}{
		{
			name: "default echo", payload: input("hello there"),
			wantKinds: "native reasoning text done usage",
			check: func(t *testing.T, s summary) {
				if s.text != "Echo: hello there" || s.done != s.text || s.textDelta != 3 {
					t.Errorf("text %q (%d deltas), done %q", s.text, s.textDelta, s.done)
				}
				if s.reasoning != "Thinking about: hello there" {
					t.Errorf("reasoning %q", s.reasoning)
				}
				// Output tokens include the 4 reasoning tokens, as OpenAI counts them.
				if s.usage.GetOutputTokens() != 7 || s.usage.GetReasoningTokens() != 4 || s.usage.GetInputTokens() != 2 {
					t.Errorf("usage %v", s.usage)
				}
			},
		},
		{
			name: "input content blocks", payload: `{"input_content":[{"type":"input_text","text":"from blocks"}]}`,
			wantKinds: "native reasoning text done usage",
			check: func(t *testing.T, s summary) {
				if s.text != "Echo: from blocks" {
					t.Errorf("text %q", s.text)
				}
			},
		},
		{
			name: "deltas option", payload: `{"input":"a b","model_options":{"deltas":10,"delay_ms":0}}`,
			wantKinds: "native reasoning text done usage",
			check: func(t *testing.T, s summary) {
				if s.textDelta != 10 || s.usage.GetOutputTokens() != 10+s.usage.GetReasoningTokens() || !strings.HasPrefix(s.text, "Echo: a b Echo: a b") {
					t.Errorf("%d deltas, text %q", s.textDelta, s.text)
				}
			},
		},
		{
			name: "deltas bounded", payload: `{"input":"a","model_options":{"deltas":99999999999}}`,
			wantKinds: "native reasoning text done usage",
			check: func(t *testing.T, s summary) {
				if s.textDelta != echoagent.MaxDeltas {
					t.Errorf("%d deltas, want at most %d", s.textDelta, echoagent.MaxDeltas)
				}
			},
		},
		{
			name: "fewer deltas than words", payload: `{"input":"one two three four five","model_options":{"deltas":2}}`,
			wantKinds: "native reasoning text done usage",
			check: func(t *testing.T, s summary) {
				if s.textDelta != 2 || s.text != "Echo: one two three four five" {
					t.Errorf("%d deltas, text %q", s.textDelta, s.text)
				}
			},
		},
		{
			name: "tool", payload: input("use the tool on paris"),
			wantKinds: "tool_delta tool_call tool_result text done usage",
			check: func(t *testing.T, s summary) {
				if s.toolArgs != `{"query":"paris"}` || len(s.calls) != 1 || s.calls[0].Arguments != s.toolArgs || s.calls[0].Name != "lookup" {
					t.Errorf("args %q calls %v", s.toolArgs, s.calls)
				}
				if s.results[0].CallId != s.calls[0].CallId || !strings.Contains(s.results[0].Output, `"upper":"PARIS"`) {
					t.Errorf("result %v", s.results[0])
				}
				if !strings.Contains(s.text, `"paris" has 5 characters`) {
					t.Errorf("text %q", s.text)
				}
			},
		},
		{
			name: "approval", payload: input("please approve deleting notes.txt"),
			wantKinds: "text done tool_call approval",
			check: func(t *testing.T, s summary) {
				a := s.approvals[0]
				if !apr.MatchString(a.Id) || a.Name != "delete_file" || a.Arguments != `{"path":"notes.txt"}` || a.CallId != s.calls[0].CallId {
					t.Errorf("approval %v, call %v", a, s.calls[0])
				}
				if !json.Valid(a.DetailJson) {
					t.Errorf("detail %q", a.DetailJson)
				}
			},
		},
		{
			name:      "resume approved",
			payload:   `{"input":{"type":"mcp_approval_response"},"resume":{"approval_request_id":"apr_1","approve":true,"call_id":"call_1","name":"delete_file","arguments":"{\"path\":\"notes.txt\"}"}}`,
			sctx:      `{"is_resume":true}`,
			wantKinds: "tool_result text done",
			check: func(t *testing.T, s summary) {
				if s.results[0].CallId != "call_1" || !strings.Contains(s.results[0].Output, `"deleted":"notes.txt"`) || s.text != "Approved: deleted notes.txt." {
					t.Errorf("result %v text %q", s.results[0], s.text)
				}
			},
		},
		{
			name:      "resume rejected",
			payload:   `{"resume":{"approval_request_id":"apr_1","approve":false,"reason":"no","call_id":"call_1","name":"delete_file","arguments":"{\"path\":\"a.txt\"}"}}`,
			sctx:      `{"is_resume":true}`,
			wantKinds: "tool_result text done",
			check: func(t *testing.T, s summary) {
				if !strings.Contains(s.results[0].Output, `"skipped":"a.txt"`) || s.text != "Rejected: kept a.txt (no)." {
					t.Errorf("result %v text %q", s.results[0], s.text)
				}
			},
		},
		{
			name:      "resume without call id",
			payload:   `{"resume":{"approval_request_id":"apr_1","approve":true,"arguments":"{\"path\":\"b.txt\"}"}}`,
			sctx:      `{"is_resume":true}`,
			wantKinds: "tool_call tool_result text done",
			check: func(t *testing.T, s summary) {
				if s.calls[0].CallId != s.results[0].CallId {
					t.Errorf("call %v result %v", s.calls[0], s.results[0])
				}
			},
		},
		{
			name: "resume without decision", payload: `{}`, sctx: `{"is_resume":true}`,
			wantKinds: "error",
			check: func(t *testing.T, s summary) {
				if s.err.Code != "nothing_to_resume" {
					t.Errorf("error %v", s.err)
				}
			},
		},
		{
			name: "state", payload: input("state:color=blue, gone="), sctx: `{"state":{"gone":"x","size":"L"}}`,
			wantKinds: "state text done",
			check: func(t *testing.T, s summary) {
				if s.state["color"] != "blue" || s.state["gone"] != nil {
					t.Errorf("state %v", s.state)
				}
				if _, ok := s.state["gone"]; !ok {
					t.Errorf("deletion missing from %v", s.state)
				}
				if s.text != "State updated: color=blue, size=L" {
					t.Errorf("text %q", s.text)
				}
			},
		},
		{
			name: "history", payload: `{"input":"history","history":[{"role":"user","content":"first"},{"role":"assistant","content":"Echo: first"}]}`,
			wantKinds: "text done",
			check: func(t *testing.T, s summary) {
				if s.text != "History: 2 messages. First user message: first" {
					t.Errorf("text %q", s.text)
				}
			},
		},
		{
			name: "fail", payload: input("fail"), wantKinds: "error",
			check: func(t *testing.T, s summary) {
				if s.err.Code != pluginsdk.CodeAgentError || !strings.Contains(s.err.Message, "fail") {
					t.Errorf("error %v", s.err)
				}
			},
		},
		{
			name: "panic", payload: input("panic"), wantKinds: "error",
			check: func(t *testing.T, s summary) {
				if s.err.Code != pluginsdk.CodePanic || !strings.Contains(s.err.Detail, "echoagent.(*Agent).Run") {
					t.Errorf("error %v", s.err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := run(t, c, tt.payload, tt.sctx)
			if got := strings.Join(s.kinds, " "); got != tt.wantKinds {
				t.Fatalf("events %q, want %q", got, tt.wantKinds)
			}
			tt.check(t, s)
		})
	}
}

func TestApprovalIDsAreUnique(t *testing.T) {
	c, stop := inprocess.Serve(echoagent.New())
	t.Cleanup(stop)
	a := run(t, c, input("approve x"), "").approvals[0].Id
	b := run(t, c, input("approve x"), "").approvals[0].Id
	if a == b {
		t.Fatalf("approval ids repeat: %s", a)
	}
}

func TestDelayHonoursCancel(t *testing.T) {
	c, stop := inprocess.Serve(echoagent.NewWithOptions(echoagent.Options{Delay: time.Hour}))
	t.Cleanup(stop)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	st, err := c.Run(ctx, &runnerv1.RunRequest{PayloadJson: []byte(input("slow"))})
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err := st.Recv()
		if err != nil {
			if status.Code(err) != codes.DeadlineExceeded {
				t.Fatalf("got %v, want DeadlineExceeded", err)
			}
			return
		}
	}
}

func TestSummarize(t *testing.T) {
	c, stop := inprocess.Serve(echoagent.New())
	t.Cleanup(stop)
	d, err := c.Describe(context.Background(), &runnerv1.DescribeRequest{})
	if err != nil || !d.Capabilities.GetSummarize() || d.AgentName != "echo-go" {
		t.Fatalf("Describe = %v, %v", d, err)
	}
	s, err := c.Summarize(context.Background(), &runnerv1.SummarizeRequest{
		HistoryJson: []byte(`[{"role":"user","content":"hi"},{"role":"assistant","content":"Echo: hi"}]`),
	})
	if err != nil || !strings.Contains(s.Summary, "2 messages") || !strings.Contains(s.Summary, "began with: hi") {
		t.Fatalf("Summarize = %v, %v", s, err)
	}
}

func TestEchoQuotesAttachmentText(t *testing.T) {
	c, stop := inprocess.Serve(echoagent.NewWithOptions(echoagent.Options{}))
	t.Cleanup(stop)
	s := run(t, c, `{"input":"what does it say?","attachment_results":[{"name":"report.pdf","status":"ok","text_excerpt":"quarterly\nrevenue grew"}]}`, "")
	if want := "Echo: what does it say? [files: report.pdf (ok): quarterly revenue grew]"; s.text != want {
		t.Fatalf("text %q, want %q", s.text, want)
	}
}
