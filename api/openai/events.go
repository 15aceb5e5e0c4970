package openai

// Responses stream event payloads. Every event repeats its type and carries the
// stream-wide sequence_number; field sets follow the spec's required lists.

type evHead struct {
	Type           string `json:"type"`
	SequenceNumber int    `json:"sequence_number"`
}

func head(t string) evHead { return evHead{Type: t} }

func (h *evHead) header() *evHead { return h }

type evResponse struct {
	evHead
	Response Response `json:"response"`
}

type evItem struct {
	evHead
	OutputIndex int `json:"output_index"`
	Item        any `json:"item"`
}

type evPart struct {
	evHead
	ItemID       string         `json:"item_id"`
	OutputIndex  int            `json:"output_index"`
	ContentIndex int            `json:"content_index"`
	Part         outputTextPart `json:"part"`
}

type evTextDelta struct {
	evHead
	ItemID       string `json:"item_id"`
	OutputIndex  int    `json:"output_index"`
	ContentIndex int    `json:"content_index"`
	Delta        string `json:"delta"`
	Logprobs     []any  `json:"logprobs"`
}

type evTextDone struct {
	evHead
	ItemID       string `json:"item_id"`
	OutputIndex  int    `json:"output_index"`
	ContentIndex int    `json:"content_index"`
	Text         string `json:"text"`
	Logprobs     []any  `json:"logprobs"`
}

type evArgsDelta struct {
	evHead
	ItemID      string `json:"item_id"`
	OutputIndex int    `json:"output_index"`
	Delta       string `json:"delta"`
}

type evArgsDone struct {
	evHead
	ItemID      string `json:"item_id"`
	OutputIndex int    `json:"output_index"`
	Name        string `json:"name"`
	Arguments   string `json:"arguments"`
}

type evSummaryPart struct {
	evHead
	ItemID       string      `json:"item_id"`
	OutputIndex  int         `json:"output_index"`
	SummaryIndex int         `json:"summary_index"`
	Part         summaryPart `json:"part"`
}

type evSummaryDelta struct {
	evHead
	ItemID       string `json:"item_id"`
	OutputIndex  int    `json:"output_index"`
	SummaryIndex int    `json:"summary_index"`
	Delta        string `json:"delta"`
}

type evSummaryDone struct {
	evHead
	ItemID       string `json:"item_id"`
	OutputIndex  int    `json:"output_index"`
	SummaryIndex int    `json:"summary_index"`
	Text         string `json:"text"`
}

// evError carries the error both flat (as the spec documents it) and nested (as the
// real API sends it), so every client recognises it.
type evError struct {
	evHead
	Code    *string     `json:"code"`
	Message string      `json:"message"`
	Param   *string     `json:"param"`
	Error   errorObject `json:"error"`
}

// evToolResult is the opt-in KsADK extension event for a tool's result.
type evToolResult struct {
	evHead
	ItemID      string `json:"item_id,omitempty"`
	OutputIndex *int   `json:"output_index,omitempty"`
	CallID      string `json:"call_id"`
	Name        string `json:"name"`
	Output      string `json:"output"`
	IsError     bool   `json:"is_error"`
}

// evItemRef is an event that only names its item (response.mcp_call.in_progress,
// .completed, .failed).
type evItemRef struct {
	evHead
	ItemID      string `json:"item_id"`
	OutputIndex int    `json:"output_index"`
}

type evMCPArgsDone struct {
	evHead
	ItemID      string `json:"item_id"`
	OutputIndex int    `json:"output_index"`
	Arguments   string `json:"arguments"`
}
