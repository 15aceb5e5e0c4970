package adkweb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentengine/agentengine/session"
)

// importedEvent is the part of an ADK event a session import reads: its content and
// state delta become stored items, its own fields (author, usage, ...) their meta.
type importedEvent struct {
	Author       string   `json:"author"`
	InvocationID string   `json:"invocationId"`
	Timestamp    *float64 `json:"timestamp"`
	Partial      bool     `json:"partial"`
	Content      *struct {
		Role  string            `json:"role"`
		Parts []json.RawMessage `json:"parts"`
	} `json:"content"`
	Actions struct {
		StateDelta json.RawMessage `json:"stateDelta"`
	} `json:"actions"`
}

// importPart is a genai Part as an import reads it.
type importPart struct {
	Text             *string           `json:"text"`
	Thought          bool              `json:"thought"`
	InlineData       *Blob             `json:"inlineData"`
	FileData         *FileData         `json:"fileData"`
	FunctionCall     *FunctionCall     `json:"functionCall"`
	FunctionResponse *FunctionResponse `json:"functionResponse"`
}

// importEvents maps the events of an ADK session (as ADK's dev UI exports it) onto
// stored items of the session, agent is the app's own name for items without an author.
// Partial events are left out (ADK does not keep them either).
func importEvents(raw []json.RawMessage, agent string) ([]session.NewEvent, *httpError) {
	var out []session.NewEvent
	for i, r := range raw {
		loc := []any{"body", "events", i}
		if !isObject(r) {
			return nil, invalid("model_type", loc, "Input should be a valid dictionary or object to extract fields from")
		}
		var ev importedEvent
		if err := json.Unmarshal(r, &ev); err != nil {
			return nil, invalid("model_attributes_type", loc, "Input should be a valid event: %v", err)
		}
		if ev.Partial {
			continue
		}
		inv := ev.InvocationID
		if inv == "" {
			inv = "import-" + strconv.Itoa(i)
		}
		at := time.Time{}
		if ev.Timestamp != nil && *ev.Timestamp > 0 && !math.IsInf(*ev.Timestamp, 0) {
			sec, frac := math.Modf(*ev.Timestamp)
			at = time.Unix(int64(sec), int64(frac*1e9)).UTC()
		}
		var meta json.RawMessage
		if ev.Author != "user" {
			var m eventMeta
			_ = json.Unmarshal(r, &m) // the same JSON: its known fields
			meta = mustJSON(m)
		}
		items, aerr := importItems(ev, meta, loc)
		if aerr != nil {
			return nil, aerr
		}
		author := ev.Author
		if author != "user" {
			author = agent
		}
		if d := bytes.TrimSpace(ev.Actions.StateDelta); isObject(d) && !bytes.Equal(d, []byte("{}")) {
			items = append(items, session.NewEvent{Type: session.TypeStateDelta, Data: d, StateDelta: d})
		}
		for k := range items {
			items[k].InvocationID, items[k].Author, items[k].Time = inv, author, at
		}
		out = append(out, items...)
	}
	return out, nil
}

