package langgraph

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/sse"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// Native event kinds the LangGraph bridge sends for this surface.
const (
	// nativeUpdates: one node's state update, {"ns": [...], "node": name, "update": {...}}.
	nativeUpdates = "langgraph.updates"
	// updatesFlag is the request metadata key (payload.metadata) asking the bridge for
	// nativeUpdates.
	updatesFlag = "langgraph_updates"
	// nativeCustom: what the graph wrote with get_stream_writer().
	nativeCustom = "custom"
	// nativePart: a part of a forwarded stream mode, {"mode", "ns": [...], "data"}.
	nativePart = "langgraph.part"
	// modesFlag is the request metadata key (comma-separated modes) asking the bridge for
	// the nativePart parts of those modes.
	modesFlag = "langgraph_modes"
	// inputFlag is the request metadata key passing the run's input keys other than
	// messages (a JSON object) to the bridge, which gives them to the graph.
	inputFlag = "langgraph_input"
)

// part is one SSE event of a run's stream.
type part struct {
	event string
	data  any
}

// encoder turns a run's journal into LangGraph stream parts for the requested modes.
type encoder struct {
	modes     map[string]bool
	subgraphs bool
	run       *host.Run
	values    *projector
	// texts accumulates streamed AI messages (messages mode's partials) by item id.
	texts map[string]string
	// streamed marks AI messages whose text came as deltas, and tool calls (by call id)
	// whose arguments did.
	streamed map[string]bool
	// interrupts already reported, by id.
	interrupts map[string]bool
	meta       map[string]any
}

func newEncoder(r *host.Run, modes []string, subgraphs bool) *encoder {
	e := &encoder{modes: map[string]bool{}, subgraphs: subgraphs, run: r, values: newProjector(),
		texts: map[string]string{}, streamed: map[string]bool{}, interrupts: map[string]bool{}}
	for _, m := range modes {
		e.modes[m] = true
	}
	e.meta = map[string]any{"run_id": r.InvocationID, "thread_id": r.Key.ID, "assistant_id": r.Agent,
		"graph_id": r.Agent, "user_id": r.Key.User}
	return e
}

// add returns the parts of one journal event; done is set on the run's terminal event.
func (e *encoder) add(ev host.Event) (out []part, done bool) {
	switch ev.Kind {
	case host.KindTextDelta:
		e.streamed[ev.ItemID] = true
		if e.modes["messages-tuple"] {
			out = append(out, part{"messages", []any{aiChunk(ev.ItemID, ev.Text, nil), e.meta}})
		}
		if e.modes["messages"] {
			if _, seen := e.texts[ev.ItemID]; !seen {
				out = append(out, part{"messages/metadata", map[string]any{ev.ItemID: map[string]any{"metadata": e.meta}}})
			}
			e.texts[ev.ItemID] += ev.Text
			out = append(out, part{"messages/partial", []any{aiMessage(ev.ItemID, e.texts[ev.ItemID])}}) // the message so far, as an AIMessage
		}
	case host.KindToolArgsDelta:
		e.streamed[ev.CallID] = true
		if e.modes["messages-tuple"] {
			chunk := map[string]any{"name": nullable(ev.Name), "args": ev.Text, "id": ev.CallID, "index": 0, "type": "tool_call_chunk"}
			out = append(out, part{"messages", []any{aiChunk(ev.ItemID, "", []any{chunk}), e.meta}})
		}
	case host.KindNative:
		out = e.native(ev)
	case host.KindStored:
		return e.stored(ev.Stored)
	case host.KindReasoningDelta:
		// LangGraph's messages carry no reasoning apart from the model's own content.
	}
	return out, false
}

func (e *encoder) native(ev host.Event) []part {
	switch ev.Name {
	case nativeUpdates:
		if !e.modes["updates"] {
			return nil
		}
		var u struct {
			NS     []string        `json:"ns"`
			Node   string          `json:"node"`
			Update json.RawMessage `json:"update"`
		}
		if json.Unmarshal([]byte(ev.Text), &u) != nil || u.Node == "" {
			return nil
		}
		name := "updates"
		if len(u.NS) > 0 {
			if !e.subgraphs {
				return nil
			}
			name += "|" + strings.Join(u.NS, "|")
		}
		return []part{{name, map[string]json.RawMessage{u.Node: u.Update}}}
	case nativeCustom:
		if e.modes["custom"] && json.Valid([]byte(ev.Text)) {
			return []part{{"custom", json.RawMessage(ev.Text)}}
		}
	case nativePart:
		var p struct {
			Mode string          `json:"mode"`
			NS   []string        `json:"ns"`
			Data json.RawMessage `json:"data"`
		}
		if json.Unmarshal([]byte(ev.Text), &p) != nil || !e.modes[p.Mode] || !contains(forwardedModes, p.Mode) || len(p.Data) == 0 {
			return nil
		}
		name := p.Mode
		if len(p.NS) > 0 {
			if !e.subgraphs {
				return nil
			}
			name += "|" + strings.Join(p.NS, "|")
		}
		return []part{{name, p.Data}}
	}
	return nil
}

