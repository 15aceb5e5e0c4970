package openai

import (
	"encoding/json"

	"github.com/agentengine/agentengine/host"
)

// responsesRequest is a decoded and validated POST /v1/responses body. Parsing is pure:
// anything that needs the runtime (agents, sessions, item references) is resolved later.
type responsesRequest struct {
	Model              string
	Input              []inputItem
	Instructions       *string
	Metadata           map[string]string
	ModelMetadata      json.RawMessage
	ModelOptions       json.RawMessage
	Conversation       string // from conversation (string or {id})
	SessionID          string // legacy session_id, or the conversation
	PreviousResponseID string
	Stream             bool
	Background         bool
	Store              bool
	KsadkEvents        bool
	User               string
	SafetyIdentifier   string

	// Echoed on the Response only.
	Tools             json.RawMessage
	ToolChoice        json.RawMessage
	Text              json.RawMessage
	Reasoning         json.RawMessage
	Temperature       *float64
	TopP              *float64
	MaxOutputTokens   *int64
	MaxToolCalls      *int64
	TopLogprobs       *int64
	ParallelToolCalls *bool
	Truncation        string
	PromptCacheKey    string
}

// parseResponsesRequest decodes and validates a Responses request body. It never
// panics; it returns a request or a 400 envelope naming the offending field.
func parseResponsesRequest(body []byte) (*responsesRequest, *apiError) {
	f, aerr := decodeObject(body, "", "the request body")
	if aerr != nil {
		aerr.Param = ""
		return nil, aerr
	}
	r := &responsesRequest{Store: true}
	if r.Model, _, aerr = f.str("model"); aerr != nil {
		return nil, aerr
	}
	in, ok := f.get("input")
	if !ok {
		return nil, badRequest("input", "missing_required_parameter", "input is required")
	}
	if r.Input, aerr = parseInput(in); aerr != nil {
		return nil, aerr
	}
	if s, ok, aerr := f.str("instructions"); aerr != nil {
		return nil, aerr
	} else if ok {
		r.Instructions = &s
	}
	if r.Metadata, aerr = f.metadata("metadata"); aerr != nil {
		return nil, aerr
	}
	if r.ModelMetadata, aerr = f.object("model_metadata"); aerr != nil {
		return nil, aerr
	}
	if r.ModelOptions, aerr = f.object("model_options"); aerr != nil {
		return nil, aerr
	}
	if aerr = r.parseConversation(f); aerr != nil {
		return nil, aerr
	}
	if r.PreviousResponseID, _, aerr = f.str("previous_response_id"); aerr != nil {
		return nil, aerr
	}
	if r.PreviousResponseID != "" && r.SessionID != "" {
		return nil, badRequest("previous_response_id", "", "previous_response_id cannot be combined with conversation or session_id; use one of them to continue a conversation")
	}
	if r.Stream, _, aerr = f.boolean("stream"); aerr != nil {
		return nil, aerr
	}
	if r.Background, _, aerr = f.boolean("background"); aerr != nil {
		return nil, aerr
	}
	if store, set, aerr := f.boolean("store"); aerr != nil {
		return nil, aerr
	} else if set {
		r.Store = store
	}
	if r.Background && !r.Store {
		return nil, badRequest("background", "", "background responses must be stored: background cannot be used with store=false")
	}
	if r.KsadkEvents, _, aerr = f.boolean("ksadk_events"); aerr != nil {
		return nil, aerr
	}
	if r.User, _, aerr = f.id("user"); aerr != nil {
		return nil, aerr
	}
	if r.SafetyIdentifier, _, aerr = f.id("safety_identifier"); aerr != nil {
		return nil, aerr
	}
	if aerr := r.parseEcho(f); aerr != nil {
		return nil, aerr
	}
	return r, nil
}

func (r *responsesRequest) parseConversation(f fields) *apiError {
	if v, ok := f.get("conversation"); ok {
		if s, isStr, _ := f.str("conversation"); isStr {
			r.Conversation = s
		} else {
			obj, aerr := decodeObject(v, "conversation", "conversation")
			if aerr != nil {
				return badRequest("conversation", "invalid_type", "conversation must be a string or an object with an id")
			}
			if r.Conversation, aerr = obj.reqStr("id"); aerr != nil {
				aerr.Param, aerr.Message = "conversation.id", "conversation.id is required"
				return aerr
			}
		}
		if r.Conversation == "" {
			return badRequest("conversation", "", "conversation must not be empty")
		}
		if err := host.ValidateID(r.Conversation); err != nil {
			return badRequest("conversation", "", "conversation is not a valid id: %v", err)
		}
	}
	sid, _, aerr := f.id("session_id")
	if aerr != nil {
		return aerr
	}
	if r.Conversation != "" && sid != "" && sid != r.Conversation {
		return badRequest("session_id", "", "conversation %q and session_id %q disagree; send one of them", r.Conversation, sid)
	}
	r.SessionID = r.Conversation
	if r.SessionID == "" {
		r.SessionID = sid
	}
	return nil
}

// parseEcho type-checks the fields that are only echoed on the Response, so that a
// strict client never receives a Response that fails its own schema.
func (r *responsesRequest) parseEcho(f fields) *apiError {
	var aerr *apiError
	if r.Tools, aerr = f.array("tools"); aerr != nil {
		return aerr
	}
	if r.ToolChoice, aerr = f.stringOrObject("tool_choice"); aerr != nil {
		return aerr
	}
	if r.Text, aerr = f.object("text"); aerr != nil {
		return aerr
	}
	if r.Reasoning, aerr = f.object("reasoning"); aerr != nil {
		return aerr
	}
	if r.Temperature, aerr = f.number("temperature"); aerr != nil {
		return aerr
	}
	if r.TopP, aerr = f.number("top_p"); aerr != nil {
		return aerr
	}
	if r.MaxOutputTokens, aerr = f.intAtLeast("max_output_tokens", 1); aerr != nil {
		return aerr
	}
	if r.MaxToolCalls, aerr = f.intAtLeast("max_tool_calls", 0); aerr != nil {
		return aerr
	}
	if r.TopLogprobs, aerr = f.intAtLeast("top_logprobs", 0); aerr != nil {
		return aerr
	}
	if b, ok, aerr := f.boolean("parallel_tool_calls"); aerr != nil {
		return aerr
	} else if ok {
		r.ParallelToolCalls = &b
	}
	if r.Truncation, _, aerr = f.str("truncation"); aerr != nil {
		return aerr
	}
	if r.Truncation != "" && r.Truncation != "auto" && r.Truncation != "disabled" {
		return badRequest("truncation", "unsupported_value", "truncation must be auto or disabled")
	}
	if r.PromptCacheKey, _, aerr = f.str("prompt_cache_key"); aerr != nil {
		return aerr
	}
	return nil
}
