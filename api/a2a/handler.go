package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentengine/agentengine/api/internal/caller"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// handler is one agent's a2asrv.RequestHandler over the runtime.
type handler struct {
	s     *Surface
	agent string
}

// task is a task's runs as the caller may see them: its first run and each resume of it.
type task struct {
	id   a2a.TaskID
	key  session.Key
	runs []*host.Run
}

func (t *task) latest() *host.Run { return t.runs[len(t.runs)-1] }

// user is the caller's user: a bound caller's own, else the runtime's default user.
func (h *handler) user(ctx context.Context) string {
	return caller.From(ctx).Resolve(h.s.rt.DefaultUser())
}

// loadTask finds a task of the caller among this agent's runs: the run whose response id
// is the task id, and the resumes that followed it (invocation ids "<id>.1", "<id>.2", …).
// Anything else, another user's task included, is ErrTaskNotFound.
func (h *handler) loadTask(ctx context.Context, id a2a.TaskID) (*task, error) {
	if id == "" {
		return nil, fmt.Errorf("the task id is required: %w", a2a.ErrInvalidParams)
	}
	notFound := fmt.Errorf("task %s not found: %w", quote(string(id)), a2a.ErrTaskNotFound)
	if host.ValidateID(string(id)) != nil {
		return nil, notFound
	}
	rec, err := h.s.rt.RunByResponseID(ctx, h.user(ctx), string(id))
	if errors.Is(err, host.ErrNotFound) || (err == nil && rec.Key.App != h.agent) {
		return nil, notFound
	}
	if err != nil {
		return nil, h.internal("find task", err)
	}
	t := &task{id: id, key: rec.Key}
	for i := 0; ; i++ {
		inv := rec.InvocationID
		if i > 0 {
			inv += "." + strconv.Itoa(i)
		}
		r, err := h.s.rt.Open(ctx, rec.Key, inv)
		if errors.Is(err, host.ErrNotFound) {
			break
		}
		if err != nil {
			return nil, h.internal("open run", err)
		}
		t.runs = append(t.runs, r)
	}
	if len(t.runs) == 0 {
		return nil, notFound
	}
	return t, nil
}

// internal logs err and returns the client-safe internal error.
func (h *handler) internal(op string, err error) error {
	h.s.log.Error("a2a: "+op, "agent", h.agent, "error", err)
	return a2a.ErrInternalError
}

// hostError maps a runtime error to the protocol's: client errors keep their message.
func (h *handler) hostError(op string, err error) error {
	msg := host.ClientMessage(err)
	switch {
	case errors.Is(err, host.ErrInvalidInput), errors.Is(err, host.ErrNoPendingApproval),
		errors.Is(err, host.ErrUnknownAgent), errors.Is(err, host.ErrNotFound), errors.Is(err, host.ErrRunActive):
		return fmt.Errorf("%s: %w", msg, a2a.ErrInvalidParams)
	case errors.Is(err, host.ErrTooManyRuns), errors.Is(err, host.ErrUnavailable):
		return fmt.Errorf("%s: %w", msg, a2a.ErrServerError)
	}
	return h.internal(op, err)
}

// OnGetTask serves tasks/get.
func (h *handler) OnGetTask(ctx context.Context, q *a2a.TaskQueryParams) (*a2a.Task, error) {
	t, err := h.loadTask(ctx, q.ID)
	if err != nil {
		return nil, err
	}
	return t.snapshot(len(t.runs), q.HistoryLength), nil
}

