package langgraph

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/agentengine/agentengine/session"
)

// A thread's values are projected from the session's stored events: the conversation as
// LangChain messages ({"messages": [...]}, in the shape BaseMessage.model_dump gives),
// with the host's item ids as message ids, so that a run's streamed messages, its values
// and the thread's state name each message the same.

// message is one LangChain message as a JSON object.
type message = map[string]any

// projector folds stored events into messages.
type projector struct {
	msgs []message
	// lastAI is the index of the AI message tool calls of the same step attach to (-1:
	// none): an assistant message and the calls it makes are one AIMessage.
	lastAI  int
	lastInv string
	// channels are the graph's other state channels at the latest run's end that the
	// LangGraph bridge reported (valuesKey).
	channels map[string]any
	// ids names the message each event added to or extended, by event seq.
	ids map[int64]string
}

// valuesKey is the session-state key the LangGraph bridge puts a run's final state under,
// every channel but messages.
const valuesKey = "langgraph_values"

func newProjector() *projector { return &projector{lastAI: -1} }

// add folds e in and reports whether the messages changed.
func (p *projector) add(e *session.Event) bool {
	switch e.Type {
	case session.TypeUserMessage:
		d, err := session.DataOf[session.UserMessageData](*e)
		if err != nil {
			return false
		}
		if d.Text == "" && len(d.Content) == 0 {
			return false // a resume turn's opening carries no message
		}
		id := itemID(e)
		if given := d.Metadata[messageIDKey]; given != "" {
			id = given
		}
		p.msgs = append(p.msgs, humanMessage(id, d))
		p.note(e.Seq, id)
		p.lastAI = -1
		return true
	case session.TypeAssistantMessage:
		d, err := session.DataOf[session.AssistantMessageData](*e)
		if err != nil {
			return false
		}
		p.msgs = append(p.msgs, aiMessage(itemID(e), d.Text))
		p.note(e.Seq, itemID(e))
		p.lastAI, p.lastInv = len(p.msgs)-1, e.InvocationID
		return true
	case session.TypeToolCall:
		d, err := session.DataOf[session.ToolCallData](*e)
		if err != nil {
			return false
		}
		if p.lastAI < 0 || p.lastInv != e.InvocationID {
			p.msgs = append(p.msgs, aiMessage(itemID(e), ""))
			p.lastAI, p.lastInv = len(p.msgs)-1, e.InvocationID
		}
		m := p.msgs[p.lastAI]
		m["tool_calls"] = append(m["tool_calls"].([]any), toolCall(d))
		p.note(e.Seq, m["id"].(string))
		return true
	case session.TypeToolResult:
		d, err := session.DataOf[session.ToolResultData](*e)
		if err != nil {
			return false
		}
		p.msgs = append(p.msgs, toolMessage(itemID(e), d))
		p.note(e.Seq, itemID(e))
		p.lastAI = -1
		return true
	case session.TypeItemDeleted:
		return p.drop(e)
	case session.TypeStateDelta:
		var delta map[string]json.RawMessage
		if json.Unmarshal(e.Data, &delta) != nil {
			return false
		}
		raw, ok := delta[valuesKey]
		if !ok {
			return false
		}
		var ch map[string]any
		_ = json.Unmarshal(raw, &ch) // null (a cleared key) or not an object: no channels
		// A run's end reports the channels it left, often the ones already known: that
		// changes no values (a values part for it would repeat the last one).
		same := len(ch) == 0 && len(p.channels) == 0 || reflect.DeepEqual(ch, p.channels)
		p.channels = ch
		return !same
	}
	return false
}

// note records that the event at seq made the message with that id.
func (p *projector) note(seq int64, id string) {
	if p.ids == nil {
		p.ids = map[int64]string{}
	}
	p.ids[seq] = id
}

// drop removes the messages an item deletion names (a fork's: from here on).
func (p *projector) drop(e *session.Event) bool {
	d, err := session.DataOf[session.ItemDeletedData](*e)
	if err != nil {
		return false
	}
	gone := map[string]bool{}
	for _, part := range d.Parts {
		if id, ok := p.ids[part.Seq]; ok && part.Index < 0 {
			gone[id] = true
		}
	}
	if len(gone) == 0 {
		return false
	}
	kept := p.msgs[:0]
	for _, m := range p.msgs {
		if id, _ := m["id"].(string); !gone[id] {
			kept = append(kept, m)
		}
	}
	p.msgs, p.lastAI = kept, -1
	return true
}

// values returns the projected values (fresh containers: callers may encode them later):
// the graph's reported channels and the messages.
func (p *projector) values() map[string]any {
	out := make(map[string]any, len(p.channels)+1)
	for k, v := range p.channels {
		out[k] = v
	}
	out["messages"] = append([]message(nil), p.msgs...)
	return out
}

func itemID(e *session.Event) string {
	if e.ItemID != "" {
		return e.ItemID
	}
	return fmt.Sprintf("%s_%d", e.Type, e.Seq)
}

func humanMessage(id string, d session.UserMessageData) message {
	var content any = d.Text
	if hasNonText(d.Content) {
		var blocks []any
		for _, b := range d.Content {
			switch b.Type {
			case "input_text":
				blocks = append(blocks, map[string]any{"type": "text", "text": b.Text})
			case "input_image":
				blocks = append(blocks, map[string]any{"type": "image_url", "image_url": map[string]any{"url": b.ImageURL}})
			}
		}
		content = blocks
	}
	return message{"content": content, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
		"type": "human", "name": nil, "id": id}
}

func hasNonText(blocks []session.ContentBlock) bool {
	for _, b := range blocks {
		if b.Type != "input_text" {
			return true
		}
	}
	return false
}

func aiMessage(id, text string) message {
	return message{"content": text, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
		"type": "ai", "name": nil, "id": id, "tool_calls": []any{}, "invalid_tool_calls": []any{},
		"usage_metadata": nil}
}

// aiChunk is a piece of an AI message as LangGraph's messages stream sends it.
func aiChunk(id, text string, calls []any) message {
	if calls == nil {
		calls = []any{}
	}
	return message{"content": text, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
		"type": "AIMessageChunk", "name": nil, "id": id, "tool_calls": []any{},
		"invalid_tool_calls": []any{}, "usage_metadata": nil, "tool_call_chunks": calls, "chunk_position": nil}
}

func toolCall(d session.ToolCallData) map[string]any {
	var args any = map[string]any{}
	if d.Arguments != "" {
		var v any
		if json.Unmarshal([]byte(d.Arguments), &v) == nil {
			args = v
		}
	}
	return map[string]any{"name": d.Name, "args": args, "id": d.CallID, "type": "tool_call"}
}

func toolMessage(id string, d session.ToolResultData) message {
	status := "success"
	if d.IsError {
		status = "error"
	}
	return message{"content": d.Output, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{},
		"type": "tool", "name": nullable(d.Name), "id": id, "tool_call_id": d.CallID, "artifact": nil, "status": status}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
