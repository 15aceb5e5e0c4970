// Package session defines agentengine's durable, event-sourced session store: the event
// model, the Store interface every backend implements, the run records that make a turn
// addressable, and the projection of an event log into model-facing history.
package session

import (
	"encoding/json"
	"time"

	"github.com/agentengine/agentengine/wire"
)

// Event types. The first group is KsADK's session event types; the rest are agentengine's additions.
const (
	TypeUserMessage       = "user_message"
	TypeRunStatus         = "run_status"
	TypeAssistantMessage  = "assistant_message"
	TypeToolCall          = "tool_call"
	TypeToolResult        = "tool_result"
	TypeReasoning         = "reasoning"
	TypeApprovalRequest   = "approval_request"
	TypeApprovalResponse  = "approval_response"
	TypeAttachmentRef     = "attachment_ref"
	TypeCompactionBound   = "compaction_boundary"
	TypeContextCheckpoint = "context_checkpoint"
	TypeStateDelta        = "state_delta"
	TypeFeedback          = "feedback"
	// TypeAssistantStreamSnapshot (KsADK's name) holds the text of a message still
	// streaming, cumulative, written now and then while it streams so that a host that
	// dies mid-message loses little of it. The message's assistant_message (same item id)
	// supersedes it; readers other than recovery skip it.
	TypeAssistantStreamSnapshot = "assistant_stream_snapshot"
	// TypeConversationMetadata sets the metadata of a session used as an OpenAI
	// conversation; the latest one holds.
	TypeConversationMetadata = "conversation_metadata"
	// TypeConversationItem is an item added to a session used as an OpenAI conversation
	// that has no event type of its own (reasoning, MCP items): its data is the item's
	// JSON. History gets what session.ItemMessages makes of it.
	TypeConversationItem = "conversation_item"
	// TypeItemDeleted removes items from a session's history (an OpenAI conversation
	// item deleted): the event log is append-only, so the deletion is an event too.
	TypeItemDeleted = "item_deleted"
)

// Run statuses carried by run_status events and run records.
const (
	StatusInProgress  = "in_progress"
	StatusCompleted   = "completed"
	StatusFailed      = "failed"
	StatusCancelled   = "cancelled"
	StatusInterrupted = "interrupted"
)

// IsTerminalStatus reports whether a run status ends a run.
func IsTerminalStatus(s string) bool {
	switch s {
	case StatusCompleted, StatusFailed, StatusCancelled, StatusInterrupted:
		return true
	}
	return false
}

// Key identifies a session. A session exists only for its (App, User): a lookup with
// another user's key finds nothing.
type Key struct {
	App  string `json:"app"`
	User string `json:"user"`
	ID   string `json:"id"`
}

// Event is one stored fact of a session. Seq is assigned by the store at append time and
// is unique and strictly increasing within a session, starting at 1.
type Event struct {
	Seq          int64  `json:"seq"`
	SessionID    string `json:"session_id"`
	InvocationID string `json:"invocation_id,omitempty"`
	// ItemID is the protocol-visible id of the item this event represents (msg_…, fc_…,
	// rs_…), so that clients can reference it later (item_reference) across sessions.
	ItemID string          `json:"item_id,omitempty"`
	Type   string          `json:"type"`
	Author string          `json:"author"`
	Data   json.RawMessage `json:"data"`
	// StateDelta is applied to the state tiers atomically with the append; see Tier.
	StateDelta json.RawMessage `json:"state_delta,omitempty"`
	Time       time.Time       `json:"time"`
}

// NewEvent is an event to append; the store assigns Seq, SessionID and Time (when zero).
type NewEvent struct {
	InvocationID string
	ItemID       string
	Type         string
	Author       string
	Data         json.RawMessage
	StateDelta   json.RawMessage
	Time         time.Time
	// Checkpoints, when set, are saved in the same transaction as the event (see
	// CheckpointSave); they are not part of the event.
	Checkpoints *CheckpointSave
}

// Data payloads of the event types. Stored as the event's Data JSON.

// ContentBlock is one block of user content in Responses-style naming.
type ContentBlock = wire.ContentBlock