// OnCancelTask serves tasks/cancel: the task's run in progress is cancelled and the
// task returned once it has ended (canceled), or as it is when that takes too long.
func (h *handler) OnCancelTask(ctx context.Context, p *a2a.TaskIDParams) (*a2a.Task, error) {
	t, err := h.loadTask(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	r := t.latest()
	if r.Status() != session.StatusInProgress {
		return nil, fmt.Errorf("task %s is %s: %w", quote(string(t.id)), t.state(), a2a.ErrTaskNotCancelable)
	}
	if err := h.s.rt.Cancel(ctx, t.key, r.InvocationID); err != nil {
		if errors.Is(err, host.ErrRunNotActive) {
			return nil, fmt.Errorf("task %s is no longer running: %w", quote(string(t.id)), a2a.ErrTaskNotCancelable)
		}
		return nil, h.hostError("cancel run", err)
	}
	wctx, cancel := context.WithTimeout(ctx, h.s.cancelWait)
	defer cancel()
	select {
	case <-r.Done():
	case <-wctx.Done():
	}
	if t, err = h.loadTask(ctx, p.ID); err != nil {
		return nil, err
	}
	return t.snapshot(len(t.runs), nil), nil
}

// OnSendMessage serves message/send: the task when its run has ended (or paused for
// input), at once when the client asked for a non-blocking send.
func (h *handler) OnSendMessage(ctx context.Context, p *a2a.MessageSendParams) (a2a.SendMessageResult, error) {
	t, run, err := h.start(ctx, p)
	if err != nil {
		return nil, err
	}
	var hl *int
	if p.Config != nil {
		hl = p.Config.HistoryLength
		if p.Config.Blocking != nil && !*p.Config.Blocking {
			return t.snapshot(len(t.runs), hl), nil
		}
	}
	select {
	case <-run.Done():
	case <-ctx.Done():
		return nil, ctx.Err() // the client went away; the run goes on
	}
	return t.snapshot(len(t.runs), hl), nil
}

// OnSendMessageStream serves message/stream: the task (submitted), then its run's
// events as they happen, ending with the final status update.
func (h *handler) OnSendMessageStream(ctx context.Context, p *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		t, run, err := h.start(ctx, p)
		if err != nil {
			yield(nil, err)
			return
		}
		first := t.snapshot(len(t.runs)-1, nil)
		first.History = append(first.History, t.openingMessages(run)...)
		first.Status = a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: timePtr(run.CreatedAt)}
		if !yield(first, nil) {
			return
		}
		h.follow(ctx, t, run, yield)
	}
}

// OnResubscribeToTask serves tasks/resubscribe: the task as it was when its latest run
// started, then that run's events from its start (what a dropped stream missed) and on,
// live, to its end.
func (h *handler) OnResubscribeToTask(ctx context.Context, p *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		t, err := h.loadTask(ctx, p.ID)
		if err != nil {
			yield(nil, err)
			return
		}
		run := t.latest()
		first := t.snapshot(len(t.runs)-1, nil)
		first.History = append(first.History, t.openingMessages(run)...)
		first.Status = a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: timePtr(run.CreatedAt)}
		if !yield(first, nil) {
			return
		}
		h.follow(ctx, t, run, yield)
	}
}

// follow sends a run's events from its start: a working status update, the encoded
// events, and the final status (which the encoder sends on the terminal run_status).
func (h *handler) follow(ctx context.Context, t *task, run *host.Run, yield func(a2a.Event, error) bool) {
	enc := newEncoder(t)
	if !yield(enc.status(a2a.TaskStateWorking, nil, run.CreatedAt, false), nil) {
		return
	}
	sub := run.Subscribe(0)
	for {
		ev, err := sub.Next(ctx)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			return // the client went away
		}
		for _, out := range enc.add(ev) {
			if !yield(out, nil) {
				return
			}
		}
	}
}

