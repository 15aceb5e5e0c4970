package actions

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/openai"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/wire"
)

// The run lifecycle actions KsADK's UI uses to show where a run stopped:
// ListSessionCheckpoints, GetCheckpointResumePreview, ResumeRun and ListToolReceipts.
// They read what the host keeps: the framework checkpoints of a session (the latest of
// each thread and namespace, saved when a run ends, so they belong to the session's
// latest finished run) and the stored tool_call / tool_result events.
//
// A checkpoint continues forward: a run paused for approval continues when the approval
// is answered (RunAgent with an mcp_approval_response); a run that failed, was cancelled
// or was cut short continues in place with ResumeRun when the agent's runner keeps its
// checkpoints with the host (the thread runs on from its checkpoint, the steps it
// finished are not run again); any run continues with a new turn.

type checkpointsRequest struct {
	sessionRequest
	RunID         string `json:"RunId"`
	CheckpointID  string `json:"CheckpointId"`
	OnlyResumable bool   `json:"OnlyResumable"`
	Framework     string `json:"Framework"`
	Offset        *int   `json:"Offset"`
	Limit         *int   `json:"Limit"`
}

type checkpointPayload struct {
	CheckpointID string         `json:"CheckpointId"`
	RunID        string         `json:"RunId"`
	InvocationID string         `json:"InvocationId"`
	SessionID    string         `json:"SessionId"`
	AgentID      string         `json:"AgentId"`
	SeqID        int64          `json:"SeqId"`
	Timestamp    float64        `json:"Timestamp"`
	Framework    string         `json:"Framework"`
	FrameworkRef map[string]any `json:"FrameworkRef"`
	Phase        string         `json:"Phase"`
	Status       string         `json:"Status"`
	Summary      string         `json:"Summary"`
	NextAction   string         `json:"NextAction"`
	Resumable    bool           `json:"Resumable"`
	Metadata     map[string]any `json:"Metadata"`
}

type receiptPayload struct {
	ReceiptID      string         `json:"ReceiptId"`
	IdempotencyKey string         `json:"IdempotencyKey"`
	ToolName       string         `json:"ToolName"`
	ToolCallID     string         `json:"ToolCallId"`
	RunID          string         `json:"RunId"`
	InvocationID   string         `json:"InvocationId"`
	CheckpointID   string         `json:"CheckpointId"`
	SessionID      string         `json:"SessionId"`
	SeqID          int64          `json:"SeqId"`
	Timestamp      float64        `json:"Timestamp"`
	Status         string         `json:"Status"`
	Replayed       bool           `json:"Replayed"`
	Metadata       map[string]any `json:"Metadata"`
}

// lastRun is the session's latest finished run, which saved its checkpoints.
type lastRun struct {
	invocation string
	status     string
	seq        int64
	time       float64
	err        string
}

// runLifecycle is what the lifecycle actions read of a session.
type lifecycle struct {
	key         session.Key
	framework   string
	checkpoints []checkpointPayload
	last        lastRun
	pending     []string // tools whose approval the latest run waits for
	running     string   // the invocation in progress, if any
	canContinue bool     // the agent's runner continues checkpoints in place
}