func (e *encoder) stored(s *session.Event) (out []part, done bool) {
	changed := e.values.add(s)
	switch s.Type {
	case session.TypeAssistantMessage:
		if d, err := session.DataOf[session.AssistantMessageData](*s); err == nil {
			if e.modes["messages-tuple"] && !e.streamed[s.ItemID] {
				out = append(out, part{"messages", []any{aiChunk(s.ItemID, d.Text, nil), e.meta}})
			}
			if e.modes["messages"] {
				if _, seen := e.texts[s.ItemID]; !seen {
					out = append(out, part{"messages/metadata", map[string]any{s.ItemID: map[string]any{"metadata": e.meta}}})
				}
				out = append(out, part{"messages/complete", []any{aiMessage(s.ItemID, d.Text)}})
			}
		}
	case session.TypeToolCall:
		// A call whose arguments did not stream (a run read back from the store) comes as
		// one chunk.
		if d, err := session.DataOf[session.ToolCallData](*s); err == nil && e.modes["messages-tuple"] && !e.streamed[d.CallID] {
			chunk := map[string]any{"name": d.Name, "args": d.Arguments, "id": d.CallID, "index": 0, "type": "tool_call_chunk"}
			out = append(out, part{"messages", []any{aiChunk(e.values.msgs[e.values.lastAI]["id"].(string), "", []any{chunk}), e.meta}})
		}
	case session.TypeToolResult:
		if (e.modes["messages-tuple"] || e.modes["messages"]) && changed {
			msg := e.values.msgs[len(e.values.msgs)-1]
			if e.modes["messages-tuple"] {
				out = append(out, part{"messages", []any{msg, e.meta}})
			}
			if e.modes["messages"] {
				out = append(out, part{"messages/complete", []any{msg}})
			}
		}
	case session.TypeApprovalRequest:
		// An interrupt is an update, and LangGraph's server ends a paused run's values with
		// the thread's values and its interrupts (useStream reads them there).
		ints, _, _ := interruptsOf(e.run.InvocationID, []*session.Event{s})
		var fresh []interrupt
		for _, in := range ints {
			if !e.interrupts[in.ID] {
				e.interrupts[in.ID] = true
				fresh = append(fresh, in)
			}
		}
		if len(fresh) > 0 && e.modes["updates"] {
			for _, in := range fresh {
				out = append(out, part{"updates", map[string]any{"__interrupt__": []interrupt{in}}})
			}
		}
		if len(fresh) > 0 && e.modes["values"] {
			v := e.values.values()
			v["__interrupt__"] = fresh
			out = append(out, part{"values", v})
		}
	case session.TypeRunStatus:
		status := host.RunStatusOf(s)
		if !session.IsTerminalStatus(status) {
			break
		}
		if status == session.StatusFailed {
			d, _ := session.DataOf[session.RunStatusData](*s)
			msg, code := "the run failed", "RunError"
			if d.Error != nil {
				msg, code = d.Error.Message, d.Error.Code
			}
			return append(out, part{"error", map[string]any{"error": code, "message": msg}}), true
		}
		return out, true
	}
	if changed && e.modes["values"] {
		out = append(out, part{"values", e.values.values()})
	}
	return out, false
}

// stream writes a run's stream: "metadata" first, then the parts of each journal event
// (the stream ends after the run's last one, with an "error" part when it failed),
// each with the event's journal index as its SSE id (a reconnecting client sends the last
// one as Last-Event-ID and gets what came after it). Events up to after are folded into
// the encoder's state but not sent. The thread's earlier messages are read first, so that
// values start from the thread's state.
func (h *Handler) stream(c *gin.Context, r *host.Run, modes []string, subgraphs bool, after int, cancelOnDisconnect bool) {
	ctx := c.Request.Context()
	enc := newEncoder(r, modes, subgraphs)
	sub := r.Subscribe(0)
	w := sse.Start(c)
	if after < 0 {
		b, _ := json.Marshal(map[string]any{"run_id": r.InvocationID, "attempt": 1})
		_ = w.Event("", "metadata", b)
	}
	primed := false
	finished := false
	err := sse.Follow(ctx, sub, w, h.keepAlive, "heartbeat", func(ev host.Event) error {
		if finished {
			return nil
		}
		if !primed && ev.Kind == host.KindStored {
			primed = true
			if e := h.prior(ctx, r, []host.Event{ev}, enc.values); e != nil {
				return e
			}
		}
		parts, done := enc.add(ev)
		if done {
			finished = true
		}
		if ev.Index <= after {
			return nil
		}
		id := strconv.Itoa(ev.Index)
		for _, p := range parts {
			b, err := json.Marshal(p.data)
			if err != nil {
				return err
			}
			if err := w.Event(id, p.event, b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && ctx.Err() != nil && cancelOnDisconnect {
		select {
		case <-r.Done():
		default:
			cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			if cerr := h.rt.Cancel(cctx, r.Key, r.InvocationID); cerr != nil && !errors.Is(cerr, host.ErrRunNotActive) {
				h.log.Warn("could not cancel a run whose client went away", "run", r.InvocationID, "error", cerr)
			}
			cancel()
		}
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		h.log.Debug("run stream ended early", "run", r.InvocationID, "error", err)
	}
}
