package pluginsdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// ApprovalRequest asks a human to decide before the agent continues. After emitting one
// (or several) the Runner returns; the run ends interrupted and a later turn resumes it
// with Request.Context.IsResume set and the decision in Request.Payload.Resume.
type ApprovalRequest struct {
	// ID is the stable id the client answers with; unique per request (e.g. "apr_…").
	ID string
	// CallID is the tool call this approval guards, if any.
	CallID string
	Name   string
	// Arguments is a JSON document as text; "" means none.
	Arguments string
	Message   string
	// Detail is framework detail as JSON (optional).
	Detail json.RawMessage
}

// Emitter sends a run's events to the host. Its methods are safe for concurrent use; each
// returns an error wrapping ErrStreamClosed once the stream is gone (run cancelled, host
// gone, or Run returned), so agents can stop producing work.
type Emitter struct {
	ctx       context.Context
	framework string
	send      func(*runnerv1.RunEvent) error

	// mu serialises sends: a gRPC stream's Send is not safe for concurrent use.
	mu     sync.Mutex
	closed bool
}

func newEmitter(ctx context.Context, framework string, send func(*runnerv1.RunEvent) error) *Emitter {
	return &Emitter{ctx: ctx, framework: framework, send: send}
}

// close stops further sends; it waits for a send in progress.
func (e *Emitter) close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
}

// Send sends a raw protocol event. The typed methods below are usually more convenient.
func (e *Emitter) Send(ev *runnerv1.RunEvent) error {
	if ev == nil || ev.Event == nil {
		return errors.New("pluginsdk: Send: empty event")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrStreamClosed
	}
	if err := e.ctx.Err(); err != nil {
		e.closed = true
		return fmt.Errorf("%w: %w", ErrStreamClosed, context.Cause(e.ctx))
	}
	if err := e.send(ev); err != nil {
		// A failed Send means the stream is broken for good.
		e.closed = true
		return fmt.Errorf("%w: %w", ErrStreamClosed, err)
	}
	return nil
}

// Text sends a piece of assistant text.
func (e *Emitter) Text(delta string) error {
	return e.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_TextDelta{TextDelta: &runnerv1.TextDelta{Text: delta}}})
}

// MessageDone ends the current assistant message. A non-empty text is the message's
// authoritative full text.
func (e *Emitter) MessageDone(text string) error {
	return e.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_MessageDone{MessageDone: &runnerv1.MessageDone{Text: text}}})
}

// Reasoning sends a piece of reasoning text.
func (e *Emitter) Reasoning(delta string) error {
	return e.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_ReasoningDelta{ReasoningDelta: &runnerv1.ReasoningDelta{Text: delta}}})
}

// ToolCallDelta streams a piece of a tool call's arguments. The first delta of a call
// should carry its name. It is optional: ToolCall alone is a complete call.
func (e *Emitter) ToolCallDelta(callID, name, argsDelta string) error {
	if callID == "" {
		return errors.New("pluginsdk: ToolCallDelta: empty call id")
	}
	return e.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_ToolCallDelta{ToolCallDelta: &runnerv1.ToolCallDelta{
		CallId: callID, Name: name, ArgumentsDelta: argsDelta,
	}}})
}

// ToolCall sends a complete tool call. argsJSON must be a JSON document, or "" to let the
// host use the arguments streamed by ToolCallDelta for this call ("{}" if there were none).
func (e *Emitter) ToolCall(callID, name, argsJSON string) error {
	if callID == "" || name == "" {
		return errors.New("pluginsdk: ToolCall: call id and name are required")
	}
	args, err := jsonText("ToolCall", argsJSON)
	if err != nil {
		return err
	}
	return e.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_ToolCall{ToolCall: &runnerv1.ToolCall{
		CallId: callID, Name: name, Arguments: args,
	}}})
}

// ToolResult sends a tool's output (JSON or plain text).
func (e *Emitter) ToolResult(callID, name, output string, isError bool) error {
	if callID == "" {
		return errors.New("pluginsdk: ToolResult: empty call id")
	}
	return e.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_ToolResult{ToolResult: &runnerv1.ToolResult{
		CallId: callID, Name: name, Output: output, IsError: isError,
	}}})
}

