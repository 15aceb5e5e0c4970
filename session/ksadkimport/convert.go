// Package ksadkimport converts the sessions KsADK (Kingsoft Cloud's Python agent runtime)
// stored into agentengine's events and runs. It is pure: the stores read KsADK's rows, hand
// them here, and write what comes back in their own migration.
package ksadkimport

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/agentengine/agentengine/session"
)

// Session is a row of KsADK's ksadk_sessions table (columns an older KsADK lacked are zero).
type Session struct {
	ID, Agent, User, Title, TitleSource, FirstPrompt, LastPrompt string
	State                                                        string  // state_json
	Created, Updated                                             float64 // Unix seconds
}

// SourceEvent is a row of KsADK's ksadk_events table.
type SourceEvent struct {
	Author, Type, Content, Invocation, Metadata string
	Seq                                         int64
	Time                                        float64 // Unix seconds
}

// DefaultUser is the user of a session KsADK stored without one (KsADK's and agentengine's default).
const DefaultUser = "user"

// Renamed reports whether KsADK's title source means the user named the session.
func Renamed(titleSource string) bool {
	return titleSource == "user" || titleSource == "manual" || titleSource == "rename"
}

// State is KsADK's session state without its own bookkeeping (active_run) and
// without keys agentengine never persists.
func State(js string) string {
	var m map[string]any
	if json.Unmarshal([]byte(js), &m) != nil || m == nil {
		return "{}"
	}
	delete(m, "active_run")
	for k := range m {
		if strings.HasPrefix(k, session.TierTempPrefix) {
			delete(m, k)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "{}"
	}
	return string(b)
}

func Time(sec float64) int64 {
	if sec <= 0 || math.IsNaN(sec) || math.IsInf(sec, 0) {
		return 0
	}
	return int64(sec * 1e9)
}

// Event is one event in agentengine's shape, in log order (its seq is its index + 1).
type Event struct {
	Invocation, Type, Author string
	Data                     json.RawMessage
	Time                     int64 // Unix nanoseconds
}

// Conversation is a KsADK session's transcript converted to agentengine's events and runs.
type Conversation struct {
	Events         []Event
	CheckpointSeq  int64               // seq of the latest context checkpoint, 0 if none
	Invocations    []string            // in first-seen order
	RunStatus      map[string]string   // invocation -> agentengine terminal status
	RunTimes       map[string][2]int64 // invocation -> first, last event time
	LastInvocation string
}

// Convert keeps the transcript (user and assistant messages, reasoning,
// tools, run status, compaction) in agentengine's event shapes and drops KsADK's
// streaming detail (snapshots, per-delta runtime events), which the backup keeps.
func Convert(evs []SourceEvent, sessionCreated float64) Conversation {
	c := Conversation{RunStatus: map[string]string{}, RunTimes: map[string][2]int64{}}
	seqMap := make([]struct{ old, new int64 }, 0, len(evs))
	lastTime := Time(sessionCreated)
	add := func(e SourceEvent, typ string, data any) {
		t := Time(e.Time)
		if t < lastTime {
			t = lastTime // seq order is the truth; times only need to agree with it
		}
		lastTime = t
		c.Events = append(c.Events, Event{Invocation: e.Invocation, Type: typ, Author: e.Author, Data: session.MustJSON(data), Time: t})
		seqMap = append(seqMap, struct{ old, new int64 }{e.Seq, int64(len(c.Events))})
		if e.Invocation != "" {
			rt, seen := c.RunTimes[e.Invocation]
			if !seen {
				c.Invocations = append(c.Invocations, e.Invocation)
				rt[0] = t
			}
			rt[1] = t
			c.RunTimes[e.Invocation] = rt
			c.LastInvocation = e.Invocation
		}
	}
	newSeq := func(old int64) int64 {
		var n int64
		for _, m := range seqMap {
			if m.old <= old {
				n = m.new
			}
		}
		return n
	}
	toolNames := map[string]string{} // call id -> tool name, for results
	for _, e := range evs {
		content := jsonObject(e.Content)
		meta := jsonObject(e.Metadata)
		switch e.Type {
		case session.TypeUserMessage:
			text := partsText(content["parts"])
			if text == "" {
				text = str(meta["agent_input"])
			}
			d := session.UserMessageData{Text: text, Instructions: str(meta["instructions"])}
			if text != "" {
				d.Content = []session.ContentBlock{{Type: "input_text", Text: text}}
			}
			add(e, session.TypeUserMessage, d)
		case session.TypeAssistantMessage:
			add(e, session.TypeAssistantMessage, session.AssistantMessageData{Text: partsText(content["parts"])})
		case "item.completed":
			// KsADK 0.8 writes the final text of a turn only as runtime events.
			re := jsonObject(content["runtime_event"])
			text := partsText(jsonObject(re["snapshot"])["parts"])
			switch str(re["item_kind"]) {
			case "message":
				if text != "" {
					add(e, session.TypeAssistantMessage, session.AssistantMessageData{Text: text})
				}
			case "reasoning":
				if text != "" {
					add(e, session.TypeReasoning, session.ReasoningData{Text: text})
				}
			case "tool_call", "tool_result":
				for _, p := range partsOf(jsonObject(re["snapshot"])["parts"]) {
					switch str(p["content_type"]) {
					case "tool_call":
						args, err := json.Marshal(p["arguments"])
						if err != nil || p["arguments"] == nil {
							args = []byte("{}")
						}
						if s, ok := p["arguments"].(string); ok {
							args = []byte(s)
						}
						callID, name := str(p["call_id"]), str(p["name"])
						toolNames[callID] = name
						add(e, session.TypeToolCall, session.ToolCallData{CallID: callID, Name: name, Arguments: string(args)})
					case "tool_result":
						callID := str(p["call_id"])
						isErr, _ := p["is_error"].(bool)
						add(e, session.TypeToolResult, session.ToolResultData{CallID: callID, Name: toolNames[callID], Output: str(p["result"]), IsError: isErr})
					}
				}
			}
		case session.TypeReasoning:
			text := str(meta["reasoning"])
			if text == "" {
				text = partsText(content["parts"])
			}
			add(e, session.TypeReasoning, session.ReasoningData{Text: text})
		case session.TypeToolCall:
			args, err := json.Marshal(meta["tool_args"])
			if err != nil || meta["tool_args"] == nil {
				args = []byte("{}")
			}
			name := str(meta["tool_name"])
			if name == "" {
				name = partsText(content["parts"])
			}
			toolNames[callID(meta)] = name
			add(e, session.TypeToolCall, session.ToolCallData{CallID: callID(meta), Name: name, Arguments: string(args)})
		case session.TypeToolResult:
			out := partsText(content["parts"])
			if out == "" && meta["tool_output"] != nil {
				out = str(meta["tool_output"])
			}
			add(e, session.TypeToolResult, session.ToolResultData{CallID: callID(meta), Name: str(meta["tool_name"]), Output: out})
		case session.TypeRunStatus:
			status := runStatus(str(content["status"]))
			if status == "" {
				continue // checkpointed and other non-run states
			}
			d := session.RunStatusData{Status: status}
			if status == session.StatusFailed {
				msg := str(content["detail"])
				if msg == "" {
					msg = "the run failed"
				}
				d.Error = &session.RunError{Code: "server_error", Message: msg}
			}
			add(e, session.TypeRunStatus, d)
			if e.Invocation != "" {
				c.RunStatus[e.Invocation] = status
			}
		case session.TypeContextCheckpoint:
			until := newSeq(int64(num(meta["compacted_until_seq_id"])))
			add(e, session.TypeContextCheckpoint, session.ContextCheckpointData{Summary: partsText(content["parts"]), FromSeq: 1, UntilSeq: until})
			c.CheckpointSeq = int64(len(c.Events))
		case session.TypeCompactionBound:
			add(e, session.TypeCompactionBound, session.CompactionBoundaryData{CompactedUntilSeq: newSeq(int64(num(content["compacted_until_seq_id"])))})
		}
	}
	// A run KsADK left unfinished cannot continue here: it ends interrupted, as runs
	// orphaned by a restart do.
	for _, inv := range c.Invocations {
		st := c.RunStatus[inv]
		if session.IsTerminalStatus(st) {
			continue
		}
		last := SourceEvent{Invocation: inv, Author: "agentengine"}
		add(last, session.TypeRunStatus, session.RunStatusData{Status: session.StatusInterrupted})
		c.RunStatus[inv] = session.StatusInterrupted
	}
	return c
}

// runStatus maps KsADK's run_status values to agentengine's; "" for states that are
// not a run's status.
func runStatus(s string) string {
	switch s {
	case "in_progress", "running", "resuming", "starting":
		return session.StatusInProgress
	case "completed":
		return session.StatusCompleted
	case "failed", "error", "resume_failed":
		return session.StatusFailed
	case "cancelled", "canceled", "aborted":
		return session.StatusCancelled
	case "interrupted":
		return session.StatusInterrupted
	}
	return ""
}

func callID(meta map[string]any) string {
	for _, k := range []string{"tool_call_id", "call_id", "run_id"} {
		if s := str(meta[k]); s != "" {
			return s
		}
	}
	return ""
}

func jsonObject(v any) map[string]any {
	switch t := v.(type) {
	case map[string]any:
		return t
	case string:
		var m map[string]any
		if json.Unmarshal([]byte(t), &m) == nil {
			return m
		}
	}
	return nil
}

func partsOf(v any) []map[string]any {
	parts, _ := v.([]any)
	out := make([]map[string]any, 0, len(parts))
	for _, p := range parts {
		if m, ok := p.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// partsText joins the text of content parts ({text} or {type:"...text", text}).
func partsText(v any) string {
	parts, _ := v.([]any)
	var texts []string
	for _, p := range parts {
		m, _ := p.(map[string]any)
		if t, ok := m["text"].(string); ok && t != "" {
			texts = append(texts, t)
		}
	}
	return strings.Join(texts, "")
}

func str(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return ""
		}
		return string(b)
	}
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}
