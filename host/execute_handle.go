// Stage 2 of a turn, execute: each runner event handled, by kind (see execute.go).

package host

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentengine/agentengine/internal/metrics"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
)

// handle turns one runner event into journal entries and durable events.
func (ts *turnState) handle(ctx context.Context, ev *runnerv1.RunEvent) {
	switch e := ev.Event.(type) {
	case *runnerv1.RunEvent_TextDelta:
		ts.sawToken()
		ts.flushReasoning(ctx)
		if ts.msgID == "" {
			ts.msgID = newID("msg_")
		}
		ts.msgText.Add(e.TextDelta.Text)
		ts.r.j.Add(Event{Kind: KindTextDelta, ItemID: ts.msgID, Text: e.TextDelta.Text})
		ts.snapshotText(ctx, time.Now())
	case *runnerv1.RunEvent_MessageDone:
		ts.flushReasoning(ctx)
		if e.MessageDone.Text != "" {
			if ts.msgID == "" {
				ts.msgID = newID("msg_")
			}
			ts.msgText.Set(e.MessageDone.Text)
		}
		ts.flushMessage(ctx)
	case *runnerv1.RunEvent_ReasoningDelta:
		ts.sawToken()
		ts.flushMessage(ctx)
		if ts.rsID == "" {
			ts.rsID = newID("rs_")
		}
		ts.rsText.Add(e.ReasoningDelta.Text)
		ts.r.j.Add(Event{Kind: KindReasoningDelta, ItemID: ts.rsID, Text: e.ReasoningDelta.Text})
	case *runnerv1.RunEvent_ToolCallDelta:
		ts.flushMessage(ctx)
		ts.flushReasoning(ctx)
		c := ts.call(e.ToolCallDelta.CallId, e.ToolCallDelta.Name)
		c.args = append(c.args, e.ToolCallDelta.ArgumentsDelta...)
		ts.r.j.Add(Event{Kind: KindToolArgsDelta, ItemID: c.itemID, CallID: e.ToolCallDelta.CallId, Name: c.name, Text: e.ToolCallDelta.ArgumentsDelta})
	case *runnerv1.RunEvent_ToolCall:
		ts.flushMessage(ctx)
		ts.flushReasoning(ctx)
		c := ts.call(e.ToolCall.CallId, e.ToolCall.Name)
		if e.ToolCall.Arguments != "" {
			c.args = []byte(e.ToolCall.Arguments)
		}
		ts.flushCall(ctx, e.ToolCall.CallId)
	case *runnerv1.RunEvent_ToolResult:
		ts.flushAll(ctx)
		t := e.ToolResult
		ts.toolResult(t)
		if at, ok := ts.toolStarts[t.CallId]; ok {
			delete(ts.toolStarts, t.CallId)
			name := t.Name
			if name == "" {
				name = ts.toolNames[t.CallId]
			}
			ts.toolSpan(t.CallId, name, at, time.Now(), t.IsError, t.Output, t.Traced)
		}
		ts.store(ctx, session.NewEvent{Type: session.TypeToolResult, Data: session.MustJSON(session.ToolResultData{CallID: t.CallId, Name: t.Name, Output: t.Output, IsError: t.IsError})})
	case *runnerv1.RunEvent_ApprovalRequest:
		ts.flushAll(ctx)
		a := e.ApprovalRequest
		id := a.Id
		if id == "" {
			id = newID("apr_")
		}
		args := a.Arguments
		if args == "" {
			args = "{}"
		}
		d := session.ApprovalRequestData{CallID: a.CallId, Name: a.Name, Arguments: args, Message: a.Message}
		if len(a.DetailJson) > 0 && json.Valid(a.DetailJson) {
			d.Detail = a.DetailJson
		}
		ts.store(ctx, session.NewEvent{Type: session.TypeApprovalRequest, ItemID: id, Data: session.MustJSON(d)})
		ts.rt.metrics.ToolCall(ts.r.Agent, a.Name, metrics.ToolApprovalRequired)
		ts.approvalEvent(id, a.Name, a.CallId)
		ts.interrupted = true
	case *runnerv1.RunEvent_StateDelta:
		ts.flushAll(ctx)
		if !json.Valid(e.StateDelta.DeltaJson) {
			ts.failure = &session.RunError{Code: "runner_error", Message: "the runner sent a state delta that is not valid JSON"}
			return
		}
		ne := session.NewEvent{Type: session.TypeStateDelta, Data: e.StateDelta.DeltaJson, StateDelta: e.StateDelta.DeltaJson}
		unlock := ts.rt.stateLocks.lock(ts.r.Key.App)
		if err := ts.rt.checkStateBudget(context.WithoutCancel(ctx), ts.r.Key, false, []session.NewEvent{ne}); err != nil {
			unlock()
			var ce *ClientError
			if !errors.As(err, &ce) {
				ts.storeErr = err
				return
			}
			// The run fails with the reason; what it stored before stays, this delta is
			// not written and the session takes turns as before.
			code := "runner_error"
			if errors.Is(err, ErrStateTooLarge) {
				code = "state_too_large"
			}
			ts.failure = &session.RunError{Code: code, Message: "the agent's state change was refused: " + ce.Message}
			ts.rt.log.Warn("agent state delta refused", "agent", ts.r.Agent, "invocation", ts.r.InvocationID, "error", err)
			return
		}
		ts.store(ctx, ne)
		unlock()
	case *runnerv1.RunEvent_Usage:
		u := e.Usage
		ts.usage.InputTokens += u.InputTokens
		ts.usage.OutputTokens += u.OutputTokens
		ts.usage.ReasoningTokens += u.ReasoningTokens
		ts.usage.CachedTokens += u.CachedTokens
		ts.haveUsage = true
		ts.rt.metrics.Tokens(ts.r.Agent, u.Model, u.InputTokens, u.OutputTokens)
		ts.modelSpanAttr(u.Model)
	case *runnerv1.RunEvent_Error:
		ts.flushAll(ctx)
		code := e.Error.Code
		if code == "" {
			code = "agent_error"
		}
		ts.failure = &session.RunError{Code: code, Message: e.Error.Message}
		ts.logger().Error("agent reported an error", "agent", ts.r.Agent, "invocation", ts.r.InvocationID, "message", e.Error.Message, "detail", e.Error.Detail)
	case *runnerv1.RunEvent_Native:
		switch e.Native.Kind {
		case NativeWorkspaceFile:
			ts.workspaceFile(ctx, e.Native.DataJson)
		case NativeEventMeta:
			ts.eventMeta(e.Native.DataJson)
		}
		ts.r.j.Add(Event{Kind: KindNative, Name: e.Native.Kind, Text: string(e.Native.DataJson)})
	case *runnerv1.RunEvent_Checkpoint:
		if e.Checkpoint.ThreadId == "" || e.Checkpoint.CheckpointId == "" {
			ts.failure = &session.RunError{Code: "runner_error", Message: "the runner sent a checkpoint without a thread or checkpoint id"}
			return
		}
		ts.checkpoints.checkpoint(e.Checkpoint)
	case *runnerv1.RunEvent_CheckpointWrite:
		w := e.CheckpointWrite
		if w.ThreadId == "" || w.CheckpointId == "" || w.TaskId == "" {
			ts.failure = &session.RunError{Code: "runner_error", Message: "the runner sent a checkpoint write without a thread, checkpoint or task id"}
			return
		}
		ts.checkpoints.write(w)
	case *runnerv1.RunEvent_CheckpointDelete:
		if e.CheckpointDelete.ThreadId == "" {
			ts.failure = &session.RunError{Code: "runner_error", Message: "the runner deleted checkpoints without a thread id"}
			return
		}
		ts.checkpoints.drop(e.CheckpointDelete.ThreadId)
	case *runnerv1.RunEvent_Artifact:
		ts.artifact(ctx, e.Artifact)
	}
}

// sawToken records the time to the run's first token.
func (ts *turnState) sawToken() {
	if !ts.firstToken {
		ts.firstToken = true
		ts.rt.metrics.FirstToken(ts.r.Agent, time.Since(ts.r.CreatedAt))
	}
}

// toolResult counts a tool call's outcome; a result may leave the tool's name out when
// its call named it.
func (ts *turnState) toolResult(t *runnerv1.ToolResult) {
	if ts.rt.metrics == nil {
		return
	}
	name := t.Name
	if name == "" {
		name = ts.toolNames[t.CallId]
	}
	status := metrics.ToolOK
	if t.IsError {
		status = metrics.ToolError
	}
	ts.rt.metrics.ToolCall(ts.r.Agent, name, status)
}

func (ts *turnState) call(callID, name string) *openCall {
	c, ok := ts.calls[callID]
	if !ok {
		c = &openCall{itemID: newID("fc_"), name: name}
		ts.calls[callID] = c
		ts.callOrder = append(ts.callOrder, callID)
	}
	if c.name == "" {
		c.name = name
	}
	return c
}