// importItems maps one event's content: the user's text and files to a user message
// (function responses to its function_call_output items); the agent's text, thoughts,
// calls and responses to messages, reasoning, tool calls and tool results with meta.
func importItems(ev importedEvent, meta json.RawMessage, loc []any) ([]session.NewEvent, *httpError) {
	if ev.Content == nil {
		return nil, nil
	}
	var (
		items   []session.NewEvent
		text    strings.Builder
		thought strings.Builder
		blocks  []session.ContentBlock
		outputs []json.RawMessage
	)
	data := func(v any) json.RawMessage {
		d := session.MustJSON(v)
		if meta == nil {
			return d
		}
		var m map[string]json.RawMessage
		_ = json.Unmarshal(d, &m)
		m["meta"] = meta
		return session.MustJSON(m)
	}
	for j, rp := range ev.Content.Parts {
		var p importPart
		if err := json.Unmarshal(rp, &p); err != nil {
			return nil, invalid("model_attributes_type", append(loc, "content", "parts", j), "Input should be a valid part: %v", err)
		}
		switch {
		case p.Text != nil && p.Thought:
			thought.WriteString(*p.Text)
		case p.Text != nil:
			text.WriteString(*p.Text)
			blocks = append(blocks, session.ContentBlock{Type: "input_text", Text: *p.Text})
		case p.InlineData != nil && ev.Author == "user":
			url := "data:" + p.InlineData.MimeType + ";base64," + p.InlineData.Data
			if strings.HasPrefix(p.InlineData.MimeType, "image/") {
				blocks = append(blocks, session.ContentBlock{Type: "input_image", ImageURL: url, Filename: p.InlineData.DisplayName})
			} else {
				blocks = append(blocks, session.ContentBlock{Type: "input_file", FileData: url, Filename: p.InlineData.DisplayName})
			}
		case p.FileData != nil && ev.Author == "user":
			blocks = append(blocks, session.ContentBlock{Type: "input_file", FileURL: p.FileData.FileURI, Filename: p.FileData.DisplayName})
		case p.FunctionCall != nil && ev.Author != "user":
			args := p.FunctionCall.Args
			if len(args) == 0 || string(args) == "null" {
				args = emptyObject()
			}
			items = append(items, session.NewEvent{Type: session.TypeToolCall,
				Data: data(session.ToolCallData{CallID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Arguments: string(args)})})
		case p.FunctionResponse != nil && ev.Author != "user":
			out, isErr := responseOutput(p.FunctionResponse.Response)
			items = append(items, session.NewEvent{Type: session.TypeToolResult,
				Data: data(session.ToolResultData{CallID: p.FunctionResponse.ID, Name: p.FunctionResponse.Name, Output: out, IsError: isErr})})
		case p.FunctionResponse != nil:
			out, _ := responseOutput(p.FunctionResponse.Response)
			outputs = append(outputs, mustJSON(map[string]string{"type": "function_call_output", "call_id": p.FunctionResponse.ID, "output": out}))
		default:
			return nil, detail(http.StatusBadRequest, "event %v, part %d: this kind of part cannot be imported", loc[2], j)
		}
	}
	if ev.Author == "user" {
		if len(blocks) == 0 && len(outputs) == 0 {
			return nil, nil
		}
		d := session.NewUserMessageData(text.String(), blocks)
		d.Items = outputs
		return []session.NewEvent{{Type: session.TypeUserMessage, Data: session.MustJSON(d)}}, nil
	}
	var lead []session.NewEvent
	if thought.Len() > 0 {
		lead = append(lead, session.NewEvent{Type: session.TypeReasoning, Data: data(session.ReasoningData{Text: thought.String()})})
	}
	if text.Len() > 0 {
		lead = append(lead, session.NewEvent{Type: session.TypeAssistantMessage, Data: data(session.AssistantMessageData{Text: text.String()})})
	}
	return append(lead, items...), nil
}

// responseOutput is a function response as a tool result's output: its JSON, and
// whether it is ADK's error shape ({"error": ...} alone).
func responseOutput(resp json.RawMessage) (string, bool) {
	if len(resp) == 0 || string(resp) == "null" {
		return "{}", false
	}
	var m map[string]json.RawMessage
	isErr := json.Unmarshal(resp, &m) == nil && len(m) == 1 && m["error"] != nil
	var b bytes.Buffer
	if json.Compact(&b, resp) != nil {
		return string(resp), isErr
	}
	return b.String(), isErr
}

// importedEventsOf reads a create-session body's events (nil if none).
func importedEventsOf(raw json.RawMessage, name string, o object) ([]json.RawMessage, *httpError) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, invalid("list_type", o.at(name), "Input should be a valid list")
	}
	if len(list) > maxImportedEvents {
		return nil, detail(http.StatusRequestEntityTooLarge, "%s", fmt.Sprintf("a session import holds at most %d events", maxImportedEvents))
	}
	return list, nil
}

// maxImportedEvents bounds one import (the body limit bounds its size).
const maxImportedEvents = 10000