// ApprovalRequest asks for a human decision; see the ApprovalRequest type.
func (e *Emitter) ApprovalRequest(req ApprovalRequest) error {
	if req.ID == "" || req.Name == "" {
		return errors.New("pluginsdk: ApprovalRequest: id and name are required")
	}
	args, err := jsonText("ApprovalRequest", req.Arguments)
	if err != nil {
		return err
	}
	if len(req.Detail) > 0 && !json.Valid(req.Detail) {
		return errors.New("pluginsdk: ApprovalRequest: detail is not valid JSON")
	}
	return e.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_ApprovalRequest{ApprovalRequest: &runnerv1.ApprovalRequest{
		Id: req.ID, CallId: req.CallID, Name: req.Name, Arguments: args, Message: req.Message, DetailJson: req.Detail,
	}}})
}

// StateDelta changes session state. Keys prefixed "app:" and "user:" go to those tiers,
// "temp:" keys are not persisted; a nil value deletes the key.
func (e *Emitter) StateDelta(delta map[string]any) error {
	if len(delta) == 0 {
		return nil
	}
	b, err := json.Marshal(delta)
	if err != nil {
		return fmt.Errorf("pluginsdk: StateDelta: encode: %w", err)
	}
	return e.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_StateDelta{StateDelta: &runnerv1.StateDelta{DeltaJson: b}}})
}

// Usage reports token usage; the host sums the usage events of a run.
func (e *Emitter) Usage(u Usage) error { return e.UsageOf("", u) }

// UsageOf reports the token usage of one call of model (metrics count tokens by model).
func (e *Emitter) UsageOf(model string, u Usage) error {
	return e.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_Usage{Usage: &runnerv1.Usage{
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		ReasoningTokens: u.ReasoningTokens, CachedTokens: u.CachedTokens, Model: model,
	}}})
}

// Native relays a framework-native event for debugging; the host never stores it. data is
// encoded as JSON (a json.RawMessage is sent as is).
func (e *Emitter) Native(kind string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("pluginsdk: Native: encode: %w", err)
	}
	return e.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_Native{Native: &runnerv1.Native{
		Framework: e.framework, Kind: kind, DataJson: b,
	}}})
}

// Checkpoint asks the host to keep a saved thread state of the agent (opaque Data); the
// next turns' Request.Checkpoints carry the latest one of each thread and namespace.
func (e *Emitter) Checkpoint(c Checkpoint) error {
	if c.ThreadID == "" || c.ID == "" {
		return errors.New("pluginsdk: Checkpoint: thread id and id are required")
	}
	return e.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_Checkpoint{Checkpoint: &runnerv1.Checkpoint{
		ThreadId: c.ThreadID, Namespace: c.Namespace, CheckpointId: c.ID, ParentId: c.ParentID, Data: c.Data,
	}}})
}

// CheckpointWrite asks the host to keep a pending write to a checkpoint sent earlier.
func (e *Emitter) CheckpointWrite(w CheckpointWrite) error {
	if w.ThreadID == "" || w.CheckpointID == "" || w.TaskID == "" {
		return errors.New("pluginsdk: CheckpointWrite: thread, checkpoint and task ids are required")
	}
	return e.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_CheckpointWrite{CheckpointWrite: &runnerv1.CheckpointWrite{
		ThreadId: w.ThreadID, Namespace: w.Namespace, CheckpointId: w.CheckpointID, TaskId: w.TaskID,
		Index: w.Index, Channel: w.Channel, TaskPath: w.TaskPath, Data: w.Data,
	}}})
}

// DeleteCheckpoints tells the host the runner is done with a thread: its checkpoints are
// dropped when the run ends (unless the run saves the thread again after this).
func (e *Emitter) DeleteCheckpoints(threadID string) error {
	if threadID == "" {
		return errors.New("pluginsdk: DeleteCheckpoints: thread id is required")
	}
	return e.Send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_CheckpointDelete{CheckpointDelete: &runnerv1.CheckpointDelete{ThreadId: threadID}}})
}

// jsonText validates a JSON document given as text; "" passes (the host fills it in).
func jsonText(what, s string) (string, error) {
	if s == "" {
		return "", nil
	}
	if !json.Valid([]byte(s)) {
		return "", fmt.Errorf("pluginsdk: %s: arguments are not valid JSON", what)
	}
	return s, nil
}