// lifecycle reads a session's checkpoints, its latest finished run and what it waits for.
func (s *Surface) lifecycle(ctx context.Context, c *gin.Context, action string, req *sessionRequest) (*lifecycle, *actionError) {
	key, sess, e := s.callerSession(ctx, c, action, req.scoped, req.SessionID)
	if e != nil {
		return nil, e
	}
	a, _ := s.agent(key.App)
	l := &lifecycle{key: key, framework: a.Framework, canContinue: s.rt.CanContinue(ctx, key.App)}
	if sess.ActiveRunStatus == session.StatusInProgress {
		l.running = sess.ActiveInvocationID
	}
	statuses, err := s.rt.Events(ctx, key, session.EventQuery{Types: []string{session.TypeRunStatus}, Tail: true, Limit: 64})
	if err != nil {
		return nil, s.fromHost(action, err)
	}
	for i := len(statuses) - 1; i >= 0; i-- {
		var d session.RunStatusData
		if json.Unmarshal(statuses[i].Data, &d) != nil || !session.IsTerminalStatus(d.Status) {
			continue
		}
		l.last = lastRun{invocation: statuses[i].InvocationID, status: d.Status, seq: statuses[i].Seq, time: epoch(statuses[i].Time)}
		if d.Error != nil {
			l.last.err = d.Error.Message
		}
		break
	}
	if l.last.status == session.StatusInterrupted {
		pend, err := s.rt.PendingApprovals(ctx, key)
		if err != nil {
			return nil, s.fromHost(action, err)
		}
		for _, p := range pend {
			l.pending = append(l.pending, p.Name)
		}
	}
	cps, err := s.rt.Checkpoints(ctx, key)
	if err != nil {
		return nil, s.fromHost(action, err)
	}
	for _, cp := range cps {
		l.checkpoints = append(l.checkpoints, l.payload(cp))
	}
	return l, nil
}

func (l *lifecycle) payload(cp session.Checkpoint) checkpointPayload {
	interrupts := 0
	for _, w := range cp.Writes {
		if w.Channel == "__interrupt__" {
			interrupts++
		}
	}
	status, next := l.last.status, ""
	resumable := l.continuable(cp)
	switch {
	case len(l.pending) > 0:
		status, next = "waiting_approval", "approve or reject "+strings.Join(l.pending, ", ")
	case l.last.status == session.StatusCompleted:
	case resumable:
		next = "resume it in place with ResumeRun, or continue with a new turn"
	case l.last.status != "":
		next = "continue with a new turn"
	}
	summary := fmt.Sprintf("state of thread %s after run %s (%s)", cp.ThreadID, l.last.invocation, orText(l.last.status, "unknown"))
	if l.last.err != "" {
		summary += ": " + l.last.err
	}
	return checkpointPayload{
		CheckpointID: cp.ID, RunID: l.last.invocation, InvocationID: l.last.invocation, SessionID: l.key.ID, AgentID: l.key.App,
		SeqID: l.last.seq, Timestamp: l.last.time, Framework: l.framework,
		FrameworkRef: map[string]any{"thread_id": cp.ThreadID, "checkpoint_ns": cp.Namespace, "checkpoint_id": cp.ID, "parent_checkpoint_id": cp.ParentID},
		Phase:        l.last.status, Status: status, Summary: summary, NextAction: next,
		Resumable: resumable,
		Metadata: map[string]any{"thread_id": cp.ThreadID, "namespace": cp.Namespace, "pending_writes": len(cp.Writes),
			"interrupts": interrupts},
	}
}

