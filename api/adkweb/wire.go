package adkweb

import "encoding/json"

// ADK's wire shapes, as adk-python serialises them (pydantic, camelCase aliases,
// exclude_none). Optional fields are pointers or omitempty so that "none" is absent
// rather than null; EventActions' dict fields default to {} in ADK and are always sent.

// Event is ADK's Event JSON.
type Event struct {
	Content      *Content `json:"content,omitempty"`
	Partial      bool     `json:"partial,omitempty"`
	TurnComplete bool     `json:"turnComplete,omitempty"`
	// The model response's own fields, as the runner reported them (event meta).
	FinishReason string `json:"finishReason,omitempty"`
	ErrorCode    string `json:"errorCode,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	Interrupted  bool   `json:"interrupted,omitempty"`
	responseMeta
	InvocationID string          `json:"invocationId"`
	Author       string          `json:"author"`
	Branch       string          `json:"branch,omitempty"`
	Actions      Actions         `json:"actions"`
	NodeInfo     json.RawMessage `json:"nodeInfo,omitempty"`
	// LongRunningToolIDs names the function calls the run is waiting on (ADK sends a
	// set; ADK 2.x sends [] with every function call).
	LongRunningToolIDs *[]string `json:"longRunningToolIds,omitempty"`
	ID                 string    `json:"id"`
	// Timestamp is seconds since the epoch, as ADK's float.
	Timestamp float64 `json:"timestamp"`
}

// UsageMetadata is genai's GenerateContentResponseUsageMetadata (the counts we have).
type UsageMetadata struct {
	PromptTokenCount        int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int64 `json:"thoughtsTokenCount,omitempty"`
	CachedContentTokenCount int64 `json:"cachedContentTokenCount,omitempty"`
	TotalTokenCount         int64 `json:"totalTokenCount"`
}

// Content is genai's Content.
type Content struct {
	Role  string `json:"role"`
	Parts []Part `json:"parts"`
}

// Part is genai's Part, restricted to the kinds this surface reads or writes.
type Part struct {
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	InlineData       *Blob             `json:"inlineData,omitempty"`
	FileData         *FileData         `json:"fileData,omitempty"`
	FunctionCall     *FunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *FunctionResponse `json:"functionResponse,omitempty"`
}

// Blob is inline data; Data is base64, as genai serialises bytes.
type Blob struct {
	MimeType    string `json:"mimeType,omitempty"`
	Data        string `json:"data"`
	DisplayName string `json:"displayName,omitempty"`
}

// FileData references a file by URI.
type FileData struct {
	FileURI     string `json:"fileUri"`
	MimeType    string `json:"mimeType,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
}

// FunctionCall is a tool call; ID is the call id every surface shares (call_id).
type FunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Args json.RawMessage `json:"args"`
	Name string          `json:"name"`
}

// FunctionResponse is a tool result, or the answer to a confirmation request.
type FunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// Actions is ADK's EventActions with the fields this surface fills.
type Actions struct {
	StateDelta           json.RawMessage `json:"stateDelta"`
	ArtifactDelta        json.RawMessage `json:"artifactDelta"`
	RequestedAuthConfigs json.RawMessage `json:"requestedAuthConfigs"`
	// RequestedToolConfirmations is keyed by the guarded function call's id.
	RequestedToolConfirmations map[string]ToolConfirmation `json:"requestedToolConfirmations"`
	SkipSummarization          bool                        `json:"skipSummarization,omitempty"`
	TransferToAgent            string                      `json:"transferToAgent,omitempty"`
	Escalate                   bool                        `json:"escalate,omitempty"`
	EndOfAgent                 bool                        `json:"endOfAgent,omitempty"`
}

// responseMeta is the model response's metadata an ADK event carries, as the runner
// reported it: Event and eventMeta share it, so that apply copies it whole.
type responseMeta struct {
	UsageMetadata       json.RawMessage `json:"usageMetadata,omitempty"`
	GroundingMetadata   json.RawMessage `json:"groundingMetadata,omitempty"`
	CitationMetadata    json.RawMessage `json:"citationMetadata,omitempty"`
	CacheMetadata       json.RawMessage `json:"cacheMetadata,omitempty"`
	CustomMetadata      json.RawMessage `json:"customMetadata,omitempty"`
	ModelVersion        string          `json:"modelVersion,omitempty"`
	AvgLogprobs         json.RawMessage `json:"avgLogprobs,omitempty"`
	InputTranscription  json.RawMessage `json:"inputTranscription,omitempty"`
	OutputTranscription json.RawMessage `json:"outputTranscription,omitempty"`
}

