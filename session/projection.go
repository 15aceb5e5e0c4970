package session

import (
	"context"
	"encoding/json"
	"fmt"
)

// Message is one entry of model-facing history (seed 000, "Event Projection").
type Message struct {
	Role    string `json:"role"` // user or assistant
	Content string `json:"content"`
	// Type is the stored event type the message was projected from.
	Type      string `json:"type"`
	Seq       int64  `json:"seq"`
	CallID    string `json:"call_id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	// Blocks keeps non-text user content (images, files) for multimodal runners.
	Blocks []ContentBlock `json:"blocks,omitempty"`
}

// Project turns transcript events into history. Control events (run_status, reasoning,
// state deltas, feedback, boundaries) never enter it. A context_checkpoint replaces the
// events it covers with its summary; events it covers that appear in events are dropped.
func Project(events []Event) []Message {
	var out []Message
	var coveredUntil int64
	for _, e := range events {
		if e.Type == TypeContextCheckpoint {
			var d ContextCheckpointData
			if json.Unmarshal(e.Data, &d) == nil {
				// A checkpoint supersedes everything projected so far that it covers.
				kept := out[:0]
				for _, m := range out {
					if m.Seq > d.UntilSeq {
						kept = append(kept, m)
					}
				}
				out = append([]Message{{Role: "assistant", Content: d.Summary, Type: e.Type, Seq: e.Seq}}, kept...)
				coveredUntil = d.UntilSeq
			}
			continue
		}
		if e.Seq <= coveredUntil {
			continue
		}
		if m, ok := projectOne(e); ok {
			out = append(out, m)
		}
	}
	return out
}

func projectOne(e Event) (Message, bool) {
	m := Message{Type: e.Type, Seq: e.Seq}
	switch e.Type {
	case TypeUserMessage:
		var d UserMessageData
		if json.Unmarshal(e.Data, &d) != nil {
			return m, false
		}
		m.Role, m.Content = "user", d.Text
		for _, b := range d.Content {
			if b.Type != "input_text" {
				m.Blocks = append(m.Blocks, b)
			}
		}
	case TypeAssistantMessage:
		var d AssistantMessageData
		if json.Unmarshal(e.Data, &d) != nil {
			return m, false
		}
		m.Role, m.Content = "assistant", d.Text
	case TypeToolCall:
		var d ToolCallData
		if json.Unmarshal(e.Data, &d) != nil {
			return m, false
		}
		m.Role = "assistant"
		m.Content = fmt.Sprintf("[tool_call] %s(%s)", d.Name, d.Arguments)
		m.CallID, m.Name, m.Arguments = d.CallID, d.Name, d.Arguments
	case TypeToolResult:
		var d ToolResultData
		if json.Unmarshal(e.Data, &d) != nil {
			return m, false
		}
		m.Role = "user"
		m.Content = fmt.Sprintf("[tool_result] %s: %s", d.Name, d.Output)
		m.CallID, m.Name = d.CallID, d.Name
	case TypeApprovalRequest:
		var d ApprovalRequestData
		if json.Unmarshal(e.Data, &d) != nil {
			return m, false
		}
		m.Role = "assistant"
		m.Content = fmt.Sprintf("[approval_request] %s(%s)", d.Name, d.Arguments)
		m.CallID, m.Name, m.Arguments = d.CallID, d.Name, d.Arguments
	case TypeApprovalResponse:
		var d ApprovalResponseData
		if json.Unmarshal(e.Data, &d) != nil {
			return m, false
		}
		verdict := "rejected"
		if d.Approve {
			verdict = "approved"
		}
		m.Role = "user"
		m.Content = "[approval_response] " + verdict
		if d.Reason != "" {
			m.Content += ": " + d.Reason
		}
	case TypeAttachmentRef:
		m.Role = "user"
		m.Content = "[attachment] " + string(e.Data)
	default:
		return m, false
	}
	return m, true
}

// LoadHistory reads the events that projection needs (from the latest checkpoint on, so
// the cost does not grow with the whole log) and projects them.
func LoadHistory(ctx context.Context, st Store, key Key) ([]Message, Session, error) {
	sess, err := st.GetSession(ctx, key)
	if err != nil {
		return nil, sess, err
	}
	var after int64
	if sess.CheckpointSeq > 0 {
		after = sess.CheckpointSeq - 1
		cp, err := st.Events(ctx, key, EventQuery{AfterSeq: after, Limit: 1})
		if err != nil {
			return nil, sess, fmt.Errorf("read checkpoint: %w", err)
		}
		if len(cp) == 1 && cp[0].Type == TypeContextCheckpoint {
			var d ContextCheckpointData
			if err := json.Unmarshal(cp[0].Data, &d); err == nil && d.UntilSeq < after {
				// Tail events between the covered range and the checkpoint still count.
				after = d.UntilSeq
			}
		}
	}
	evs, err := st.Events(ctx, key, EventQuery{AfterSeq: after})
	if err != nil {
		return nil, sess, fmt.Errorf("read history: %w", err)
	}
	return Project(evs), sess, nil
}