// start validates a message and starts its run: a new task, or the next run of the task
// it names (an answer to that task's approval requests).
func (h *handler) start(ctx context.Context, p *a2a.MessageSendParams) (*task, *host.Run, error) {
	if p == nil || p.Message == nil {
		return nil, nil, fmt.Errorf("params.message is required: %w", a2a.ErrInvalidParams)
	}
	m := p.Message
	if m.Role != "" && m.Role != a2a.MessageRoleUser {
		return nil, nil, fmt.Errorf("message.role must be \"user\", not %s: %w", quote(string(m.Role)), a2a.ErrInvalidParams)
	}
	if len(m.Parts) == 0 {
		return nil, nil, fmt.Errorf("message.parts is empty: %w", a2a.ErrInvalidParams)
	}
	if m.ContextID != "" && host.ValidateID(m.ContextID) != nil {
		return nil, nil, fmt.Errorf("message.contextId is not a valid id: %w", a2a.ErrInvalidParams)
	}
	if p.Config != nil && p.Config.PushConfig != nil {
		if err := h.s.push.validate(p.Config.PushConfig); err != nil {
			return nil, nil, err
		}
	}
	opts, err := modelOptions(p)
	if err != nil {
		return nil, nil, err
	}
	if m.TaskID != "" {
		t, run, err := h.resume(ctx, m, opts)
		if err == nil {
			if p.Config != nil && p.Config.PushConfig != nil {
				if _, err := h.s.push.set(pushKeyOf(t), *p.Config.PushConfig, isV1Call(ctx)); err != nil {
					h.s.log.Warn("a2a: push config of a resumed task", "task", t.id, "error", err)
				}
			}
			h.s.push.follow(t, run)
		}
		return t, run, err
	}
	content, err := contentBlocks(m.Parts)
	if err != nil {
		return nil, nil, err
	}
	id := host.NewID("task_")
	turn := host.TurnRequest{App: h.agent, User: h.user(ctx), SessionID: m.ContextID, CreateIfMissing: m.ContextID != "",
		InvocationID: id, ResponseID: id, Input: host.Input{Content: content}, ModelOptions: opts,
		Meta: session.MustJSON(map[string]any{"surface": "a2a", "task": id, "message_id": m.ID})}
	run, err := h.s.rt.Start(ctx, turn)
	if err != nil {
		return nil, nil, h.hostError("start run", err)
	}
	t := &task{id: a2a.TaskID(id), key: run.Key, runs: []*host.Run{run}}
	if p.Config != nil && p.Config.PushConfig != nil {
		if _, err := h.s.push.set(pushKeyOf(t), *p.Config.PushConfig, isV1Call(ctx)); err != nil {
			h.s.log.Warn("a2a: push config of a started task", "task", id, "error", err)
		}
		h.s.push.follow(t, run)
	}
	return t, run, nil
}

