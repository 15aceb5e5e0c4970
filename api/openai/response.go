package openai

import (
	"encoding/json"
	"time"

	"github.com/agentengine/agentengine/session"
)

// Response is the Responses API object, with every field of the real API present
// (null where unknown) so strict clients validate it, plus two KsADK extensions:
// output_text and session_id.
type Response struct {
	ID                   string             `json:"id"`
	Object               string             `json:"object"`
	CreatedAt            int64              `json:"created_at"`
	Status               string             `json:"status"`
	Background           bool               `json:"background"`
	CompletedAt          *int64             `json:"completed_at"`
	Conversation         *conversationRef   `json:"conversation"`
	Error                *responseError     `json:"error"`
	IncompleteDetails    *incompleteDetails `json:"incomplete_details"`
	Instructions         *string            `json:"instructions"`
	MaxOutputTokens      *int64             `json:"max_output_tokens"`
	MaxToolCalls         *int64             `json:"max_tool_calls"`
	Metadata             map[string]string  `json:"metadata"`
	Model                string             `json:"model"`
	Output               []any              `json:"output"`
	OutputText           string             `json:"output_text"`
	ParallelToolCalls    bool               `json:"parallel_tool_calls"`
	PreviousResponseID   *string            `json:"previous_response_id"`
	PromptCacheKey       *string            `json:"prompt_cache_key"`
	PromptCacheRetention *string            `json:"prompt_cache_retention"`
	Reasoning            json.RawMessage    `json:"reasoning"`
	SafetyIdentifier     *string            `json:"safety_identifier"`
	ServiceTier          *string            `json:"service_tier"`
	Store                bool               `json:"store"`
	Temperature          *float64           `json:"temperature"`
	Text                 json.RawMessage    `json:"text"`
	ToolChoice           json.RawMessage    `json:"tool_choice"`
	Tools                json.RawMessage    `json:"tools"`
	TopLogprobs          *int64             `json:"top_logprobs"`
	TopP                 *float64           `json:"top_p"`
	Truncation           string             `json:"truncation"`
	Usage                *responseUsage     `json:"usage"`
	User                 *string            `json:"user"`
	SessionID            string             `json:"session_id"`
}

type conversationRef struct {
	ID string `json:"id"`
}

// responseError is Response.error. OpenAI's schema has code and message; the AI SDK
// also requires type, which the schema allows as an extra property.
type responseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Type    string `json:"type"`
}

type incompleteDetails struct {
	Reason string `json:"reason"`
}

// reasonApprovalRequired is KsADK's incomplete_details.reason of an approval pause
// (KsADK shape only: it is outside OpenAI's enum).
const reasonApprovalRequired = "approval_required"

type responseUsage struct {
	InputTokens         int64               `json:"input_tokens"`
	InputTokensDetails  inputTokensDetails  `json:"input_tokens_details"`
	OutputTokens        int64               `json:"output_tokens"`
	OutputTokensDetails outputTokensDetails `json:"output_tokens_details"`
	TotalTokens         int64               `json:"total_tokens"`
}

type inputTokensDetails struct {
	CachedTokens     int64 `json:"cached_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
}

type outputTokensDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

func usageOf(u *session.Usage) *responseUsage {
	out := &responseUsage{}
	if u != nil {
		out.InputTokens, out.OutputTokens = u.InputTokens, u.OutputTokens
		out.InputTokensDetails.CachedTokens = u.CachedTokens
		out.OutputTokensDetails.ReasoningTokens = u.ReasoningTokens
		out.TotalTokens = u.InputTokens + u.OutputTokens
	}
	return out
}

// Output item shapes. Field sets follow the spec's required lists plus what the AI SDK
// and openai-node's stream accumulator check (ids everywhere, function_call status).

type messageItem struct {
	ID      string           `json:"id"`
	Type    string           `json:"type"`
	Status  string           `json:"status"`
	Role    string           `json:"role"`
	Content []outputTextPart `json:"content"`
}

type outputTextPart struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs"`
}

func newOutputText(text string) outputTextPart {
	return outputTextPart{Type: "output_text", Text: text, Annotations: []any{}, Logprobs: []any{}}
}

type functionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

type reasoningItem struct {
	ID      string        `json:"id"`
	Type    string        `json:"type"`
	Status  string        `json:"status"`
	Summary []summaryPart `json:"summary"`
}

type summaryPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// mcpCallItem is a tool the agent ran itself, in OpenAI's hosted (MCP) tool shape:
// clients show it and never execute it.
type mcpCallItem struct {
	ID                string  `json:"id"`
	Type              string  `json:"type"`
	ServerLabel       string  `json:"server_label"`
	Name              string  `json:"name"`
	Arguments         string  `json:"arguments"`
	Output            *string `json:"output"`
	Error             *string `json:"error"`
	Status            string  `json:"status"`
	ApprovalRequestID *string `json:"approval_request_id"`
}

type approvalRequestItem struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Arguments   string `json:"arguments"`
	Name        string `json:"name"`
	ServerLabel string `json:"server_label"`
	// Message is the agent's question for the person deciding, when it set one: not in
	// OpenAI's item, which has no place for it (clients ignore fields they do not know).
	Message string `json:"message,omitempty"`
}

