package a2a

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// answerArtifact names the artifacts that carry the agent's messages.
const answerArtifact = "answer"

// stored returns the stored events of a run's journal so far, in order.
func stored(r *host.Run) []*session.Event {
	var out []*session.Event
	for _, ev := range r.Subscribe(0).Ready() {
		if ev.Kind == host.KindStored && ev.Stored != nil {
			out = append(out, ev.Stored)
		}
	}
	return out
}

// snapshot is the task as its first n runs make it: their messages as history, their
// assistant messages as artifacts, the status of the n-th. historyLength, when set,
// keeps that many of the latest messages (0: none).
func (t *task) snapshot(n int, historyLength *int) *a2a.Task {
	out := &a2a.Task{ID: t.id, ContextID: t.key.ID, History: []*a2a.Message{}, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
	for i, r := range t.runs[:n] {
		evs := stored(r)
		for _, e := range evs {
			if m := t.message(e); m != nil {
				out.History = append(out.History, m)
			}
			if e.Type == session.TypeAssistantMessage {
				out.Artifacts = append(out.Artifacts, &a2a.Artifact{ID: a2a.ArtifactID(itemID(e)), Name: answerArtifact,
					Parts: a2a.ContentParts{a2a.TextPart{Text: textOf(e)}}})
			}
		}
		if i == n-1 {
			out.Status = t.statusOf(r.Status(), evs)
		}
	}
	if historyLength != nil {
		k := max(*historyLength, 0)
		if k < len(out.History) {
			out.History = out.History[len(out.History)-k:]
		}
	}
	out.Metadata = map[string]any{"agentengine": map[string]any{"agent": t.key.App, "runs": runIDs(t.runs[:n])}}
	return out
}

func runIDs(runs []*host.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.InvocationID
	}
	return out
}

// state is the task's state now.
func (t *task) state() a2a.TaskState {
	r := t.latest()
	return t.statusOf(r.Status(), stored(r)).State
}

