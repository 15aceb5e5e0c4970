package host

import (
	"context"
	"encoding/json"
	"io"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/wire"
)

// TurnRequest is a protocol-neutral request for one turn; every surface maps its wire
// format onto it.
type TurnRequest struct {
	// App is the hosted agent's name (the OpenAI "model").
	App string
	// Model is the client's model when it names no hosted agent (ResolveModel sent it to
	// the only one): the runner gets it as payload.model, its model override.
	Model string
	User  string
	// SessionID continues that session; empty starts a new one. With CreateIfMissing an
	// unknown id is created (client-chosen conversation ids), otherwise it is ErrNotFound.
	SessionID       string
	CreateIfMissing bool
	// InvocationID and ResponseID are optional client- or surface-chosen ids for the run.
	InvocationID string
	ResponseID   string
	Input        Input
	Instructions string
	Metadata     map[string]string
	// AccountID is the account the client named (KsADK's account_id), passed to the runner
	// in platform_context.
	AccountID string
	// ToolApprovalMode is the client's approval profile for tools (ask, risk, full), from
	// metadata.agentengine.tool_approval_mode; passed to the runner as payload field.
	ToolApprovalMode string
	// ModelMetadata and ModelOptions are passed to the runner untouched.
	ModelMetadata json.RawMessage
	ModelOptions  json.RawMessage
	// Meta is the surface's echo of the request, stored on the run record.
	Meta json.RawMessage
	// StateDelta is a JSON object of state changes the client sends with the turn
	// (ADK's stateDelta); it is applied atomically with the turn's opening events.
	StateDelta json.RawMessage
	// Unannounced says the client learns the run's ids only when it ends (a non-stream,
	// foreground request): nobody can follow or cancel it before. Its start is recorded
	// as every turn's; in a session the runtime names, nobody on another replica can ask
	// for its journal either, so a finished one leaves memory as soon as it is read whole.
	Unannounced bool
	// ContinueFrom continues a checkpoint thread of the session in place: the run has no
	// input, and the runner runs the thread on from where its last run stopped (a failed
	// or cancelled run resumed). See Runtime.CanContinue.
	ContinueFrom *wire.CheckpointRef
	// Surface names the API that started the turn ("responses", "chat", "adk", "actions",
	// "cli"), for metrics and traces.
	Surface string
}

// private reports whether nobody but the client that sends the turn can know of it
// before it ends: an unannounced turn in a session the runtime names for it.
func (req TurnRequest) private() bool { return req.Unannounced && req.SessionID == "" }

// Input is a turn's normalised user input.
type Input struct {
	// Content is the current user content as Responses-style blocks; the text blocks'
	// concatenation is the turn's input text.
	Content []session.ContentBlock
	// Items are further input items passed to the runner as they came (for example a
	// stateless client's earlier conversation items).
	Items []json.RawMessage
	// Resumes answer pending approval requests of the session.
	Resumes []Resume
	// MessageID is the item id of the user message, when the surface names it (the
	// Responses input item's), stored on its event so that it can be listed and
	// referenced by that id.
	MessageID string
}

// Resume is one answer to a pending approval request.
type Resume struct {
	// ApprovalRequestID answers the approval request with this id (mcp_approval_response);
	// CallID answers the one guarding that tool call (function_call_output).
	ApprovalRequestID string
	CallID            string
	Approve           bool
	Reason            string
	Output            string
	// Raw is the input item as the client sent it; it becomes the runner's input.
	Raw json.RawMessage
}

// Text returns the concatenated text blocks.
func (in Input) Text() string { return wire.InputText(in.Content) }

// Empty reports whether the input carries nothing to run.
func (in Input) Empty() bool {
	return len(in.Content) == 0 && len(in.Items) == 0 && len(in.Resumes) == 0
}

// Attachments stores and extracts the files of turns (host/attach implements it).
// Errors that are *ClientError carry client-safe messages (an unknown or malformed
// upload reference, a file over the limit); others are internal.
type Attachments interface {
	// Put stores a turn's inline file (a data: URL's bytes) as an upload of owner, the
	// turn's user.
	Put(ctx context.Context, owner, name, declaredMime string, r io.Reader) (AttachmentMeta, error)
	// IsRef reports whether uri is one of the store's references (ksadk-upload://…),
	// well formed or not.
	IsRef(uri string) bool
	// Stat resolves a reference.
	Stat(ctx context.Context, uri string) (AttachmentMeta, error)
	// Result waits for the extraction of a reference until ctx ends.
	Result(ctx context.Context, uri string) (AttachmentResult, error)
}

// AttachmentMeta describes a stored upload.
type AttachmentMeta struct {
	URI       string
	Name      string
	MimeType  string
	Kind      string // image, text, document, archive or binary (from the content)
	SizeBytes int64
	// Owner is the user the upload belongs to ("" for none: anyone with its id).
	Owner string
}

// AttachmentResult is an extraction result: an attachment_results item of the runner payload.
type AttachmentResult struct {
	FileURI          string   `json:"file_uri"`
	Name             string   `json:"name"`
	MimeType         string   `json:"mime_type"`
	Kind             string   `json:"kind"`
	Status           string   `json:"status"` // ok, partial, failed or skipped
	ExtractionMethod string   `json:"extraction_method"`
	Text             string   `json:"text"`
	TextExcerpt      string   `json:"text_excerpt"`
	Warnings         []string `json:"warnings"`
}