// requestEcho is what a Responses request stores as the run's Meta: the fields a
// Response echoes, so the object can be rebuilt from the store after a restart, and
// the layout of its input for input_items.
type requestEcho struct {
	API                string            `json:"api"`
	Model              string            `json:"model"`
	Instructions       *string           `json:"instructions,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	PreviousResponseID string            `json:"previous_response_id,omitempty"`
	Conversation       string            `json:"conversation,omitempty"`
	Tools              json.RawMessage   `json:"tools,omitempty"`
	ToolChoice         json.RawMessage   `json:"tool_choice,omitempty"`
	Text               json.RawMessage   `json:"text,omitempty"`
	Reasoning          json.RawMessage   `json:"reasoning,omitempty"`
	Temperature        *float64          `json:"temperature,omitempty"`
	TopP               *float64          `json:"top_p,omitempty"`
	MaxOutputTokens    *int64            `json:"max_output_tokens,omitempty"`
	MaxToolCalls       *int64            `json:"max_tool_calls,omitempty"`
	TopLogprobs        *int64            `json:"top_logprobs,omitempty"`
	ParallelToolCalls  *bool             `json:"parallel_tool_calls,omitempty"`
	Truncation         string            `json:"truncation,omitempty"`
	Store              bool              `json:"store"`
	Background         bool              `json:"background,omitempty"`
	User               string            `json:"user,omitempty"`
	SafetyIdentifier   string            `json:"safety_identifier,omitempty"`
	PromptCacheKey     string            `json:"prompt_cache_key,omitempty"`
	Input              []inputSlot       `json:"input,omitempty"`
}

// apiResponses marks runs started by this surface in their Meta.
const apiResponses = "responses"

// inputSlot is one input item of a request in order: the user message (Src "message",
// the stored user_message content), the next of the stored items (Src "item"), or a
// resume item kept here verbatim (Src "resume").
type inputSlot struct {
	ID   string          `json:"id"`
	Src  string          `json:"src"`
	Item json.RawMessage `json:"item,omitempty"`
}

func echoOf(r *responsesRequest, model string) requestEcho {
	return requestEcho{
		API: apiResponses, Model: model, Instructions: r.Instructions, Metadata: r.Metadata,
		PreviousResponseID: r.PreviousResponseID, Conversation: r.Conversation,
		Tools: r.Tools, ToolChoice: r.ToolChoice, Text: r.Text, Reasoning: r.Reasoning,
		Temperature: r.Temperature, TopP: r.TopP, MaxOutputTokens: r.MaxOutputTokens,
		MaxToolCalls: r.MaxToolCalls, TopLogprobs: r.TopLogprobs, ParallelToolCalls: r.ParallelToolCalls,
		Truncation: r.Truncation, Store: r.Store, Background: r.Background, User: r.User,
		SafetyIdentifier: r.SafetyIdentifier, PromptCacheKey: r.PromptCacheKey,
	}
}

// parseEcho reads a run's Meta; runs of other surfaces (or none) give defaults.
func parseEcho(meta json.RawMessage, agent string) requestEcho {
	e := requestEcho{Model: agent, Store: true}
	if len(meta) > 0 {
		_ = json.Unmarshal(meta, &e) // a foreign or damaged Meta leaves the defaults
	}
	if e.Model == "" {
		e.Model = agent
	}
	return e
}

// Defaults of echoed fields, as the real API sends them.
const (
	defaultText       = `{"format":{"type":"text"}}`
	defaultToolChoice = `"auto"`
	emptyArray        = `[]`
	jsonNull          = `null`
)

// runIdentity is what a Response needs besides the request echo.
type runIdentity struct {
	ResponseID string
	CreatedAt  time.Time
	SessionID  string
}

// baseResponse is the in-progress Response of a run, before any output.
func baseResponse(id runIdentity, e requestEcho) Response {
	r := Response{
		ID: id.ResponseID, Object: "response", CreatedAt: id.CreatedAt.Unix(), Status: "in_progress",
		Background: e.Background, Instructions: e.Instructions, MaxOutputTokens: e.MaxOutputTokens,
		MaxToolCalls: e.MaxToolCalls, Metadata: e.Metadata, Model: e.Model, Output: []any{},
		ParallelToolCalls: true, PreviousResponseID: nullable(e.PreviousResponseID),
		PromptCacheKey: nullable(e.PromptCacheKey), Reasoning: e.Reasoning,
		SafetyIdentifier: nullable(e.SafetyIdentifier), Store: e.Store, Temperature: e.Temperature,
		Text: e.Text, ToolChoice: e.ToolChoice, Tools: e.Tools, TopLogprobs: e.TopLogprobs,
		TopP: e.TopP, Truncation: e.Truncation, Usage: usageOf(nil), User: nullable(e.User),
		SessionID: id.SessionID,
	}
	if r.Metadata == nil {
		r.Metadata = map[string]string{}
	}
	if e.Conversation != "" {
		r.Conversation = &conversationRef{ID: e.Conversation}
	}
	if e.ParallelToolCalls != nil {
		r.ParallelToolCalls = *e.ParallelToolCalls
	}
	if r.Reasoning == nil {
		r.Reasoning = json.RawMessage(jsonNull)
	}
	if r.Text == nil {
		r.Text = json.RawMessage(defaultText)
	}
	if r.ToolChoice == nil {
		r.ToolChoice = json.RawMessage(defaultToolChoice)
	}
	if r.Tools == nil {
		r.Tools = json.RawMessage(emptyArray)
	}
	if r.Truncation == "" {
		r.Truncation = "disabled"
	}
	return r
}
