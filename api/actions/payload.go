package actions

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/agentengine/agentengine/session"
)

// epoch is KsADK's timestamp: seconds since the epoch as a float.
func epoch(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}

// sessionPayload is a session as KsADK's actions return it, from the summary row only.
type sessionPayload struct {
	SessionID          string  `json:"SessionId"`
	AgentID            string  `json:"AgentId"`
	UserID             string  `json:"UserId"`
	Title              string  `json:"Title"`
	FirstPrompt        string  `json:"FirstPrompt"`
	LastPrompt         string  `json:"LastPrompt"`
	ActiveInvocationID string  `json:"ActiveInvocationId"`
	ActiveRunStatus    string  `json:"ActiveRunStatus"`
	LatestSeqID        int64   `json:"LatestSeqId"`
	CreatedAt          float64 `json:"CreatedAt"`
	UpdatedAt          float64 `json:"UpdatedAt"`
}

func sessionOf(s session.Session) sessionPayload {
	return sessionPayload{
		SessionID: s.ID, AgentID: s.App, UserID: s.User, Title: s.Title,
		FirstPrompt: s.FirstPrompt, LastPrompt: s.LastPrompt,
		ActiveInvocationID: s.ActiveInvocationID, ActiveRunStatus: s.ActiveRunStatus,
		LatestSeqID: s.LastSeq, CreatedAt: epoch(s.CreatedAt), UpdatedAt: epoch(s.UpdatedAt),
	}
}

// eventID names a stored event: unique across sessions, stable, and parseable back
// into its seq (feedback names the assistant message it rates by it).
func eventID(sessionID string, seq int64) string {
	return sessionID + "#" + strconv.FormatInt(seq, 10)
}

// seqOfEventID returns the seq an event id of sessionID names (0 if it names none).
func seqOfEventID(sessionID, id string) int64 {
	rest, ok := strings.CutPrefix(id, sessionID+"#")
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// eventPayload is a stored event in KsADK's action shape. Content and Metadata use
// KsADK's keys (parts/text, status, tool_name, tool_args, tool_output,
// interrupt_info, resume_input, response_id, ...) because that is what its clients
// read; the event's own item id is Metadata.item_id.
type eventPayload struct {
	EventID      string         `json:"EventId"`
	SessionID    string         `json:"SessionId"`
	Author       string         `json:"Author"`
	EventType    string         `json:"EventType"`
	Content      any            `json:"Content"`
	Timestamp    float64        `json:"Timestamp"`
	SeqID        int64          `json:"SeqId"`
	Metadata     map[string]any `json:"Metadata"`
	InvocationID string         `json:"InvocationId,omitempty"`
}

type textPart struct {
	Text string `json:"text"`
}

type roleParts struct {
	Role  string `json:"role"`
	Parts []any  `json:"parts"`
}

func textContent(role, text string) roleParts {
	return roleParts{Role: role, Parts: []any{textPart{Text: text}}}
}

// jsonValue returns s as JSON when it is a JSON object or array (tool arguments and
// outputs usually are), else as the string.
func jsonValue(s string) any {
	t := bytes.TrimSpace([]byte(s))
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t) {
		return json.RawMessage(t)
	}
	return s
}

// payloadOf renders a stored event; responseID, when known, is the run's response id.
func payloadOf(e *session.Event, responseID string) eventPayload {
	p := eventPayload{
		EventID: eventID(e.SessionID, e.Seq), SessionID: e.SessionID, Author: e.Author, EventType: e.Type,
		Timestamp: epoch(e.Time), SeqID: e.Seq, Metadata: map[string]any{}, InvocationID: e.InvocationID,
	}
	if e.ItemID != "" {
		p.Metadata["item_id"] = e.ItemID
	}
	p.Content, p.Metadata = contentOf(e, p.Metadata)
	if responseID != "" && e.Type == session.TypeAssistantMessage {
		p.Metadata["response_id"] = responseID
	}
	return p
}