// eventMeta is the ADK event's own fields the runner reported (the "meta" of stored
// items; see host.NativeEventMeta), in ADK's JSON.
type eventMeta struct {
	Author       string `json:"author,omitempty"`
	Branch       string `json:"branch,omitempty"`
	TurnComplete bool   `json:"turnComplete,omitempty"`
	FinishReason string `json:"finishReason,omitempty"`
	Interrupted  bool   `json:"interrupted,omitempty"`
	responseMeta
	NodeInfo           json.RawMessage `json:"nodeInfo,omitempty"`
	LongRunningToolIDs *[]string       `json:"longRunningToolIds,omitempty"`
	Actions            struct {
		// StateDelta is the state delta of the event (which the runner also reports, and
		// the host stores, as a state_delta item after the event's items).
		StateDelta json.RawMessage `json:"stateDelta,omitempty"`
		// ArtifactDelta names the artifact versions the event's step saved.
		ArtifactDelta     json.RawMessage `json:"artifactDelta,omitempty"`
		SkipSummarization bool            `json:"skipSummarization,omitempty"`
		TransferToAgent   string          `json:"transferToAgent,omitempty"`
		Escalate          bool            `json:"escalate,omitempty"`
		EndOfAgent        bool            `json:"endOfAgent,omitempty"`
	} `json:"actions"`
}

// apply writes m's fields into ev (the author only when m names one). Partial
// events take everything but the turn's end.
func (m *eventMeta) apply(ev *Event) {
	if m == nil {
		return
	}
	if m.Author != "" {
		ev.Author = m.Author
	}
	ev.Branch = m.Branch
	ev.responseMeta, ev.NodeInfo = m.responseMeta, m.NodeInfo
	ev.Interrupted = m.Interrupted
	if !ev.Partial {
		ev.TurnComplete, ev.FinishReason = m.TurnComplete, m.FinishReason
	}
	if ev.LongRunningToolIDs == nil && m.LongRunningToolIDs != nil {
		ids := append([]string{}, (*m.LongRunningToolIDs)...)
		ev.LongRunningToolIDs = &ids
	}
	a := &ev.Actions
	a.SkipSummarization, a.TransferToAgent, a.Escalate, a.EndOfAgent = m.Actions.SkipSummarization, m.Actions.TransferToAgent, m.Actions.Escalate, m.Actions.EndOfAgent
	if isObject(m.Actions.StateDelta) && !ev.Partial {
		a.StateDelta = m.Actions.StateDelta
	}
	if isObject(m.Actions.ArtifactDelta) && !ev.Partial {
		a.ArtifactDelta = m.Actions.ArtifactDelta
	}
}

// metaOf reads the meta stored with an item's data (nil without one).
func metaOf(data json.RawMessage) *eventMeta {
	var d struct {
		Meta *eventMeta `json:"meta"`
	}
	if json.Unmarshal(data, &d) != nil {
		return nil
	}
	return d.Meta
}

// ToolConfirmation is ADK's ToolConfirmation.
type ToolConfirmation struct {
	Hint      string          `json:"hint"`
	Confirmed bool            `json:"confirmed"`
	Payload   json.RawMessage `json:"payload,omitempty"`
}

// Session is ADK's Session JSON.
type Session struct {
	ID             string         `json:"id"`
	AppName        string         `json:"appName"`
	UserID         string         `json:"userId"`
	State          map[string]any `json:"state"`
	Events         []Event        `json:"events"`
	LastUpdateTime float64        `json:"lastUpdateTime"`
}

func emptyObject() json.RawMessage { return json.RawMessage(`{}`) }

func noActions() Actions {
	return Actions{StateDelta: emptyObject(), ArtifactDelta: emptyObject(), RequestedAuthConfigs: emptyObject(),
		RequestedToolConfirmations: map[string]ToolConfirmation{}}
}

func textPart(s string, thought bool) Part { return Part{Text: &s, Thought: thought} }

// confirmationArgs are the arguments of an adk_request_confirmation call.
type confirmationArgs struct {
	Original     FunctionCall     `json:"originalFunctionCall"`
	Confirmation ToolConfirmation `json:"toolConfirmation"`
}