// UserMessageData is the data of a user_message event.
type UserMessageData struct {
	// Text is the display text: the concatenated text blocks.
	Text    string         `json:"text"`
	Content []ContentBlock `json:"content,omitempty"`
	// Items holds the other input items of the request (function_call_output and earlier
	// conversation items sent by a stateless client), as the client sent them.
	Items        []json.RawMessage `json:"items,omitempty"`
	Instructions string            `json:"instructions,omitempty"`
	Metadata     map[string]string `json:"metadata,omitempty"`
}

// Blocks is the message's content: Content, or for a message stored as text alone
// (NewUserMessageData's form of a text-only input, and KsADK's imported messages) one
// input_text block holding Text.
func (d UserMessageData) Blocks() []ContentBlock {
	if len(d.Content) > 0 || d.Text == "" {
		return d.Content
	}
	return []ContentBlock{{Type: "input_text", Text: d.Text}}
}

// NewUserMessageData is the data of a user_message of the given content. Content that is
// only its text (one input_text block) is stored as Text alone, so that a large input is
// stored once, not twice; Blocks gives it back.
func NewUserMessageData(text string, content []ContentBlock) UserMessageData {
	d := UserMessageData{Text: text, Content: content}
	if len(content) == 1 && content[0] == (ContentBlock{Type: "input_text", Text: text}) {
		d.Content = nil
	}
	return d
}

// AssistantMessageData is the data of an assistant_message event.
type AssistantMessageData struct {
	Text string `json:"text"`
}

// AssistantStreamSnapshotData is the data of an assistant_stream_snapshot event, in
// KsADK's shape: the message's text so far and the snapshot's number within it.
type AssistantStreamSnapshotData struct {
	Text           string `json:"text"`
	StreamSnapshot bool   `json:"stream_snapshot"`
	SnapshotIndex  int    `json:"snapshot_index"`
}

// ConversationMetadataData is the data of a conversation_metadata event.
type ConversationMetadataData struct {
	Metadata map[string]string `json:"metadata"`
}

// ItemDeletedData is the data of an item_deleted event: the deleted item's id and the
// parts of events it was made of, which history leaves out from then on.
type ItemDeletedData struct {
	ItemID string     `json:"item_id"`
	Parts  []ItemPart `json:"parts"`
}

// ItemPart names one message of history: the event at Seq, or with Index >= 0 the
// Index-th of the items a user_message carried along (UserMessageData.Items).
type ItemPart struct {
	Seq   int64 `json:"seq"`
	Index int   `json:"index"`
}

// ReasoningData is the data of a reasoning event.
type ReasoningData struct {
	Text string `json:"text"`
}

// ToolCallData is the data of a tool_call event.
type ToolCallData struct {
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolResultData is the data of a tool_result event.
type ToolResultData struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name,omitempty"`
	Output  string `json:"output"`
	IsError bool   `json:"is_error,omitempty"`
}

// ApprovalRequestData is the data of an approval_request event; the event's ItemID is the
// approval id clients answer with.
type ApprovalRequestData struct {
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Message   string          `json:"message,omitempty"`
	Detail    json.RawMessage `json:"detail,omitempty"`
}

// ApprovalResponseData is the data of an approval_response event.
type ApprovalResponseData struct {
	ApprovalRequestID string `json:"approval_request_id"`
	Approve           bool   `json:"approve"`
	Reason            string `json:"reason,omitempty"`
	// Output is set when the resume answered with a function_call_output.
	Output string `json:"output,omitempty"`
}

// Usage counts tokens of a run.
type Usage = wire.Usage

// RunError is the client-safe description of a failed run.
type RunError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// RunStatusData is the data of a run_status event.
type RunStatusData struct {
	Status string    `json:"status"`
	Error  *RunError `json:"error,omitempty"`
	Usage  *Usage    `json:"usage,omitempty"`
}

// ContextCheckpointData is the data of a context_checkpoint event: a summary that replaces
// the transcript events with FromSeq <= seq <= UntilSeq in projected history.
type ContextCheckpointData struct {
	Summary  string `json:"summary"`
	FromSeq  int64  `json:"from_seq"`
	UntilSeq int64  `json:"until_seq"`
}

// CompactionBoundaryData is the data of a compaction_boundary event.
type CompactionBoundaryData struct {
	CompactedUntilSeq int64 `json:"compacted_until_seq"`
}

// MustJSON encodes v, which must be encodable (the payload types above always are).
func MustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("session: encode event data: " + err.Error())
	}
	return b
}
