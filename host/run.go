package host

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/hashicorp/go-hclog"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentengine/agentengine/host/workspace"
	"github.com/agentengine/agentengine/internal/metrics"
	"github.com/agentengine/agentengine/internal/textbuf"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
)

// Run is one turn: its identity and its journal of events.
type Run struct {
	Key          session.Key
	InvocationID string
	ResponseID   string
	Agent        string
	CreatedAt    time.Time
	Meta         json.RawMessage

	j      *journal
	done   chan struct{}
	cancel context.CancelCauseFunc
	// hist is the session's history size once the run has ended, as the history cache
	// knew it (zero when it did not); set before done is closed.
	hist histSize

	mu     sync.Mutex
	status string
	// timers keep a finished run in memory (its retention and its journal's compaction);
	// set before done is closed, stopped by release.
	timers []*time.Timer
	// rt is the runtime that runs it (nil for a run read back from the store).
	rt *Runtime
	// pending is the run's start while it is not recorded yet (see pendingStart); only
	// the run's goroutine uses it, under its turnState's lock.
	pending *pendingStart
	// private is set when nobody but the client that started the run can know of it
	// before it ends: its start was pending (so far or still).
	private bool
	// transcript: the turn's input carried earlier conversation items (a stateless
	// client's transcript), each a history message of its own.
	transcript bool
	// surface is TurnRequest.Surface.
	surface string
}

// Subscribe returns a cursor over the run's events, starting at journal index from.
func (r *Run) Subscribe(from int) *Subscription {
	if from < 0 {
		from = 0
	}
	r.j.watch()
	return &Subscription{j: r.j, next: from}
}

// Done is closed when the run has ended and its terminal event is journaled.
func (r *Run) Done() <-chan struct{} { return r.done }

