package session

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentengine/agentengine/wire"
)

// Message is one entry of model-facing history (KsADK's projection of session events);
// it is what runners receive as history.
type Message = wire.Message

// Project turns transcript events into history. Control events (run_status, reasoning,
// state deltas, feedback, boundaries) never enter it. A context_checkpoint replaces the
// events it covers with its summary; events it covers that appear in events are dropped.
func Project(events []Event) []Message {
	var out []Message
	var coveredUntil int64
	deleted := deletedParts(events)
	for _, e := range events {
		if e.Type == TypeContextCheckpoint {
			if d, err := DataOf[ContextCheckpointData](e); err == nil {
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
		if e.Type == TypeUserMessage {
			// A stateless client's own transcript, sent along with its message, is
			// history as much as stored turns are.
			// Only the items: projectOne decodes the text (which may be megabytes).
			if d, err := DataOf[struct {
				Items []json.RawMessage `json:"items"`
			}](e); err == nil && deleted == nil {
				out = append(out, ItemMessages(d.Items, e.Seq)...)
			} else if err == nil {
				for i, it := range d.Items {
					if !deleted[ItemPart{e.Seq, i}] {
						out = append(out, ItemMessages([]json.RawMessage{it}, e.Seq)...)
					}
				}
			}
		}
		if deleted[ItemPart{e.Seq, -1}] {
			continue
		}
		if e.Type == TypeConversationItem {
			out = append(out, ItemMessages([]json.RawMessage{e.Data}, e.Seq)...)
			continue
		}
		if m, ok := projectOne(e); ok {
			out = append(out, m)
		}
	}
	ToolNames{}.Name(out)
	return out
}

// deletedParts collects the parts item_deleted events among events remove. A deletion
// is applied to the events projected with it; readers that project a log in pieces
// start over at one (see HasDeletion).
func deletedParts(events []Event) map[ItemPart]bool {
	var out map[ItemPart]bool
	for _, e := range events {
		if e.Type != TypeItemDeleted {
			continue
		}
		d, err := DataOf[ItemDeletedData](e)
		if err != nil {
			continue
		}
		if out == nil {
			out = map[ItemPart]bool{}
		}
		for _, p := range d.Parts {
			out[p] = true
		}
	}
	return out
}

// HasDeletion reports whether events hold an item_deleted event.
func HasDeletion(events []Event) bool {
	for _, e := range events {
		if e.Type == TypeItemDeleted {
			return true
		}
	}
	return false
}

// ToolNames names tool results that arrived without a tool name (a client's
// function_call_output) after the call they answer, so a client-sent result and a stored
// one read the same. It maps call ids to tool names and carries the calls it has seen from
// one Name to the next: a history projected a turn at a time names a result whose call
// came in an earlier turn.
type ToolNames map[string]string

// Name names msgs' unnamed tool results in place and remembers msgs' tool calls.
func (n ToolNames) Name(msgs []Message) {
	for i, m := range msgs {
		switch {
		case m.Type == TypeToolCall && m.CallID != "":
			n[m.CallID] = m.Name
		case m.Type == TypeToolResult && m.Name == "" && m.CallID != "":
			msgs[i].Name = n[m.CallID]
		}
	}
}

// jsonString is s as a JSON string value.
func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a Go string always marshals
	return b
}

func projectOne(e Event) (Message, bool) {
	m := Message{Type: e.Type, Seq: e.Seq}
	switch e.Type {
	case TypeUserMessage:
		d, err := DataOf[UserMessageData](e)
		if err != nil {
			return m, false
		}
		m.Role, m.Content = "user", d.Text
		for _, b := range d.Content {
			if b.Type != "input_text" {
				m.Blocks = append(m.Blocks, b)
			}
		}
	case TypeAssistantMessage:
		d, err := DataOf[AssistantMessageData](e)
		if err != nil {
			return m, false
		}
		m.Role, m.Content = "assistant", d.Text
	case TypeToolCall:
		d, err := DataOf[ToolCallData](e)
		if err != nil {
			return m, false
		}
		m.Role = "assistant"
		m.Content = fmt.Sprintf("[tool_call] %s(%s)", d.Name, d.Arguments)
		m.CallID, m.Name, m.Arguments = d.CallID, d.Name, d.Arguments
	case TypeToolResult:
		d, err := DataOf[ToolResultData](e)
		if err != nil {
			return m, false
		}
		m.Role = "user"
		m.Content = fmt.Sprintf("[tool_result] %s: %s", d.Name, d.Output)
		m.CallID, m.Name, m.Output = d.CallID, d.Name, jsonString(d.Output)
	case TypeApprovalRequest:
		d, err := DataOf[ApprovalRequestData](e)
		if err != nil {
			return m, false
		}
		m.Role = "assistant"
		m.Content = fmt.Sprintf("[approval_request] %s(%s)", d.Name, d.Arguments)
		m.CallID, m.Name, m.Arguments = d.CallID, d.Name, d.Arguments
	case TypeApprovalResponse:
		d, err := DataOf[ApprovalResponseData](e)
		if err != nil {
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

// checkpointLookback is how many events before the latest checkpoint LoadHistory reads
// along with it. Compaction appends a boundary right before its checkpoint, so the
// uncovered events between the covered range and the checkpoint almost always fall in
// this window and history loads in one query.
const checkpointLookback = 4

// ItemMessages projects Responses-style input items a client sent as its own transcript
// (messages, function calls and their outputs) into history messages stamped with seq.
// Items of other kinds (approvals, reasoning, references) carry no history and are skipped.
func ItemMessages(items []json.RawMessage, seq int64) []Message {
	var out []Message
	for _, raw := range items {
		var it struct {
			Type      string          `json:"type"`
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			CallID    string          `json:"call_id"`
			Name      string          `json:"name"`
			Arguments string          `json:"arguments"`
			Output    json.RawMessage `json:"output"`
		}
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		m := Message{Seq: seq, Type: TypeUserMessage}
		switch {
		case (it.Type == "message" || it.Type == "") && (it.Role == "user" || it.Role == "assistant"):
			m.Role, m.Content = it.Role, contentText(it.Content)
			if it.Role == "assistant" {
				m.Type = TypeAssistantMessage
			}
		case it.Type == "function_call":
			m.Role, m.Type = "assistant", TypeToolCall
			m.Content = fmt.Sprintf("[tool_call] %s(%s)", it.Name, it.Arguments)
			m.CallID, m.Name, m.Arguments = it.CallID, it.Name, it.Arguments
		case it.Type == "function_call_output":
			m.Role, m.Type, m.CallID = "user", TypeToolResult, it.CallID
			m.Content = "[tool_result] " + contentText(it.Output)
			if len(it.Output) > 0 && string(it.Output) != "null" {
				m.Output = append(json.RawMessage(nil), it.Output...)
			}
		default:
			continue
		}
		out = append(out, m)
	}
	ToolNames{}.Name(out)
	return out
}

// contentText flattens a content value (a string, or parts carrying text) to text.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out string
	for _, p := range parts {
		if p.Text == "" {
			continue
		}
		if out != "" {
			out += "\n"
		}
		out += p.Text
	}
	return out
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
		after = max(0, sess.CheckpointSeq-1-checkpointLookback)
	}
	evs, err := st.Events(ctx, key, EventQuery{AfterSeq: after})
	if err != nil {
		return nil, sess, fmt.Errorf("read history: %w", err)
	}
	if sess.CheckpointSeq > 0 {
		evs, err = checkpointWindow(ctx, st, key, sess.CheckpointSeq, after, evs)
		if err != nil {
			return nil, sess, err
		}
	}
	return Project(evs), sess, nil
}

// checkpointWindow makes evs (read after seq after) start where the checkpoint at cpSeq
// needs: right after its covered range, reading the rest of an uncovered gap if the
// lookback fell short. Events the checkpoint covers are dropped by Project.
func checkpointWindow(ctx context.Context, st Store, key Key, cpSeq, after int64, evs []Event) ([]Event, error) {
	i := 0
	for i < len(evs) && evs[i].Seq < cpSeq {
		i++
	}
	var d ContextCheckpointData
	if i == len(evs) || evs[i].Type != TypeContextCheckpoint || json.Unmarshal(evs[i].Data, &d) != nil {
		// No usable checkpoint there: history starts at its seq.
		return evs[i:], nil
	}
	if d.UntilSeq >= after {
		return evs, nil
	}
	// Tail events between the covered range and the checkpoint still count.
	gap, err := st.Events(ctx, key, EventQuery{AfterSeq: d.UntilSeq, BeforeSeq: after + 1})
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	return append(gap, evs...), nil
}
