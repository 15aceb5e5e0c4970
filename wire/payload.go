package wire

import "encoding/json"

// Payload is the runner payload (KsADK's standard payload fields), carried as
// RunRequest.payload_json. The host builds it; runners read it. Python runners hand the
// same JSON to user hooks as a dict.
type Payload struct {
	// Input is the current user input text (a JSON string) or, when the session context
	// says is_resume, the resume item the client sent (mcp_approval_response or
	// function_call_output object).
	Input   json.RawMessage `json:"input"`
	History []Message       `json:"history"`
	// InputContent is the current input as Responses-style content blocks.
	InputContent []ContentBlock `json:"input_content"`
	// InputItems are the earlier conversation items a stateless client sent with this
	// turn, as sent; InputMessages lists them before the user message.
	InputItems []json.RawMessage `json:"input_items,omitempty"`
	// InputMessages is the current input as Responses-style messages/items
	// (InputMessagesOf; see Expand).
	InputMessages []json.RawMessage `json:"input_messages"`
	// InputParts is the legacy normalized parts list ({text} / {inline_data} / {file_data};
	// InputPartsOf; see Expand).
	InputParts               []json.RawMessage `json:"input_parts"`
	Attachments              []json.RawMessage `json:"attachments"`
	AttachmentResults        []json.RawMessage `json:"attachment_results"`
	CurrentAttachments       []json.RawMessage `json:"current_attachments"`
	CurrentAttachmentResults []json.RawMessage `json:"current_attachment_results"`
	HasCurrentFiles          bool              `json:"has_current_files"`
	Model                    string            `json:"model,omitempty"`
	ModelMetadata            json.RawMessage   `json:"model_metadata,omitempty"`
	ModelOptions             json.RawMessage   `json:"model_options,omitempty"`
	Instructions             string            `json:"instructions,omitempty"`
	// ToolApprovalMode is the client's approval profile for the agent's tools (KsADK's
	// metadata.agentengine.tool_approval_mode: ask, risk or full); "" when not given.
	ToolApprovalMode string            `json:"tool_approval_mode,omitempty"`
	Metadata         map[string]string `json:"metadata,omitempty"`
	SessionID        string            `json:"session_id"`
	InvocationID     string            `json:"invocation_id"`
	// Resume is set on resume turns: the first answer (Resumes[0]).
	Resume *Resume `json:"resume,omitempty"`
	// Resumes are every answer of a resume turn, in the order the client sent them, each
	// with the approval request it answers.
	Resumes []Resume `json:"resumes,omitempty"`
	// ContinueFrom is set on a run that continues a checkpoint thread in place (a failed
	// or cancelled run resumed by the client): the runner runs the thread on from its
	// latest checkpoint instead of starting from new input, which is empty.
	ContinueFrom *CheckpointRef `json:"continue_from,omitempty"`
}

// CheckpointRef names a checkpoint thread of the session, as the runner saved it.
type CheckpointRef struct {
	ThreadID     string `json:"thread_id"`
	CheckpointID string `json:"checkpoint_id,omitempty"`
}

// Resume describes the answer to a pending approval request.
type Resume struct {
	ApprovalRequestID string `json:"approval_request_id"`
	Approve           bool   `json:"approve"`
	Reason            string `json:"reason,omitempty"`
	// Output is set when the client answered with a function_call_output.
	Output string `json:"output,omitempty"`
	// The approval request being answered.
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments string          `json:"arguments,omitempty"`
	Detail    json.RawMessage `json:"detail,omitempty"`
}

// SessionContext is the session context (as KsADK defines it), carried as
// RunRequest.session_context_json.
type SessionContext struct {
	History         []Message       `json:"history"`
	PlatformContext PlatformContext `json:"platform_context"`
	KBContext       json.RawMessage `json:"kb_context"`
	MemoryContext   json.RawMessage `json:"memory_context"`
	IsResume        bool            `json:"is_resume"`
	// State is the merged view (session over user over app); StateTiers the tiers apart.
	State      map[string]any `json:"state"`
	StateTiers State          `json:"state_tiers"`
}

// PlatformContext is the runtime identity of a turn.
type PlatformContext struct {
	AgentID string `json:"agent_id"`
	AppName string `json:"app_name"`
	UserID  string `json:"user_id"`
	// AccountID is the account the client named (KsADK's account_id request field); ""
	// when none was given.
	AccountID    string `json:"account_id"`
	SessionID    string `json:"session_id"`
	InvocationID string `json:"invocation_id"`
}

// InputText returns Input as text when it is a JSON string, else "".
func (p *Payload) InputText() string {
	var s string
	if json.Unmarshal(p.Input, &s) != nil {
		return ""
	}
	return s
}
