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
	ErrorCode    string   `json:"errorCode,omitempty"`
	ErrorMessage string   `json:"errorMessage,omitempty"`
	InvocationID string   `json:"invocationId"`
	Author       string   `json:"author"`
	Actions      Actions  `json:"actions"`
	// LongRunningToolIDs names the function calls the run is waiting on (ADK sends a set).
	LongRunningToolIDs []string `json:"longRunningToolIds,omitempty"`
	ID                 string   `json:"id"`
	// Timestamp is seconds since the epoch, as ADK's float.
	Timestamp float64 `json:"timestamp"`
	// UsageMetadata is the turn's token usage, on the event that ends it.
	UsageMetadata *UsageMetadata `json:"usageMetadata,omitempty"`
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