// resume answers the approval requests a task waits on, in a new run of the task.
func (h *handler) resume(ctx context.Context, m *a2a.Message, opts json.RawMessage) (*task, *host.Run, error) {
	t, err := h.loadTask(ctx, m.TaskID)
	if err != nil {
		return nil, nil, err
	}
	if m.ContextID != "" && m.ContextID != t.key.ID {
		return nil, nil, fmt.Errorf("task %s belongs to context %s, not %s: %w", quote(string(t.id)), quote(t.key.ID), quote(m.ContextID), a2a.ErrInvalidParams)
	}
	switch st := t.state(); st {
	case a2a.TaskStateInputRequired:
	case a2a.TaskStateWorking:
		return nil, nil, fmt.Errorf("task %s is still working; wait for it to end or cancel it: %w", quote(string(t.id)), a2a.ErrInvalidParams)
	default:
		return nil, nil, fmt.Errorf("task %s is %s and takes no more messages; send a new message without taskId to continue the context: %w", quote(string(t.id)), st, a2a.ErrInvalidParams)
	}
	v, isVerdict := verdictOf(m.Parts)
	value, isValue := resumeValue(m.Parts)
	if !isVerdict && !isValue {
		return nil, nil, fmt.Errorf(`task %s waits for approval: answer with a data part {"approve": true} or {"approve": false, "reason": "..."} (or any other data part as the tool's output or the interrupt's value), or the text "approve" or "reject: <reason>": %w`, quote(string(t.id)), a2a.ErrInvalidParams)
	}
	// The runtime resumes the context's latest run: it must be this task's, not a later
	// task's of the same context that waits for approval too.
	sess, err := h.s.rt.Session(ctx, t.key)
	if err != nil {
		return nil, nil, h.hostError("load session", err)
	}
	if sess.ActiveInvocationID != t.latest().InvocationID {
		return nil, nil, fmt.Errorf("task %s can no longer be answered: a later message of its context superseded it; send a new message: %w", quote(string(t.id)), a2a.ErrInvalidParams)
	}
	pending, err := h.s.rt.PendingApprovals(ctx, t.key)
	if err != nil {
		return nil, nil, h.hostError("pending approvals", err)
	}
	if len(pending) == 0 {
		return nil, nil, fmt.Errorf("task %s has no pending approval: %w", quote(string(t.id)), a2a.ErrInvalidParams)
	}
	var in host.Input
	if isVerdict {
		for _, pa := range pending {
			in.Resumes = append(in.Resumes, host.Resume{ApprovalRequestID: pa.ID, Approve: v.approve, Reason: v.reason,
				Raw: session.MustJSON(struct {
					Type              string `json:"type"`
					ApprovalRequestID string `json:"approval_request_id"`
					Approve           bool   `json:"approve"`
					Reason            string `json:"reason,omitempty"`
				}{"mcp_approval_response", pa.ID, v.approve, v.reason})})
		}
	} else {
		// Any other data answers as a function_call_output would: the guarded tool's
		// output, or the value a framework interrupt resumes with.
		outs := make([]host.ToolOutput, 0, len(pending))
		for _, pa := range pending {
			id := pa.CallID
			if id == "" {
				id = pa.ID
			}
			outs = append(outs, host.ToolOutput{ID: id, Output: value, Approve: true,
				Raw: session.MustJSON(struct {
					Type   string `json:"type"`
					CallID string `json:"call_id"`
					Output string `json:"output"`
				}{"function_call_output", id, value})})
		}
		sorted, err := h.s.rt.SortToolOutputs(ctx, t.key, outs)
		if err != nil {
			return nil, nil, h.hostError("sort tool outputs", err)
		}
		in.Resumes = sorted.Resumes
	}
	inv := t.runs[0].InvocationID + "." + strconv.Itoa(len(t.runs))
	turn := host.TurnRequest{App: h.agent, User: t.key.User, SessionID: t.key.ID, InvocationID: inv, Input: in, ModelOptions: opts,
		Meta: session.MustJSON(map[string]any{"surface": "a2a", "task": t.id, "message_id": m.ID})}
	run, err := h.s.rt.Start(ctx, turn)
	if err != nil {
		return nil, nil, h.hostError("start run", err)
	}
	t.runs = append(t.runs, run)
	return t, run, nil
}

// modelOptions reads metadata.agentengine.model_options, passed to the runner as the
// turn's model options (as on the OpenAI surface).
func modelOptions(p *a2a.MessageSendParams) (json.RawMessage, error) {
	for _, md := range []map[string]any{p.Metadata, p.Message.Metadata} {
		ae, ok := md["agentengine"].(map[string]any)
		if !ok {
			continue
		}
		mo, ok := ae["model_options"]
		if !ok {
			continue
		}
		if _, isObj := mo.(map[string]any); !isObj {
			return nil, fmt.Errorf("metadata.agentengine.model_options must be an object: %w", a2a.ErrInvalidParams)
		}
		b, err := json.Marshal(mo)
		if err != nil {
			return nil, fmt.Errorf("metadata.agentengine.model_options: %w", a2a.ErrInvalidParams)
		}
		return b, nil
	}
	return nil, nil
}

// OnGetExtendedAgentCard: the public card is the whole card.
func (h *handler) OnGetExtendedAgentCard(context.Context) (*a2a.AgentCard, error) {
	return nil, a2a.ErrAuthenticatedExtendedCardNotConfigured
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}