// contentOf maps an event's data to KsADK's Content and Metadata. Data that does not
// decode as its type is passed through as Content.
func contentOf(e *session.Event, md map[string]any) (any, map[string]any) {
	raw := json.RawMessage(e.Data)
	switch e.Type {
	case session.TypeUserMessage:
		d, err := session.DataOf[session.UserMessageData](*e)
		if err != nil {
			return raw, md
		}
		blocks := d.Blocks()
		parts := make([]any, 0, len(blocks))
		for _, b := range blocks {
			parts = append(parts, b)
		}
		if d.Instructions != "" {
			md["instructions"] = d.Instructions
		}
		if len(d.Metadata) > 0 {
			md["request_metadata"] = d.Metadata
		}
		if len(d.Items) > 0 {
			md["input_items"] = d.Items
		}
		return roleParts{Role: "user", Parts: parts}, md
	case session.TypeAssistantMessage, session.TypeReasoning:
		var d session.AssistantMessageData // reasoning has the same shape
		if json.Unmarshal(e.Data, &d) != nil {
			return raw, md
		}
		return textContent("assistant", d.Text), md
	case session.TypeToolCall:
		d, err := session.DataOf[session.ToolCallData](*e)
		if err != nil {
			return raw, md
		}
		md["tool_name"], md["tool_args"], md["tool_call_id"], md["call_id"] = d.Name, jsonValue(d.Arguments), d.CallID, d.CallID
		return textContent("assistant", d.Name), md
	case session.TypeToolResult:
		d, err := session.DataOf[session.ToolResultData](*e)
		if err != nil {
			return raw, md
		}
		md["tool_name"], md["tool_output"], md["tool_call_id"], md["call_id"] = d.Name, jsonValue(d.Output), d.CallID, d.CallID
		if d.IsError {
			md["is_error"] = true
		}
		return textContent("user", d.Output), md
	case session.TypeApprovalRequest:
		d, err := session.DataOf[session.ApprovalRequestData](*e)
		if err != nil {
			return raw, md
		}
		info := map[string]any{"id": e.ItemID, "approval_request_id": e.ItemID, "tool_name": d.Name,
			"arguments": jsonValue(d.Arguments), "call_id": d.CallID}
		if d.Message != "" {
			info["message"] = d.Message
		}
		if len(d.Detail) > 0 {
			info["detail"] = d.Detail
		}
		md["interrupt_info"], md["approval_request_id"] = info, e.ItemID
		text := d.Message
		if text == "" {
			text = "approval requested: " + d.Name
		}
		return textContent("assistant", text), md
	case session.TypeApprovalResponse:
		d, err := session.DataOf[session.ApprovalResponseData](*e)
		if err != nil {
			return raw, md
		}
		md["resume_input"] = map[string]any{"type": "mcp_approval_response", "approval_request_id": d.ApprovalRequestID,
			"approve": d.Approve, "reason": d.Reason}
		if d.Output != "" {
			md["tool_output"] = jsonValue(d.Output)
		}
		verdict := "rejected"
		if d.Approve {
			verdict = "approved"
		}
		return textContent("user", verdict), md
	case session.TypeRunStatus:
		d, err := session.DataOf[session.RunStatusData](*e)
		if err != nil {
			return raw, md
		}
		content := map[string]any{"status": d.Status}
		md["status"] = d.Status
		if d.Error != nil {
			content["detail"] = d.Error.Message
			md["error"] = d.Error
		}
		if d.Usage != nil {
			md["usage"] = d.Usage
		}
		return content, md
	case session.TypeContextCheckpoint:
		d, err := session.DataOf[session.ContextCheckpointData](*e)
		if err != nil {
			return raw, md
		}
		md["compacted_until_seq_id"], md["from_seq_id"] = d.UntilSeq, d.FromSeq
		return textContent("assistant", d.Summary), md
	}
	return raw, md
}