// Status is the run's current status.
func (r *Run) Status() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// Wait blocks until the run ends and returns all its events. A run nobody has subscribed
// to leaves the runtime's memory then: later requests for it read the store.
func (r *Run) Wait(ctx context.Context) ([]Event, error) {
	select {
	case <-r.done:
		evs := r.j.snapshot()
		if r.rt != nil {
			r.rt.release(r) // read whole: unless someone streams it, it may go
		}
		return evs, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// turnState aggregates a runner's stream into durable events. mu serialises the run's
// goroutine with flushOnWatch, which stores the deferred items when a follower joins.
type turnState struct {
	rt  *Runtime
	ctx context.Context
	r   *Run
	ag  Agent
	// span is the turn's invoke_agent span (a no-op one when untraced); log is the
	// runtime's logger with the span's ids.
	span trace.Span
	log  hclog.Logger
	// toolStarts are the times tool calls were reported, for their spans (traced only);
	// toolArgs their arguments, when the spans record content.
	toolStarts map[string]time.Time
	toolArgs   map[string]string

	mu    sync.Mutex
	ended bool // finish has run: nothing is deferred any more

	// meta is the data of the runner's latest event.meta native event: stored with the
	// transcript items that follow it (see NativeEventMeta).
	meta json.RawMessage

	msgID       string
	msgText     textbuf.Text
	msgSince    time.Time // the message's first delta or last stream snapshot
	snapshots   int       // stream snapshots of the message stored so far
	rsID        string
	rsText      textbuf.Text
	calls       map[string]*openCall
	callOrder   []string
	usage       session.Usage
	haveUsage   bool
	interrupted bool
	firstToken  bool // a text or reasoning delta was seen (time to first token)
	// toolNames are the names of the run's tool calls by call id, for the metrics of
	// results that leave the name out (kept only with metrics on).
	toolNames   map[string]string
	failure     *session.RunError
	storeErr    error
	checkpoints checkpointBuffer
	// deferred are coarse events held for a later write (at the latest the run's final
	// transaction) while nobody follows the run: one store write per turn instead of
	// one per item. held are their places in the journal, filled when they are stored.
	deferred []session.NewEvent
	held     []*session.Event
}

// checkpointBuffer collects a run's checkpoint events; they are saved with the run's
// terminal event. Of each thread and namespace only the latest checkpoint is kept.
type checkpointBuffer struct {
	latest map[[2]string]session.Checkpoint
	order  [][2]string
	writes map[writeKey]session.CheckpointWrite
	worder []writeKey
	// deleted threads the runner is done with (unless it saved them again afterwards).
	deleted []string
}

type writeKey struct {
	thread, ns, checkpoint, task string
	index                        int64
}

func (b *checkpointBuffer) checkpoint(c *runnerv1.Checkpoint) {
	if b.latest == nil {
		b.latest = map[[2]string]session.Checkpoint{}
	}
	k := [2]string{c.ThreadId, c.Namespace}
	b.deleted = slices.DeleteFunc(b.deleted, func(t string) bool { return t == c.ThreadId })
	if _, ok := b.latest[k]; !ok {
		b.order = append(b.order, k)
	}
	b.latest[k] = session.Checkpoint{ThreadID: c.ThreadId, Namespace: c.Namespace, ID: c.CheckpointId, ParentID: c.ParentId, Data: c.Data}
}

func (b *checkpointBuffer) write(w *runnerv1.CheckpointWrite) {
	if b.writes == nil {
		b.writes = map[writeKey]session.CheckpointWrite{}
	}
	b.deleted = slices.DeleteFunc(b.deleted, func(t string) bool { return t == w.ThreadId })
	k := writeKey{w.ThreadId, w.Namespace, w.CheckpointId, w.TaskId, w.Index}
	if _, ok := b.writes[k]; !ok {
		b.worder = append(b.worder, k)
	}
	b.writes[k] = session.CheckpointWrite{ThreadID: w.ThreadId, Namespace: w.Namespace, CheckpointID: w.CheckpointId,
		TaskID: w.TaskId, Index: w.Index, Channel: w.Channel, TaskPath: w.TaskPath, Data: w.Data}
}

// drop forgets what the run saved of a thread the runner is done with, and deletes it.
func (b *checkpointBuffer) drop(thread string) {
	b.order = slices.DeleteFunc(b.order, func(k [2]string) bool {
		if k[0] == thread {
			delete(b.latest, k)
			return true
		}
		return false
	})
	b.worder = slices.DeleteFunc(b.worder, func(k writeKey) bool {
		if k.thread == thread {
			delete(b.writes, k)
			return true
		}
		return false
	})
	if !slices.Contains(b.deleted, thread) {
		b.deleted = append(b.deleted, thread)
	}
}

// save is what to store, or nil: writes to checkpoints this run replaced are left out.
func (b *checkpointBuffer) save() *session.CheckpointSave {
	if len(b.order) == 0 && len(b.worder) == 0 && len(b.deleted) == 0 {
		return nil
	}
	s := &session.CheckpointSave{DeletedThreads: b.deleted}
	for _, k := range b.order {
		s.Checkpoints = append(s.Checkpoints, b.latest[k])
	}
	for _, k := range b.worder {
		if c, ok := b.latest[[2]string{k.thread, k.ns}]; ok && c.ID != k.checkpoint {
			continue
		}
		s.Writes = append(s.Writes, b.writes[k])
	}
	return s
}

type openCall struct {
	itemID, name string
	args         []byte
}

func (rt *Runtime) execute(ctx context.Context, ag Agent, r *Run, rr *runnerv1.RunRequest) {
	ts := &turnState{rt: rt, ctx: ctx, r: r, ag: ag, calls: map[string]*openCall{}, span: trace.SpanFromContext(ctx), log: rt.log}
	if sc := ts.span.SpanContext(); sc.IsValid() {
		// Every line logged during the turn joins its trace.
		ts.log = rt.log.With("trace_id", sc.TraceID().String(), "span_id", sc.SpanID().String())
	}
	r.j.setOnWatch(ts.flushOnWatch)
	streamErr := ts.consume(ctx, ag, rr)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.flushAll()

	status, runErr := session.StatusCompleted, ts.failure
	switch {
	case ts.storeErr != nil:
		status = session.StatusFailed
		runErr = &session.RunError{Code: "server_error", Message: "the session store failed while recording the run"}
		ts.log.Error("store failed during run", "invocation", r.InvocationID, "error", ts.storeErr)
	case errors.Is(context.Cause(ctx), errCancelled):
		status = session.StatusCancelled
	case errors.Is(context.Cause(ctx), errShutdown):
		status = session.StatusInterrupted
		runErr = &session.RunError{Code: "host_shutdown", Message: "the host shut down during the run"}
	case errors.Is(context.Cause(ctx), errRunTimeout):
		status = session.StatusFailed
		runErr = &session.RunError{Code: "run_timeout", Message: fmt.Sprintf(
			"the run took longer than the agent's run_timeout (%s, set in agentengine.yaml) and was stopped", ag.RunTimeout)}
	case streamErr != nil:
		status = session.StatusFailed
		runErr = &session.RunError{Code: "runner_error", Message: runnerFailureMessage(streamErr)}
		ts.log.Error("runner stream failed", "agent", ag.Name, "invocation", r.InvocationID, "error", streamErr)
	case ts.failure != nil:
		status = session.StatusFailed
	case ts.interrupted:
		status = session.StatusInterrupted
	}
	data := session.RunStatusData{Status: status, Error: runErr}
	if ts.haveUsage {
		u := ts.usage
		data.Usage = &u
	}
	ts.finish(status, data)
}

// runnerFailureMessage is the client-safe text for a broken runner stream.
func runnerFailureMessage(err error) string {
	// Runner clients mark a process that stopped responding (runnerproc's
	// ErrUnresponsive) by this method, so the host names no runner package.
	var u interface{ Unresponsive() bool }
	if errors.As(err, &u) && u.Unresponsive() {
		return "the agent's runner stopped responding (no events and no health answer in time); the run was failed and the runner is being replaced"
	}
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unavailable {
		return "the agent's runner process exited or disconnected during the run"
	}
	return "the agent's runner failed during the run"
}

func (ts *turnState) consume(ctx context.Context, ag Agent, rr *runnerv1.RunRequest) (err error) {
	ctx, span := ts.rt.runnerSpan(ctx, ag.Name, rr)
	defer func() {
		if err != nil {
			span.SetStatus(otelcodes.Error, err.Error())
		}
		span.End()
	}()
	stream, err := ag.Runner.Run(ctx, rr)
	if err != nil {
		return fmt.Errorf("start run on runner: %w", err)
	}
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil // cancelled or shutting down: the cause decides the status
			}
			return err
		}
		ts.mu.Lock()
		for _, e := range ev.Events() {
			if e.GetBatch() != nil {
				continue // batches do not nest
			}
			if ts.storeErr == nil && ts.failure == nil { // else drain: the outcome is decided
				ts.handle(e)
			}
		}
		ts.mu.Unlock()
	}
}

