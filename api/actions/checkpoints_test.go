package actions_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentengine/agentengine/api/actions"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/session"
)

// graphAgent keeps its thread state with the host as a LangGraph runner does: every
// run saves a checkpoint of its thread; "tool" runs a tool, "ask" pauses for approval
// (with the interrupt as a pending write), a resume finishes.
type graphAgent struct {
	mu sync.Mutex
	n  int
}

func (a *graphAgent) Info() pluginsdk.Info {
	return pluginsdk.Info{Name: "graph", Framework: "langgraph",
		Capabilities: pluginsdk.Capabilities{Resume: true, Checkpoints: true}}
}

func (a *graphAgent) Run(_ context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	a.mu.Lock()
	a.n++
	id := fmt.Sprintf("cp_%03d", a.n)
	a.mu.Unlock()
	save := func() error {
		return emit.Checkpoint(session.Checkpoint{ThreadID: req.SessionID, ID: id, ParentID: "cp_parent", Data: []byte("state")})
	}
	if c := req.Payload.ContinueFrom; c != nil {
		if err := save(); err != nil {
			return err
		}
		return emit.Text("continued " + c.ThreadID + " from " + c.CheckpointID)
	}
	if req.Context.IsResume {
		if err := emit.ToolResult("call_del", "delete_file", `{"deleted":true}`, false); err != nil {
			return err
		}
		if err := save(); err != nil {
			return err
		}
		return emit.Text("resumed")
	}
	if err := save(); err != nil {
		return err
	}
	switch in := req.InputText(); {
	case strings.Contains(in, "tool"):
		if err := emit.ToolCall("call_look", "lookup", `{"q":"paris"}`); err != nil {
			return err
		}
		if err := emit.ToolResult("call_look", "lookup", "found", false); err != nil {
			return err
		}
		if err := emit.ToolCall("call_bad", "lookup", `{"q":""}`); err != nil {
			return err
		}
		if err := emit.ToolResult("call_bad", "lookup", "empty query", true); err != nil {
			return err
		}
		return emit.Text("looked it up")
	case strings.Contains(in, "crash"):
		return errors.New("the model went away")
	case strings.Contains(in, "ask"):
		if err := emit.CheckpointWrite(session.CheckpointWrite{ThreadID: req.SessionID, CheckpointID: id, TaskID: "task", Channel: "__interrupt__", Data: []byte("ask")}); err != nil {
			return err
		}
		if err := emit.ToolCall("call_del", "delete_file", `{"path":"a.txt"}`); err != nil {
			return err
		}
		return emit.ApprovalRequest(pluginsdk.ApprovalRequest{ID: "apr_del", CallID: "call_del", Name: "delete_file", Arguments: `{"path":"a.txt"}`})
	}
	return emit.Text("hello")
}

type checkpointRow struct {
	CheckpointId, RunId, InvocationId, SessionId, Framework, Phase, Status, Summary, NextAction string
	SeqId                                                                                       int64
	Timestamp                                                                                   float64
	Resumable                                                                                   bool
	FrameworkRef                                                                                map[string]any
	Metadata                                                                                    map[string]any
}

type receiptRow struct {
	ReceiptId, IdempotencyKey, ToolName, ToolCallId, RunId, CheckpointId, Status string
	SeqId                                                                        int64
	Replayed                                                                     bool
}