// continuable reports whether cp continues in place (ResumeRun): a thread's top-level
// checkpoint saved by a run that ended before its graph did (failed, cancelled or cut
// short), in a session with no run in progress or waiting for approval, of an agent
// whose runner continues checkpoints.
func (l *lifecycle) continuable(cp session.Checkpoint) bool {
	if !l.canContinue || cp.Namespace != "" || l.running != "" || len(l.pending) > 0 {
		return false
	}
	switch l.last.status {
	case session.StatusFailed, session.StatusCancelled, session.StatusInterrupted:
		return true
	}
	return false
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// page applies Offset and Limit (validated by the caller).
func page[T any](items []T, offset, limit int) []T {
	if offset >= len(items) {
		return []T{}
	}
	return items[offset:min(len(items), offset+limit)]
}

func (req *checkpointsRequest) check(maxLimit int) *actionError {
	return firstError(checkRange("Offset", req.Offset, 0, 1<<20), checkRange("Limit", req.Limit, 1, maxLimit),
		checkID("RunId", req.RunID), checkID("CheckpointId", req.CheckpointID))
}

// listCheckpoints serves ListSessionCheckpoints.
func (s *Surface) listCheckpoints(ctx context.Context, c *gin.Context, req *checkpointsRequest) (any, *actionError) {
	if e := req.check(500); e != nil {
		return nil, e
	}
	l, e := s.lifecycle(ctx, c, "ListSessionCheckpoints", &req.sessionRequest)
	if e != nil {
		return nil, e
	}
	out := []checkpointPayload{}
	for _, cp := range l.checkpoints {
		if (req.RunID != "" && cp.RunID != req.RunID) || (req.Framework != "" && !strings.EqualFold(req.Framework, cp.Framework)) ||
			(req.OnlyResumable && !cp.Resumable) {
			continue
		}
		out = append(out, cp)
	}
	offset, limit := orDefault(req.Offset, 0), orDefault(req.Limit, 100)
	return struct {
		Checkpoints []checkpointPayload `json:"Checkpoints"`
		Total       int                 `json:"Total"`
		Offset      int                 `json:"Offset"`
		Limit       int                 `json:"Limit"`
	}{page(out, offset, limit), len(out), offset, limit}, nil
}

// find returns the checkpoint a preview or resume names (RunId and CheckpointId
// required).
func (l *lifecycle) find(runID, checkpointID string) (checkpointPayload, *actionError) {
	for _, cp := range l.checkpoints {
		if cp.CheckpointID == checkpointID {
			if cp.RunID != runID {
				return cp, notFound("checkpoint %q belongs to run %q, not %q", checkpointID, cp.RunID, runID)
			}
			return cp, nil
		}
	}
	return checkpointPayload{}, notFound("Checkpoint not found: session %q keeps no checkpoint %q (only the latest state of each thread is kept)", l.key.ID, checkpointID)
}

func requireRef(req *checkpointsRequest) *actionError {
	if e := requireID("RunId", req.RunID); e != nil {
		return e
	}
	return requireID("CheckpointId", req.CheckpointID)
}

// previewCheckpoint serves GetCheckpointResumePreview.
func (s *Surface) previewCheckpoint(ctx context.Context, c *gin.Context, req *checkpointsRequest) (any, *actionError) {
	if e := req.check(500); e != nil {
		return nil, e
	}
	if e := requireRef(req); e != nil {
		return nil, e
	}
	l, e := s.lifecycle(ctx, c, "GetCheckpointResumePreview", &req.sessionRequest)
	if e != nil {
		return nil, e
	}
	cp, e := l.find(req.RunID, req.CheckpointID)
	if e != nil {
		return nil, e
	}
	receipts, e := s.receipts(ctx, l, req.RunID)
	if e != nil {
		return nil, e
	}
	reason, expected, risk := l.verdict(cp)
	return map[string]any{"Preview": map[string]any{
		"Checkpoint":     cp,
		"Capabilities":   map[string]any{"Resume": l.canContinue, "Preview": true, "ToolReceipts": true},
		"CanResume":      cp.Resumable,
		"Reason":         reason,
		"NextNode":       "",
		"ExpectedAction": expected,
		"ToolReceipts":   receipts,
		"Risk":           map[string]any{"Level": risk, "CompletedToolCalls": countStatus(receipts, "completed"), "PendingToolCalls": countStatus(receipts, "pending")},
		"Summary":        cp.Summary,
	}}, nil
}

// verdict says how the checkpoint's run continues: the reason, the expected client
// action and the risk of continuing (tools already run would not run again).
func (l *lifecycle) verdict(cp checkpointPayload) (reason, expected, risk string) {
	switch {
	case l.running != "":
		return "run " + l.running + " is in progress in this session", "wait", "high"
	case len(l.pending) > 0:
		return "run " + l.last.invocation + " waits for approval of " + strings.Join(l.pending, ", ") +
			": answer it with RunAgent (ResponsesInput [{type: mcp_approval_response, approval_request_id, approve}])", "approval", "medium"
	case l.last.status == session.StatusCompleted:
		return "run " + l.last.invocation + " completed: there is nothing to resume", "none", "low"
	case cp.Resumable:
		return "run " + l.last.invocation + " ended " + l.last.status +
			": ResumeRun continues its thread from this checkpoint (the steps it finished are not run again)", "resume", "medium"
	default:
		return "run " + l.last.invocation + " ended " + orText(l.last.status, "unknown") +
			": send a new turn with RunAgent; the agent continues from the kept state of its thread", "new_turn", "low"
	}
}

func countStatus(rs []receiptPayload, status string) int {
	n := 0
	for _, r := range rs {
		if r.Status == status {
			n++
		}
	}
	return n
}

type resumeRunRequest struct {
	checkpointsRequest
	ResumeAttemptID          string `json:"ResumeAttemptId"`
	InvocationID             string `json:"InvocationId"`
	Stream                   bool   `json:"Stream"`
	ResumeInstructionEnabled bool   `json:"ResumeInstructionEnabled"`
	ResumeInstruction        string `json:"ResumeInstruction"`
	modelFields
}

// resumeRun serves ResumeRun: a checkpoint that continues in place starts a run that
// continues its thread (answered like RunAgent: the Responses object, or its stream);
// noop for a finished run's checkpoint (as KsADK answers for a terminal checkpoint);
// 409 checkpoint_not_resumable, naming what to do, for one that continues by an
// approval answer or a new turn; 409 resume_already_running while a run is in progress.
func (s *Surface) resumeRun(ctx context.Context, c *gin.Context, req *resumeRunRequest) (any, *actionError) {
	if e := req.check(500); e != nil {
		return nil, e
	}
	if e := firstError(requireRef(&req.checkpointsRequest), checkID("ResumeAttemptId", req.ResumeAttemptID), checkID("InvocationId", req.InvocationID)); e != nil {
		return nil, e
	}
	l, e := s.lifecycle(ctx, c, "ResumeRun", &req.sessionRequest)
	if e != nil {
		return nil, e
	}
	cp, e := l.find(req.RunID, req.CheckpointID)
	if e != nil {
		return nil, e
	}
	reason, expected, _ := l.verdict(cp)
	switch expected {
	case "none":
		return map[string]any{"status": "noop", "Status": "noop", "Reason": reason, "SessionId": l.key.ID, "RunId": cp.RunID, "CheckpointId": cp.CheckpointID}, nil
	case "wait":
		return nil, &actionError{Status: http.StatusConflict, Code: "resume_already_running", Message: reason}
	case "resume":
		return s.continueCheckpoint(ctx, c, l, cp, req)
	}
	return nil, &actionError{Status: http.StatusConflict, Code: "checkpoint_not_resumable", Message: "checkpoint " + cp.CheckpointID + " is not resumed in place: " + reason}
}

// continueCheckpoint starts the run that continues cp's thread and answers with it.
func (s *Surface) continueCheckpoint(ctx context.Context, c *gin.Context, l *lifecycle, cp checkpointPayload, req *resumeRunRequest) (any, *actionError) {
	thread, _ := cp.FrameworkRef["thread_id"].(string)
	t := host.TurnRequest{Surface: "actions", App: l.key.App, User: l.key.User, SessionID: l.key.ID,
		// A repeated attempt reuses its invocation id, so it is refused (409) instead of
		// running the thread twice.
		InvocationID: cmp.Or(req.InvocationID, req.ResumeAttemptID),
		ResponseID:   host.NewID("resp_"),
		ContinueFrom: &wire.CheckpointRef{ThreadID: thread, CheckpointID: cp.CheckpointID}}
	if _, ok := s.routedAgent(req.Model); ok {
		req.Model = "" // the picked agent (the session's own continues), no model override
	}
	if e := req.apply(&t); e != nil {
		return nil, e
	}
	if req.ResumeInstructionEnabled {
		t.Instructions = req.ResumeInstruction
	}
	t.Meta = openai.ResponseMeta(l.key.App, t.Metadata, "", false)
	run, err := s.rt.Start(ctx, t)
	if errors.Is(err, host.ErrRunActive) {
		return nil, &actionError{Status: http.StatusConflict, Code: "resume_already_running", Message: host.ClientMessage(err)}
	}
	if err != nil {
		return nil, s.fromHost("ResumeRun", err)
	}
	runHeaders(c, run)
	return s.answerResponse(ctx, c, run, req.Stream)
}

// listReceipts serves ListToolReceipts: one receipt per tool call of the session's
// stored runs, newest first.
func (s *Surface) listReceipts(ctx context.Context, c *gin.Context, req *checkpointsRequest) (any, *actionError) {
	if e := req.check(500); e != nil {
		return nil, e
	}
	l, e := s.lifecycle(ctx, c, "ListToolReceipts", &req.sessionRequest)
	if e != nil {
		return nil, e
	}
	runID := req.RunID
	if req.CheckpointID != "" {
		cp, e := l.find(orText(req.RunID, l.last.invocation), req.CheckpointID)
		if e != nil {
			return nil, e
		}
		runID = cp.RunID
	}
	rs, e := s.receipts(ctx, l, runID)
	if e != nil {
		return nil, e
	}
	offset, limit := orDefault(req.Offset, 0), orDefault(req.Limit, 100)
	return struct {
		ToolReceipts []receiptPayload `json:"ToolReceipts"`
		Total        int              `json:"Total"`
		Offset       int              `json:"Offset"`
		Limit        int              `json:"Limit"`
	}{page(rs, offset, limit), len(rs), offset, limit}, nil
}

// receipts builds the tool receipts of a session (of one run if runID is set), newest
// first: a tool_call with its tool_result, or pending without one.
func (s *Surface) receipts(ctx context.Context, l *lifecycle, runID string) ([]receiptPayload, *actionError) {
	// Results are matched by call id across runs: a call paused for approval gets its
	// result in the run that answers the approval.
	evs, err := s.rt.Events(ctx, l.key, session.EventQuery{Types: []string{session.TypeToolCall, session.TypeToolResult}})
	if err != nil {
		return nil, s.fromHost("ListToolReceipts", err)
	}
	var out []receiptPayload
	byCall := map[string]int{}
	for _, ev := range evs {
		switch ev.Type {
		case session.TypeToolCall:
			d, err := session.DataOf[session.ToolCallData](ev)
			if err != nil {
				continue
			}
			cpID := ""
			if ev.InvocationID == l.last.invocation && len(l.checkpoints) > 0 {
				cpID = l.checkpoints[0].CheckpointID
			}
			byCall[d.CallID] = len(out)
			out = append(out, receiptPayload{
				ReceiptID: "rcpt_" + ev.ItemID, IdempotencyKey: l.key.ID + ":" + ev.InvocationID + ":" + d.CallID,
				ToolName: d.Name, ToolCallID: d.CallID, RunID: ev.InvocationID, InvocationID: ev.InvocationID, CheckpointID: cpID,
				SessionID: l.key.ID, SeqID: ev.Seq, Timestamp: epoch(ev.Time), Status: "pending",
				Metadata: map[string]any{"arguments": d.Arguments},
			})
		case session.TypeToolResult:
			d, err := session.DataOf[session.ToolResultData](ev)
			if err != nil {
				continue
			}
			i, ok := byCall[d.CallID]
			if !ok {
				continue
			}
			if ev.InvocationID != out[i].RunID {
				out[i].Metadata["result_run_id"] = ev.InvocationID
			}
			out[i].Status = "completed"
			if d.IsError {
				out[i].Status = "failed"
			}
			out[i].Metadata["result_seq_id"] = ev.Seq
		}
	}
	sel := []receiptPayload{}
	for i := len(out) - 1; i >= 0; i-- {
		if runID == "" || out[i].RunID == runID {
			sel = append(sel, out[i])
		}
	}
	return sel, nil
}