// flushOnWatch stores the deferred items now that someone follows the run, instead of
// with the runner's next event, which may be long in coming.
func (ts *turnState) flushOnWatch() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !ts.ended && len(ts.deferred) > 0 && ts.storeErr == nil {
		ts.write()
	}
}

func (ts *turnState) handle(ev *runnerv1.RunEvent) {
	switch e := ev.Event.(type) {
	case *runnerv1.RunEvent_TextDelta:
		ts.sawToken()
		ts.flushReasoning()
		if ts.msgID == "" {
			ts.msgID = newID("msg_")
		}
		ts.msgText.Add(e.TextDelta.Text)
		ts.r.j.add(Event{Kind: KindTextDelta, ItemID: ts.msgID, Text: e.TextDelta.Text})
		ts.snapshotText(time.Now())
	case *runnerv1.RunEvent_MessageDone:
		ts.flushReasoning()
		if e.MessageDone.Text != "" {
			if ts.msgID == "" {
				ts.msgID = newID("msg_")
			}
			ts.msgText.Set(e.MessageDone.Text)
		}
		ts.flushMessage()
	case *runnerv1.RunEvent_ReasoningDelta:
		ts.sawToken()
		ts.flushMessage()
		if ts.rsID == "" {
			ts.rsID = newID("rs_")
		}
		ts.rsText.Add(e.ReasoningDelta.Text)
		ts.r.j.add(Event{Kind: KindReasoningDelta, ItemID: ts.rsID, Text: e.ReasoningDelta.Text})
	case *runnerv1.RunEvent_ToolCallDelta:
		ts.flushMessage()
		ts.flushReasoning()
		c := ts.call(e.ToolCallDelta.CallId, e.ToolCallDelta.Name)
		c.args = append(c.args, e.ToolCallDelta.ArgumentsDelta...)
		ts.r.j.add(Event{Kind: KindToolArgsDelta, ItemID: c.itemID, CallID: e.ToolCallDelta.CallId, Name: c.name, Text: e.ToolCallDelta.ArgumentsDelta})
	case *runnerv1.RunEvent_ToolCall:
		ts.flushMessage()
		ts.flushReasoning()
		c := ts.call(e.ToolCall.CallId, e.ToolCall.Name)
		if e.ToolCall.Arguments != "" {
			c.args = []byte(e.ToolCall.Arguments)
		}
		ts.flushCall(e.ToolCall.CallId)
	case *runnerv1.RunEvent_ToolResult:
		ts.flushAll()
		t := e.ToolResult
		ts.toolResult(t)
		if at, ok := ts.toolStarts[t.CallId]; ok {
			delete(ts.toolStarts, t.CallId)
			name := t.Name
			if name == "" {
				name = ts.toolNames[t.CallId]
			}
			ts.toolSpan(t.CallId, name, at, time.Now(), t.IsError, t.Output)
		}
		ts.store(session.NewEvent{Type: session.TypeToolResult, Data: session.MustJSON(session.ToolResultData{CallID: t.CallId, Name: t.Name, Output: t.Output, IsError: t.IsError})})
	case *runnerv1.RunEvent_ApprovalRequest:
		ts.flushAll()
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
		ts.store(session.NewEvent{Type: session.TypeApprovalRequest, ItemID: id, Data: session.MustJSON(d)})
		ts.rt.metrics.ToolCall(ts.r.Agent, a.Name, metrics.ToolApprovalRequired)
		ts.approvalEvent(id, a.Name, a.CallId)
		ts.interrupted = true
	case *runnerv1.RunEvent_StateDelta:
		ts.flushAll()
		if !json.Valid(e.StateDelta.DeltaJson) {
			ts.failure = &session.RunError{Code: "runner_error", Message: "the runner sent a state delta that is not valid JSON"}
			return
		}
		ne := session.NewEvent{Type: session.TypeStateDelta, Data: e.StateDelta.DeltaJson, StateDelta: e.StateDelta.DeltaJson}
		unlock := ts.rt.stateLocks.lock(ts.r.Key.App)
		if err := ts.rt.checkStateBudget(context.WithoutCancel(ts.ctx), ts.r.Key, ts.r.pending != nil, []session.NewEvent{ne}); err != nil {
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
		ts.store(ne)
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
		ts.flushAll()
		code := e.Error.Code
		if code == "" {
			code = "agent_error"
		}
		ts.failure = &session.RunError{Code: code, Message: e.Error.Message}
		ts.log.Error("agent reported an error", "agent", ts.r.Agent, "invocation", ts.r.InvocationID, "message", e.Error.Message, "detail", e.Error.Detail)
	case *runnerv1.RunEvent_Native:
		switch e.Native.Kind {
		case NativeWorkspaceFile:
			ts.workspaceFile(e.Native.DataJson)
		case NativeEventMeta:
			ts.eventMeta(e.Native.DataJson)
		}
		ts.r.j.add(Event{Kind: KindNative, Name: e.Native.Kind, Text: string(e.Native.DataJson)})
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

// NativeWorkspaceFile is the native event kind of a file the agent wrote or deleted:
// {"path", "content", "encoding" ("utf-8" or "base64"), "deleted"}.
const NativeWorkspaceFile = "workspace.file"

// NativeEventMeta is the native event kind of a framework's own fields of the items that
// follow it (a JSON object, e.g. ADK's author, usageMetadata, finishReason): the host
// stores it with each of them, under the item data's "meta" key, until the next one. A
// surface that speaks the framework's wire format (ADK web) writes them back.
const NativeEventMeta = "event.meta"

// maxEventMeta bounds what a runner may attach to each item.
const maxEventMeta = 16 << 10

// carriesMeta reports the item types that carry the event meta; a state delta's data is
// the delta itself and cannot.
func carriesMeta(typ string) bool {
	switch typ {
	case session.TypeAssistantMessage, session.TypeReasoning, session.TypeToolCall, session.TypeToolResult, session.TypeApprovalRequest:
		return true
	}
	return false
}

// eventMeta keeps an event.meta for the items that follow; a bad one is dropped (and the
// items go without), as it is the framework's detail, not the transcript.
func (ts *turnState) eventMeta(data []byte) {
	data = bytes.TrimSpace(data)
	if len(data) > maxEventMeta || len(data) < 2 || data[0] != '{' || !json.Valid(data) {
		ts.rt.log.Warn("dropped an event.meta that is not a JSON object (or is too large)", "agent", ts.r.Agent, "invocation", ts.r.InvocationID, "bytes", len(data))
		ts.meta = nil
		return
	}
	ts.meta = append(json.RawMessage(nil), data...)
}

// withMeta adds "meta": meta to the JSON object data.
func withMeta(data, meta json.RawMessage) json.RawMessage {
	d := bytes.TrimSpace(data)
	if len(d) < 2 || d[0] != '{' || d[len(d)-1] != '}' {
		return data
	}
	out := make([]byte, 0, len(d)+len(meta)+10)
	out = append(out, d[:len(d)-1]...)
	if len(bytes.TrimSpace(d[1:len(d)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"meta":`...)
	out = append(out, meta...)
	return append(out, '}')
}

// workspaceFile applies a workspace.file event to the workspace of the run's user (the
// agent's shared one unless it is per user). A bad event is logged, not fatal: the file
// is the agent's side output, the run goes on.
func (ts *turnState) workspaceFile(data []byte) {
	if ts.ag.Workspace == nil {
		return
	}
	w, err := ts.ag.Workspace.For(ts.r.Key.User)
	if err != nil {
		ts.log.Warn("could not open the user's workspace", "agent", ts.r.Agent, "invocation", ts.r.InvocationID, "error", err)
		return
	}
	var f struct {
		Path     string  `json:"path"`
		Content  *string `json:"content"`
		Encoding string  `json:"encoding"`
		Deleted  bool    `json:"deleted"`
	}
	err = json.Unmarshal(data, &f)
	// Agents' virtual filesystems (DeepAgents) root their paths at "/": the workspace.
	f.Path = strings.TrimLeft(f.Path, "/")
	switch {
	case err != nil:
	case f.Deleted:
		err = w.Delete(f.Path)
		if errors.Is(err, workspace.ErrNotFound) {
			err = nil
		}
	default:
		var body []byte
		if f.Content != nil {
			body = []byte(*f.Content)
		}
		if f.Encoding == "base64" {
			body, err = base64.StdEncoding.DecodeString(string(body))
		}
		if err == nil {
			_, err = w.Write(context.WithoutCancel(ts.ctx), f.Path, bytes.NewReader(body))
		}
	}
	if err != nil {
		ts.log.Warn("could not apply the agent's workspace file", "agent", ts.r.Agent, "invocation", ts.r.InvocationID, "path", f.Path, "error", err)
	}
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

// store appends a durable event for the run and journals it with its seq. While nobody
// follows the run, an event that changes neither state nor checkpoints is deferred: it
// takes its place in the journal (hidden from readers until stored) and is written with
// the next write the run has to make, or by flushOnWatch when someone starts following.
func (ts *turnState) store(ne session.NewEvent) {
	if ts.storeErr != nil {
		return
	}
	ne.InvocationID = ts.r.InvocationID
	if ts.meta != nil && carriesMeta(ne.Type) {
		ne.Data = withMeta(ne.Data, ts.meta)
	}
	if ne.Author == "" {
		ne.Author = ts.r.Agent
	}
	if ne.StateDelta == nil && ne.Checkpoints == nil {
		p := &session.Event{}
		if ts.r.j.hold(Event{Kind: KindStored, Stored: p}) {
			ts.deferred = append(ts.deferred, ne)
			ts.held = append(ts.held, p)
			return
		}
	}
	ts.write(ne)
}

// write appends the deferred events and then extra in one store write, fills the
// deferred events' journal places and journals extra's.
func (ts *turnState) write(extra ...session.NewEvent) {
	// The store must record what happened even when the run is being cancelled.
	ctx := context.WithoutCancel(ts.ctx)
	if err := ts.recordStart(ctx); err != nil {
		ts.storeErr = err
		ts.releaseHeld(nil)
		return
	}
	began, end := time.Now(), ts.rt.storeSpan(ctx, "append")
	evs, err := ts.rt.store.Append(ctx, ts.r.Key, append(ts.deferred, extra...)...)
	ts.rt.metrics.StoreWrite(ts.rt.storeBackend, time.Since(began))
	end(err)
	if err != nil {
		ts.storeErr = err
		ts.releaseHeld(nil)
		return
	}
	evs = ts.releaseHeld(evs)
	for i := range evs {
		ts.r.j.add(Event{Kind: KindStored, Stored: &evs[i]})
	}
}

// releaseHeld fills the held journal places from the first stored events (or, when
// the store failed, with what the run produced, without seqs), shows them to readers
// and returns the rest of evs.
func (ts *turnState) releaseHeld(evs []session.Event) []session.Event {
	if len(ts.held) == 0 {
		return evs
	}
	held, deferred := ts.held, ts.deferred
	ts.held, ts.deferred = nil, nil
	ts.r.j.release(func() {
		for i, p := range held {
			if i < len(evs) {
				*p = evs[i]
				continue
			}
			d := deferred[i]
			*p = session.Event{SessionID: ts.r.Key.ID, InvocationID: d.InvocationID, ItemID: d.ItemID, Type: d.Type, Author: d.Author, Data: d.Data, Time: time.Now().UTC()}
		}
	})
	if len(evs) < len(held) {
		return nil
	}
	return evs[len(held):]
}

func (ts *turnState) flushMessage() {
	if ts.msgID == "" {
		return
	}
	ts.store(session.NewEvent{Type: session.TypeAssistantMessage, ItemID: ts.msgID, Data: session.MustJSON(session.AssistantMessageData{Text: ts.msgText.String()})})
	ts.msgText.Reset()
	ts.msgID, ts.msgSince, ts.snapshots = "", time.Time{}, 0
}

func (ts *turnState) flushReasoning() {
	if ts.rsID == "" {
		return
	}
	ts.store(session.NewEvent{Type: session.TypeReasoning, ItemID: ts.rsID, Data: session.MustJSON(session.ReasoningData{Text: ts.rsText.String()})})
	ts.rsText.Reset()
	ts.rsID = ""
}

func (ts *turnState) flushCall(callID string) {
	c, ok := ts.calls[callID]
	if !ok {
		return
	}
	args := string(c.args)
	if args == "" {
		args = "{}"
	}
	if ts.span.IsRecording() {
		if ts.toolStarts == nil {
			ts.toolStarts = map[string]time.Time{}
		}
		ts.toolStarts[callID] = time.Now()
		if ts.rt.traceContent {
			if ts.toolArgs == nil {
				ts.toolArgs = map[string]string{}
			}
			ts.toolArgs[callID] = args
		}
	}
	if ts.rt.metrics != nil || ts.span.IsRecording() {
		if ts.toolNames == nil {
			ts.toolNames = map[string]string{}
		}
		ts.toolNames[callID] = c.name
	}
	ts.store(session.NewEvent{Type: session.TypeToolCall, ItemID: c.itemID, Data: session.MustJSON(session.ToolCallData{CallID: callID, Name: c.name, Arguments: args})})
	delete(ts.calls, callID)
	for i, id := range ts.callOrder {
		if id == callID {
			ts.callOrder = append(ts.callOrder[:i], ts.callOrder[i+1:]...)
			break
		}
	}
}

func (ts *turnState) flushAll() {
	ts.flushReasoning()
	ts.flushMessage()
	for len(ts.callOrder) > 0 {
		ts.flushCall(ts.callOrder[0])
	}
}

// finish records the terminal status and closes the journal. A store failure here is
// logged and the terminal event is still journaled so no subscriber waits forever.
func (ts *turnState) finish(status string, data session.RunStatusData) {
	r := ts.r
	ts.ended = true
	// The run's checkpoints are saved in the transaction that ends it: an interrupted
	// run is resumable exactly when it is recorded as interrupted.
	ne := session.NewEvent{InvocationID: r.InvocationID, Type: session.TypeRunStatus, Author: r.Agent, Data: session.MustJSON(data),
		Checkpoints: ts.checkpoints.save()}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ts.ctx), 30*time.Second)
	defer cancel()
	start, closing := r.pending.whole(append(ts.deferred, ne))
	began, end := time.Now(), ts.rt.storeSpan(ctx, "finish_run")
	evs, err := ts.rt.recordEnd(ctx, r.Key, r.InvocationID, status, start, closing...)
	ts.rt.metrics.StoreWrite(ts.rt.storeBackend, time.Since(began))
	end(err)
	if start != nil && err == nil {
		evs = evs[len(r.pending.opening):] // journaled when the run started
		r.pending = nil
	}
	if err != nil {
		ts.log.Error("could not record run end", "invocation", r.InvocationID, "status", status, "error", err)
		evs = nil
		if start != nil {
			// Nothing of the run is stored: all of it is held, unless no retry can help.
			if !errors.Is(err, session.ErrInvalid) && !errors.Is(err, session.ErrExists) {
				ts.rt.holdEnd(r.Key, r.InvocationID, status, start, closing)
			}
		} else {
			held := []session.NewEvent{ne}
			if len(ts.deferred) > 0 {
				// What the run produced is still recorded when only its end cannot be.
				if evs, err = ts.rt.store.Append(ctx, r.Key, ts.deferred...); err != nil {
					ts.log.Error("could not record the run's items", "invocation", r.InvocationID, "error", err)
					held = append(append([]session.NewEvent(nil), ts.deferred...), ne)
				}
			}
			if !errors.Is(err, session.ErrNotFound) {
				// Never a session stuck in progress: the end counts from now and is
				// written when the store recovers.
				ts.rt.holdEnd(r.Key, r.InvocationID, status, nil, held)
			}
		}
		// The deferred items' places are filled first (with what the run produced, when
		// not stored): the unrecorded end comes after them.
		evs = append(ts.releaseHeld(evs), session.Event{SessionID: r.Key.ID, InvocationID: r.InvocationID, Type: ne.Type, Author: ne.Author, Data: ne.Data, Time: time.Now().UTC()})
	}
	evs = ts.releaseHeld(evs)
	ts.deferred = nil // recorded (or held by the runtime): the copies here are done with
	r.mu.Lock()
	r.status = status
	r.mu.Unlock()
	// The turn's span ends before its end is published: a client that reads the
	// session's traces as soon as its stream ends (ADK's dev UI does) finds the turn.
	endTurnSpan(ts.span, data)
	for i := range evs {
		r.j.add(Event{Kind: KindStored, Stored: &evs[i]})
	}
	// Before done: a client's next turn, sent as soon as this one ends, then finds the
	// history up to date and reads nothing of it.
	rt := ts.rt
	if stored := r.j.stored(); !rt.skipFirstTurnHistory(r, stored) {
		r.hist = rt.hist.extend(r.Key, stored)
	}
	r.j.close()
	rt.metrics.RunEnded(r.Agent, r.surface, status, time.Since(r.CreatedAt))
	// What outlives the run refers to rt and r only, not to ts: the turn's buffers (the
	// message text, deferred items, checkpoints) go with the run's end, not with its
	// retention. The timers refer to r weakly: a stopped timer can stay in the runtime's
	// timer heap until its time would have come, and with it what its function refers
	// to, a whole run let go minutes earlier. While the run is retained, rt.runs holds it.
	wr := weak.Make(r)
	retained := time.AfterFunc(rt.retention, func() {
		if r := wr.Value(); r != nil {
			rt.forget(r)
		}
	})
	timers := []*time.Timer{retained}
	if rt.compactAfter < rt.retention {
		timers = append(timers, time.AfterFunc(rt.compactAfter, func() {
			r := wr.Value()
			if r == nil {
				return // let go already
			}
			// Once nobody follows it, or everyone who did has read it to its end, no
			// client comes back with a cursor into its journal: Open serves it from
			// the store from then on, as it would after retention.
			rt.memoryFreed(r.j.compactThenSettle(func() {
				rt.forget(r)
				retained.Stop() // nothing left for it to do
				rt.memoryFreed(ForgottenRunWeight)
			}))
		}))
	}
	r.mu.Lock()
	r.timers = timers
	r.mu.Unlock()
	close(r.done)
}

// forget takes r out of the runs in memory: Open and the lookups read it from the store
// from then on.
func (rt *Runtime) forget(r *Run) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if k := (runKey{r.Key, r.InvocationID}); rt.runs[k] == r {
		delete(rt.runs, k)
	}
}

// release lets a finished run that Wait's caller has read whole leave memory now instead
// of at its compaction, unless someone has subscribed to it, here or from another
// replica (a non-stream request's run): no client has a cursor into its journal to come
// back with, and the store has everything a later request reads. Held until
// compaction, the runs of a busy host were most of its live heap, which every
// collection marks. The caller's r stays whole.
//
// With replicas, a follower elsewhere may have found the run in progress in the store
// and asked for its journal, and the request may still be on its way: such a run stays
// until its compaction, as any other, unless nobody could know of it (an unannounced
// run in a session the runtime named for it).
func (rt *Runtime) release(r *Run) {
	if !r.j.unwatched() || (rt.cluster != nil && !r.private) {
		return
	}
	r.mu.Lock()
	timers := r.timers // set before done, which Wait has seen closed
	r.timers = nil
	r.mu.Unlock()
	if timers == nil {
		return // released by an earlier Wait
	}
	for _, t := range timers {
		t.Stop()
	}
	rt.forget(r)
	rt.memoryFreed(ForgottenRunWeight)
}