func TestCheckpointsAndReceipts(t *testing.T) {
	e := newEnv(t, func(o *envOptions) { o.runner = &graphAgent{} })
	s := e.createSession(map[string]any{})
	ref := map[string]any{"SessionId": s.SessionId}

	// A new session keeps nothing.
	var list struct {
		Checkpoints []checkpointRow
		Total       int
	}
	e.must("ListSessionCheckpoints", ref, &list)
	if list.Total != 0 || len(list.Checkpoints) != 0 {
		t.Fatalf("new session %+v", list)
	}

	first := e.run(map[string]any{"SessionId": s.SessionId, "Messages": userMessages("use a tool")})
	inv1 := e.invocation(s.SessionId, "user")
	e.must("ListSessionCheckpoints", ref, &list)
	if list.Total != 1 || len(list.Checkpoints) != 1 {
		t.Fatalf("after a run %+v", list)
	}
	cp := list.Checkpoints[0]
	if cp.CheckpointId != "cp_001" || cp.RunId != inv1 || cp.InvocationId != inv1 || cp.SessionId != s.SessionId ||
		cp.Status != "completed" || cp.Framework != "go" || cp.FrameworkRef["thread_id"] != s.SessionId || cp.Timestamp == 0 || cp.SeqId == 0 || cp.Resumable {
		t.Errorf("checkpoint %+v (first response %s)", cp, first.ID)
	}

	// The tool calls of the run, newest first, each with its outcome.
	var rc struct {
		ToolReceipts []receiptRow
		Total        int
	}
	e.must("ListToolReceipts", ref, &rc)
	if rc.Total != 2 || len(rc.ToolReceipts) != 2 {
		t.Fatalf("receipts %+v", rc)
	}
	bad, good := rc.ToolReceipts[0], rc.ToolReceipts[1]
	if good.ToolCallId != "call_look" || good.Status != "completed" || good.ToolName != "lookup" || good.RunId != inv1 ||
		good.CheckpointId != "cp_001" || good.IdempotencyKey != s.SessionId+":"+inv1+":call_look" || good.ReceiptId == "" || good.Replayed {
		t.Errorf("receipt %+v", good)
	}
	if bad.ToolCallId != "call_bad" || bad.Status != "failed" || bad.SeqId <= good.SeqId {
		t.Errorf("failed receipt %+v", bad)
	}
	e.must("ListToolReceipts", map[string]any{"SessionId": s.SessionId, "Limit": 1, "Offset": 1}, &rc)
	if rc.Total != 2 || len(rc.ToolReceipts) != 1 || rc.ToolReceipts[0].ToolCallId != "call_look" {
		t.Errorf("page %+v", rc)
	}

	// A completed run's checkpoint: nothing to resume (KsADK's noop).
	var noop map[string]any
	e.must("ResumeRun", map[string]any{"SessionId": s.SessionId, "RunId": inv1, "CheckpointId": "cp_001", "Stream": true}, &noop)
	if noop["Status"] != "noop" {
		t.Errorf("resume of a completed run %v", noop)
	}

	// A run paused for approval: its checkpoint replaces the first; the preview says
	// the approval is what continues it.
	e.run(map[string]any{"SessionId": s.SessionId, "Messages": userMessages("ask first")})
	inv2 := e.invocation(s.SessionId, "user")
	e.must("ListSessionCheckpoints", ref, &list)
	if len(list.Checkpoints) != 1 || list.Checkpoints[0].CheckpointId != "cp_002" || list.Checkpoints[0].RunId != inv2 ||
		list.Checkpoints[0].Status != "waiting_approval" || !strings.Contains(list.Checkpoints[0].NextAction, "delete_file") ||
		list.Checkpoints[0].Metadata["interrupts"] != float64(1) {
		t.Fatalf("paused run %+v", list.Checkpoints)
	}
	var pv struct {
		Preview struct {
			Checkpoint     checkpointRow
			CanResume      bool
			Reason         string
			ExpectedAction string
			ToolReceipts   []receiptRow
			Risk           struct{ Level string }
		}
	}
	e.must("GetCheckpointResumePreview", map[string]any{"SessionId": s.SessionId, "RunId": inv2, "CheckpointId": "cp_002"}, &pv)
	p := pv.Preview
	if p.Checkpoint.CheckpointId != "cp_002" || p.CanResume || p.ExpectedAction != "approval" || !strings.Contains(p.Reason, "mcp_approval_response") ||
		len(p.ToolReceipts) != 1 || p.ToolReceipts[0].Status != "pending" || p.Risk.Level == "" {
		t.Errorf("preview %+v", p)
	}
	wantError(t, e.post("ResumeRun", map[string]any{"SessionId": s.SessionId, "RunId": inv2, "CheckpointId": "cp_002"}), 409, "checkpoint_not_resumable", "approval")

	// Filters and rejections.
	e.must("ListSessionCheckpoints", map[string]any{"SessionId": s.SessionId, "RunId": inv1}, &list)
	if len(list.Checkpoints) != 0 {
		t.Errorf("RunId filter %+v", list)
	}
	e.must("ListSessionCheckpoints", map[string]any{"SessionId": s.SessionId, "OnlyResumable": true}, &list)
	if len(list.Checkpoints) != 0 {
		t.Errorf("OnlyResumable %+v", list)
	}
	for _, tc := range []struct {
		action   string
		body     map[string]any
		status   int
		code     string
		mentions string
	}{
		{"ListSessionCheckpoints", map[string]any{}, 400, actions.CodeMissingParameter, "SessionId"},
		{"ListSessionCheckpoints", map[string]any{"SessionId": "nope"}, 404, actions.CodeNotFound, "nope"},
		{"ListSessionCheckpoints", map[string]any{"SessionId": s.SessionId, "UserId": "mallory"}, 404, actions.CodeNotFound, ""},
		{"ListSessionCheckpoints", map[string]any{"SessionId": s.SessionId, "Limit": 0}, 400, actions.CodeInvalidParameter, "Limit"},
		{"GetCheckpointResumePreview", map[string]any{"SessionId": s.SessionId, "RunId": inv2}, 400, actions.CodeMissingParameter, "CheckpointId"},
		{"GetCheckpointResumePreview", map[string]any{"SessionId": s.SessionId, "RunId": inv2, "CheckpointId": "cp_001"}, 404, actions.CodeNotFound, "Checkpoint not found"},
		{"GetCheckpointResumePreview", map[string]any{"SessionId": s.SessionId, "RunId": inv1, "CheckpointId": "cp_002"}, 404, actions.CodeNotFound, inv2},
		{"ResumeRun", map[string]any{"SessionId": s.SessionId, "CheckpointId": "cp_002"}, 400, actions.CodeMissingParameter, "RunId"},
		{"ListToolReceipts", map[string]any{"SessionId": s.SessionId, "CheckpointId": "cp_404"}, 404, actions.CodeNotFound, "cp_404"},
	} {
		t.Run(tc.action+" "+tc.mentions, func(t *testing.T) {
			wantError(t, e.post(tc.action, tc.body), tc.status, tc.code, tc.mentions)
		})
	}

	// Answering the approval continues the run; its checkpoint is then of a completed run.
	e.run(map[string]any{"SessionId": s.SessionId, "ResponsesInput": []map[string]any{{"type": "mcp_approval_response", "approval_request_id": "apr_del", "approve": true}}})
	inv3 := e.invocation(s.SessionId, "user")
	e.must("ListSessionCheckpoints", ref, &list)
	if len(list.Checkpoints) != 1 || list.Checkpoints[0].RunId != inv3 || list.Checkpoints[0].Status != "completed" {
		t.Errorf("after the approval %+v", list.Checkpoints)
	}
	e.must("ListToolReceipts", map[string]any{"SessionId": s.SessionId, "RunId": inv2}, &rc)
	// The approved call's result came in the run that answered the approval.
	if len(rc.ToolReceipts) != 1 || rc.ToolReceipts[0].ToolCallId != "call_del" || rc.ToolReceipts[0].Status != "completed" {
		t.Errorf("receipts of the paused run %+v", rc.ToolReceipts)
	}
}

