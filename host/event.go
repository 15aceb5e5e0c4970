package host

import (
	"github.com/agentengine/agentengine/session"
)

// EventKind tells what a run Event carries.
type EventKind int

const (
	// KindStored: a durable event, in Stored (user_message, run_status, assistant_message,
	// reasoning, tool_call, tool_result, approval_request, state_delta, ...).
	KindStored EventKind = iota + 1
	// KindTextDelta: a piece of the assistant message ItemID. Its stored
	// assistant_message (same ItemID) follows when the message ends.
	KindTextDelta
	// KindReasoningDelta: a piece of the reasoning item ItemID.
	KindReasoningDelta
	// KindToolArgsDelta: a piece of the arguments of the tool call ItemID (CallID, Name).
	KindToolArgsDelta
	// KindNative: a framework-native event (Name = kind, Text = JSON); never stored.
	KindNative
)

// Event is one entry of a run's journal: what surfaces serialise to their protocols.
// Live deltas and stored events share one ordered sequence so every subscriber, early or
// late, sees the same thing in the same order.
type Event struct {
	// Index is the event's position in the run's journal, starting at 0.
	Index  int
	Kind   EventKind
	Stored *session.Event
	ItemID string
	CallID string
	Name   string
	Text   string
}

// Terminal reports whether the event is the run's terminal run_status.
func (e Event) Terminal() bool {
	if e.Kind != KindStored || e.Stored.Type != session.TypeRunStatus {
		return false
	}
	return session.IsTerminalStatus(RunStatusOf(e.Stored))
}
