package wire

import "encoding/json"

// Message is one entry of model-facing history: the host's projection of stored session
// events (see session.Project), sent to runners in Payload.History and
// SessionContext.History and to Summarize.
type Message struct {
	Role    string `json:"role"` // user or assistant
	Content string `json:"content"`
	// Type is the stored event type the message was projected from (user_message,
	// assistant_message, tool_call, tool_result, approval_request, approval_response,
	// attachment_ref, or context_checkpoint for a compaction summary).
	Type      string `json:"type"`
	Seq       int64  `json:"seq"`
	CallID    string `json:"call_id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	// Output is a tool result's output as JSON: the stored output text as a JSON string,
	// or what a client's function_call_output carried (a string, or parts / an object).
	// Runners build tool messages from it; Content is only its display text.
	Output json.RawMessage `json:"output,omitempty"`
	// Blocks keeps non-text user content (images, files) for multimodal runners.
	Blocks []ContentBlock `json:"blocks,omitempty"`
}

// ContentBlock is one block of user content in Responses-style naming.
type ContentBlock struct {
	Type     string `json:"type"` // input_text, input_image, input_file
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
	FileData string `json:"file_data,omitempty"`
	FileURL  string `json:"file_url,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	Filename string `json:"filename,omitempty"`
	Detail   string `json:"detail,omitempty"`
}

// Usage counts tokens of a run.
type Usage struct {
	InputTokens     int64 `json:"input_tokens"`
	OutputTokens    int64 `json:"output_tokens"`
	ReasoningTokens int64 `json:"reasoning_tokens,omitempty"`
	CachedTokens    int64 `json:"cached_tokens,omitempty"`
}

// State is the three state tiers as seen by one session.
type State struct {
	App     map[string]any `json:"app"`
	User    map[string]any `json:"user"`
	Session map[string]any `json:"session"`
}

// Merged returns the view a runner sees: session over user over app.
func (s State) Merged() map[string]any {
	out := make(map[string]any, len(s.App)+len(s.User)+len(s.Session))
	for _, tier := range []map[string]any{s.App, s.User, s.Session} {
		for k, v := range tier {
			out[k] = v
		}
	}
	return out
}

// Checkpoint is a saved thread state of a runner's framework (a LangGraph checkpoint),
// which the host keeps for the runner so that an interrupted run can be resumed by another
// runner process or after a restart. Data is the runner's encoding, opaque to the host.
type Checkpoint struct {
	ThreadID  string `json:"thread_id"`
	Namespace string `json:"namespace"`
	ID        string `json:"id"`
	ParentID  string `json:"parent_id,omitempty"`
	Data      []byte `json:"data"`
	// Writes are the checkpoint's pending writes (read side only), by task and index.
	Writes []CheckpointWrite `json:"writes,omitempty"`
}

// CheckpointWrite is one pending write of a task to a checkpoint (an interrupt, a task's
// output). Data is the runner's encoding of the value.
type CheckpointWrite struct {
	ThreadID     string `json:"thread_id"`
	Namespace    string `json:"namespace"`
	CheckpointID string `json:"checkpoint_id"`
	TaskID       string `json:"task_id"`
	Index        int64  `json:"index"`
	Channel      string `json:"channel"`
	TaskPath     string `json:"task_path,omitempty"`
	Data         []byte `json:"data"`
}