// A failed run of an agent whose runner keeps its checkpoints continues in place:
// ResumeRun starts a run that continues the checkpoint's thread (non-stream and stream).
func TestResumeRunContinuesAFailedRunInPlace(t *testing.T) {
	e := newEnv(t, func(o *envOptions) { o.runner = &graphAgent{} })
	var boot struct {
		Capabilities struct {
			ResumeRun    bool
			RunLifecycle struct{ CheckpointResume bool }
		}
	}
	e.must("GetAgentUiBootstrap", map[string]any{}, &boot)
	if !boot.Capabilities.ResumeRun || !boot.Capabilities.RunLifecycle.CheckpointResume {
		t.Errorf("bootstrap capabilities %+v", boot.Capabilities)
	}
	s := e.createSession(map[string]any{})
	for round, stream := range []bool{false, true} {
		e.post("RunAgent", map[string]any{"SessionId": s.SessionId, "Messages": userMessages("crash now")})
		failed := e.invocation(s.SessionId, "user")
		var list struct{ Checkpoints []checkpointRow }
		e.must("ListSessionCheckpoints", map[string]any{"SessionId": s.SessionId, "OnlyResumable": true}, &list)
		if len(list.Checkpoints) != 1 || !list.Checkpoints[0].Resumable || list.Checkpoints[0].Status != "failed" ||
			list.Checkpoints[0].RunId != failed || !strings.Contains(list.Checkpoints[0].NextAction, "ResumeRun") {
			t.Fatalf("round %d: checkpoints after a failed run %+v", round, list.Checkpoints)
		}
		cp := list.Checkpoints[0]
		var pv struct {
			Preview struct {
				CanResume      bool
				ExpectedAction string
			}
		}
		e.must("GetCheckpointResumePreview", map[string]any{"SessionId": s.SessionId, "RunId": failed, "CheckpointId": cp.CheckpointId}, &pv)
		if !pv.Preview.CanResume || pv.Preview.ExpectedAction != "resume" {
			t.Errorf("round %d: preview %+v", round, pv.Preview)
		}
		body := map[string]any{"SessionId": s.SessionId, "RunId": failed, "CheckpointId": cp.CheckpointId,
			"ResumeAttemptId": fmt.Sprintf("attempt_%d", round), "Stream": stream}
		want := "continued " + s.SessionId + " from " + cp.CheckpointId
		if stream {
			frames := e.stream(ctxTimeout(t, 10*time.Second), "POST", actions.Prefix+"ResumeRun", body).all(t)
			var sawText, completed bool
			for _, f := range frames {
				sawText = sawText || strings.Contains(f.data, want)
				completed = completed || f.event == "response.completed"
			}
			if !sawText || !completed {
				t.Fatalf("resume stream %+v", frames)
			}
		} else {
			var resp struct {
				Status string
				Output []struct {
					Content []struct{ Text string }
				}
			}
			e.must("ResumeRun", body, &resp)
			if resp.Status != "completed" || len(resp.Output) == 0 || len(resp.Output[0].Content) == 0 || resp.Output[0].Content[0].Text != want {
				t.Fatalf("resume %+v", resp)
			}
		}
		// The continued run (its invocation id is the attempt's) is the session's latest;
		// it completed, so nothing is left to resume.
		if got := e.invocation(s.SessionId, "user"); got != fmt.Sprintf("attempt_%d", round) {
			t.Fatalf("round %d: latest invocation %q", round, got)
		}
		e.must("ListSessionCheckpoints", map[string]any{"SessionId": s.SessionId, "OnlyResumable": true}, &list)
		if len(list.Checkpoints) != 0 {
			t.Fatalf("round %d: resumable after the continued run %+v", round, list.Checkpoints)
		}
	}
	// A checkpoint the session does not keep is not found.
	wantError(t, e.post("ResumeRun", map[string]any{"SessionId": s.SessionId, "RunId": "run_x", "CheckpointId": "cp_999"}), 404, actions.CodeNotFound, "cp_999")
}