// openingMessages are the messages a run starts with (the user's input or approval
// answers), for the task sent before its events.
func (t *task) openingMessages(r *host.Run) []*a2a.Message {
	var out []*a2a.Message
	for _, e := range stored(r) {
		if e.Type == session.TypeUserMessage || e.Type == session.TypeApprovalResponse {
			if m := t.message(e); m != nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// statusOf is the task status of a run with this status and these stored events: an
// interrupted run that asked for approval waits for input; one interrupted otherwise
// (the server stopped under it) failed.
func (t *task) statusOf(status string, evs []*session.Event) a2a.TaskStatus {
	var end *session.Event
	var approvals []*session.Event
	for _, e := range evs {
		switch {
		case e.Type == session.TypeApprovalRequest:
			approvals = append(approvals, e)
		case e.Type == session.TypeRunStatus && session.IsTerminalStatus(host.RunStatusOf(e)):
			end = e
		}
	}
	st := a2a.TaskStatus{State: a2a.TaskStateWorking}
	if end != nil {
		st.Timestamp = timePtr(end.Time)
	}
	switch status {
	case session.StatusCompleted:
		st.State = a2a.TaskStateCompleted
	case session.StatusCancelled:
		st.State = a2a.TaskStateCanceled
	case session.StatusFailed:
		st.State = a2a.TaskStateFailed
		st.Message = t.agentMessage(end, a2a.TextPart{Text: failure(end)})
	case session.StatusInterrupted:
		if len(approvals) == 0 {
			st.State = a2a.TaskStateFailed
			st.Message = t.agentMessage(end, a2a.TextPart{Text: "the run was interrupted before it ended"})
			break
		}
		st.State = a2a.TaskStateInputRequired
		parts := a2a.ContentParts{a2a.TextPart{Text: `Approval required. Answer on this task with a data part {"approve": true} or {"approve": false, "reason": "..."} (or the text "approve" / "reject: <reason>").`}}
		for _, a := range approvals {
			parts = append(parts, a2a.DataPart{Data: dataOf(a)})
		}
		st.Message = t.agentMessage(end, parts...)
	}
	return st
}

// failure is the client-safe error of a failed run's run_status.
func failure(end *session.Event) string {
	if end != nil {
		if d, err := session.DataOf[session.RunStatusData](*end); err == nil && d.Error != nil && d.Error.Message != "" {
			return d.Error.Message
		}
	}
	return "the run failed"
}

// agentMessage is a message of the agent in the task, with the id of the event it
// stands for.
func (t *task) agentMessage(e *session.Event, parts ...a2a.Part) *a2a.Message {
	m := &a2a.Message{Role: a2a.MessageRoleAgent, TaskID: t.id, ContextID: t.key.ID, Parts: parts}
	if e != nil {
		m.ID = itemID(e)
	} else {
		m.ID = a2a.NewMessageID()
	}
	return m
}

// message is the history message of a stored event, nil for events that are none.
func (t *task) message(e *session.Event) *a2a.Message {
	switch e.Type {
	case session.TypeUserMessage:
		d, err := session.DataOf[session.UserMessageData](*e)
		if err != nil {
			return nil
		}
		m := &a2a.Message{ID: itemID(e), Role: a2a.MessageRoleUser, TaskID: t.id, ContextID: t.key.ID}
		for _, b := range d.Blocks() {
			switch {
			case b.Type == "input_text":
				m.Parts = append(m.Parts, a2a.TextPart{Text: b.Text})
			case b.FileURL != "" && !strings.HasPrefix(b.FileURL, "data:"):
				m.Parts = append(m.Parts, a2a.FilePart{File: a2a.FileURI{URI: b.FileURL, FileMeta: a2a.FileMeta{Name: b.Filename}}})
			}
		}
		if len(m.Parts) == 0 {
			m.Parts = a2a.ContentParts{a2a.TextPart{Text: d.Text}}
		}
		return m
	case session.TypeApprovalResponse:
		m := &a2a.Message{ID: itemID(e), Role: a2a.MessageRoleUser, TaskID: t.id, ContextID: t.key.ID}
		m.Parts = a2a.ContentParts{a2a.DataPart{Data: dataOf(e)}}
		return m
	case session.TypeAssistantMessage:
		return t.agentMessage(e, a2a.TextPart{Text: textOf(e)})
	case session.TypeToolCall, session.TypeToolResult, session.TypeApprovalRequest:
		return t.agentMessage(e, a2a.DataPart{Data: dataOf(e)})
	}
	return nil
}

// dataOf is the data part of a tool call, tool result, approval request or answer: the
// stored data with "type" naming the kind (and the approval's id).
func dataOf(e *session.Event) map[string]any {
	m := map[string]any{}
	_ = json.Unmarshal(e.Data, &m)
	m["type"] = e.Type
	if e.Type == session.TypeApprovalRequest {
		m["approval_id"] = e.ItemID
	}
	// Arguments are stored as the model wrote them, a JSON text: sent as the value.
	if args, ok := m["arguments"].(string); ok {
		var v any
		if json.Unmarshal([]byte(args), &v) == nil {
			m["arguments"] = v
		}
	}
	return m
}

func textOf(e *session.Event) string {
	d, _ := session.DataOf[session.AssistantMessageData](*e)
	return d.Text
}

// itemID is the event's protocol id, or one made of its session and seq.
func itemID(e *session.Event) string {
	if e.ItemID != "" {
		return e.ItemID
	}
	return fmt.Sprintf("%s-%d", e.SessionID, e.Seq)
}

// encoder turns a run's journal into stream events: each text delta into an appended
// artifact chunk, each message's end into a last chunk that replaces the artifact with the
// whole message (append false), so that a client that missed chunks, or that keeps only
// the last (ADK), has the whole text; tool calls and results into working status updates;
// the terminal run_status into the final status update.
type encoder struct {
	t       *task
	started map[string]bool
	evs     []*session.Event
}

func newEncoder(t *task) *encoder {
	return &encoder{t: t, started: map[string]bool{}}
}

func (e *encoder) status(state a2a.TaskState, msg *a2a.Message, at time.Time, final bool) *a2a.TaskStatusUpdateEvent {
	return &a2a.TaskStatusUpdateEvent{TaskID: e.t.id, ContextID: e.t.key.ID, Final: final,
		Status: a2a.TaskStatus{State: state, Message: msg, Timestamp: timePtr(at)}}
}

func (e *encoder) chunk(item, text string, appendTo, last bool) *a2a.TaskArtifactUpdateEvent {
	return &a2a.TaskArtifactUpdateEvent{TaskID: e.t.id, ContextID: e.t.key.ID, Append: appendTo, LastChunk: last,
		Artifact: &a2a.Artifact{ID: a2a.ArtifactID(item), Name: answerArtifact, Parts: a2a.ContentParts{a2a.TextPart{Text: text}}}}
}

func (e *encoder) add(ev host.Event) []a2a.Event {
	switch ev.Kind {
	case host.KindTextDelta:
		out := e.chunk(ev.ItemID, ev.Text, e.started[ev.ItemID], false)
		e.started[ev.ItemID] = true
		return []a2a.Event{out}
	case host.KindStored:
	default:
		return nil
	}
	s := ev.Stored
	e.evs = append(e.evs, s)
	switch s.Type {
	case session.TypeAssistantMessage:
		item := itemID(s)
		delete(e.started, item)
		return []a2a.Event{e.chunk(item, textOf(s), false, true)}
	case session.TypeToolCall, session.TypeToolResult:
		return []a2a.Event{e.status(a2a.TaskStateWorking, e.t.message(s), s.Time, false)}
	case session.TypeRunStatus:
		st := host.RunStatusOf(s)
		if !session.IsTerminalStatus(st) {
			return nil
		}
		status := e.t.statusOf(st, e.evs)
		return []a2a.Event{&a2a.TaskStatusUpdateEvent{TaskID: e.t.id, ContextID: e.t.key.ID, Final: true, Status: status}}
	}
	return nil
}
