package langgraph

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"strings"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// runCreate is the body of every run-creating route (RunCreateStateful and
// RunCreateStateless of LangGraph's API).
type runCreate struct {
	AssistantID       string          `json:"assistant_id"`
	Input             json.RawMessage `json:"input"`
	Command           *command        `json:"command"`
	StreamMode        json.RawMessage `json:"stream_mode"`
	StreamSubgraphs   bool            `json:"stream_subgraphs"`
	StreamResumable   bool            `json:"stream_resumable"`
	Config            map[string]any  `json:"config"`
	Context           map[string]any  `json:"context"`
	Metadata          map[string]any  `json:"metadata"`
	MultitaskStrategy string          `json:"multitask_strategy"`
	IfNotExists       string          `json:"if_not_exists"`
	OnDisconnect      string          `json:"on_disconnect"`
	OnCompletion      string          `json:"on_completion"`
	InterruptBefore   json.RawMessage `json:"interrupt_before"`
	InterruptAfter    json.RawMessage `json:"interrupt_after"`
	Checkpoint        json.RawMessage `json:"checkpoint"`
	CheckpointID      string          `json:"checkpoint_id"`
	Webhook           string          `json:"webhook"`
	AfterSeconds      float64         `json:"after_seconds"`
}

// command is LangGraph's Command: resume answers the pending interrupts; update (state
// values, written before the graph goes on) and goto (the nodes to go to) come with it.
type command struct {
	Resume json.RawMessage `json:"resume"`
	Update json.RawMessage `json:"update"`
	Goto   json.RawMessage `json:"goto"`
}

// Stream modes served; the others LangGraph defines are refused (the runner does not
// forward what they need).
var servedModes = map[string]bool{"values": true, "updates": true, "messages": true, "messages-tuple": true, "custom": true,
	"tasks": true, "checkpoints": true, "debug": true, "events": true}

// forwardedModes are the served modes whose parts the LangGraph bridge sends as they are
// (nativePart), only for runs that ask (modesFlag): they cost an encoding of each step.
var forwardedModes = []string{"tasks", "checkpoints", "debug", "events"}

// validate checks what the request asks for that is not offered, before anything runs.
func (r *runCreate) validate() *apiError {
	if r.AssistantID == "" {
		return invalid("assistant_id is required")
	}
	for name, raw := range map[string]json.RawMessage{"interrupt_before": r.InterruptBefore, "interrupt_after": r.InterruptAfter} {
		if present(raw) && !validBreakpoints(raw) {
			return invalid("%s must be \"*\" or a list of node names", name)
		}
	}
	if _, e := r.fromCheckpoint(); e != nil {
		return e
	}
	if c, ok := r.Config["configurable"]; ok && c != nil {
		if _, ok := c.(map[string]any); !ok {
			return invalid("config.configurable must be an object")
		}
	}
	if r.Webhook != "" {
		return invalid("webhooks are not offered")
	}
	if r.AfterSeconds > 0 {
		return invalid("after_seconds is not offered")
	}
	hasResume := r.Command != nil && present(r.Command.Resume)
	if r.Command != nil && (present(r.Command.Update) || present(r.Command.Goto)) && !hasResume {
		return invalid("command.update and command.goto are offered with command.resume only (resuming an interrupted thread)")
	}
	if hasResume {
		// LangGraph's server runs the command and ignores input beside it (useStream sends
		// "input": {} with every resume).
		r.Input = nil
	}
	// Neither input nor command goes on from a breakpoint (checked with the thread).
	switch r.MultitaskStrategy {
	case "", "reject", "interrupt", "rollback", "enqueue":
	default:
		return invalid("multitask_strategy must be reject, interrupt, rollback or enqueue")
	}
	switch r.IfNotExists {
	case "", "reject", "create":
	default:
		return invalid("if_not_exists must be reject or create")
	}
	switch r.OnDisconnect {
	case "", "cancel", "continue":
	default:
		return invalid("on_disconnect must be cancel or continue")
	}
	switch r.OnCompletion {
	case "", "delete", "keep":
	default:
		return invalid("on_completion must be delete or keep")
	}
	_, e := r.modes()
	return e
}

// validBreakpoints reports whether raw is LangGraph's interrupt_before/after: "*" or a
// non-empty list of node names.
func validBreakpoints(raw json.RawMessage) bool {
	var all string
	if json.Unmarshal(raw, &all) == nil {
		return all == "*"
	}
	var nodes []string
	if json.Unmarshal(raw, &nodes) != nil || len(nodes) == 0 {
		return false
	}
	for _, n := range nodes {
		if n == "" {
			return false
		}
	}
	return true
}

// breakpointFlags are the request metadata keys passing a run's breakpoints to the bridge.
var breakpointFlags = [2]string{"langgraph_interrupt_before", "langgraph_interrupt_after"}

// configurableFlag and contextFlag are the request metadata keys passing a run's
// config.configurable and context (JSON objects) to the bridge.
const (
	configurableFlag = "langgraph_configurable"
	contextFlag      = "langgraph_context"
)

// fromCheckpoint returns the checkpoint the run starts from (checkpoint_id, or
// checkpoint.checkpoint_id), "" for the thread's latest.
func (r *runCreate) fromCheckpoint() (string, *apiError) {
	id := r.CheckpointID
	if present(r.Checkpoint) {
		var cp struct {
			CheckpointID string `json:"checkpoint_id"`
		}
		if json.Unmarshal(r.Checkpoint, &cp) != nil {
			return "", invalid("checkpoint must be an object with checkpoint_id")
		}
		if cp.CheckpointID != "" {
			if id != "" && id != cp.CheckpointID {
				return "", invalid("checkpoint_id and checkpoint.checkpoint_id differ")
			}
			id = cp.CheckpointID
		}
	}
	return id, nil
}

func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// modes returns the requested stream modes (values by default).
func (r *runCreate) modes() ([]string, *apiError) {
	return parseModes(r.StreamMode)
}

func parseModes(raw json.RawMessage) ([]string, *apiError) {
	if !present(raw) {
		return []string{"values"}, nil
	}
	var modes []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		modes = []string{one}
	} else if err := json.Unmarshal(raw, &modes); err != nil {
		return nil, invalid("stream_mode must be a stream mode or a list of them")
	}
	return checkModes(modes)
}

func checkModes(modes []string) ([]string, *apiError) {
	if len(modes) == 0 {
		return []string{"values"}, nil
	}
	for _, m := range modes {
		if !servedModes[m] {
			return nil, invalid("stream_mode %q is not offered; this server streams values, updates, messages, messages-tuple, custom, tasks, checkpoints, debug and events", m)
		}
	}
	return modes, nil
}

// forwarded lists the requested modes the bridge forwards as they are, comma-separated.
func forwarded(modes []string) string {
	var out []string
	for _, m := range modes {
		if contains(forwardedModes, m) && !contains(out, m) {
			out = append(out, m)
		}
	}
	return strings.Join(out, ",")
}

// inputChannels returns the input's keys other than messages as a JSON object ("" when
// there are none): the bridge passes those the graph's input schema names to the graph.
func inputChannels(raw json.RawMessage) string {
	var in map[string]json.RawMessage
	if json.Unmarshal(raw, &in) != nil {
		return ""
	}
	delete(in, "messages")
	if len(in) == 0 {
		return ""
	}
	b, err := json.Marshal(in)
	if err != nil {
		return ""
	}
	return string(b)
}

// textKeys are input keys read as the user's text when the input has no messages (the
// runner's default mapping reads the same ones).
var textKeys = []string{"input", "question", "query", "text", "prompt"}

// messageIDKey is the user message's metadata key holding the id the client gave the
// message, which the thread's values then show (a RemoteGraph's parent merges messages
// by id).
const messageIDKey = "langgraph_message_id"

// turnInput maps a run's input onto the turn's content: the last user message of
// input.messages (LangChain message dicts or OpenAI-style role/content), else a text key;
// id is the message's id, when the client gave one.
func turnInput(raw json.RawMessage) (blocks []session.ContentBlock, id string, e *apiError) {
	var v any
	if err := json.Unmarshal(raw, &v); err == nil {
		if in, ok := v.(map[string]any); ok {
			if list, ok := in["messages"].([]any); ok {
				for i := len(list) - 1; i >= 0; i-- {
					if m, ok := list[i].(map[string]any); ok {
						if _, user := userContent(m); user {
							id, _ = m["id"].(string)
							break
						}
					}
				}
			}
		}
	}
	blocks, e = turnContent(raw)
	return blocks, id, e
}

func turnContent(raw json.RawMessage) ([]session.ContentBlock, *apiError) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, invalid("input is not valid JSON")
	}
	switch in := v.(type) {
	case string:
		return textBlocks(in), nil
	case map[string]any:
		if msgs, ok := in["messages"]; ok {
			list, ok := msgs.([]any)
			if !ok {
				list = []any{msgs}
			}
			for i := len(list) - 1; i >= 0; i-- {
				if blocks, ok := userContent(list[i]); ok {
					if len(blocks) == 0 {
						return nil, invalid("input.messages: the user message has no content")
					}
					return blocks, nil
				}
			}
			return nil, invalid("input.messages holds no user message")
		}
		for _, k := range textKeys {
			if s, ok := in[k].(string); ok && s != "" {
				return textBlocks(s), nil
			}
		}
	}
	return nil, invalid("input must hold messages (a user message) or one of the text keys %s", strings.Join(textKeys, ", "))
}

func textBlocks(s string) []session.ContentBlock {
	return []session.ContentBlock{{Type: "input_text", Text: s}}
}

// userContent returns a user message's content as blocks; ok is false for another role.
func userContent(m any) ([]session.ContentBlock, bool) {
	switch msg := m.(type) {
	case string:
		return textBlocks(msg), true
	case []any: // ("user", "text") tuples
		if len(msg) == 2 {
			role, _ := msg[0].(string)
			text, _ := msg[1].(string)
			if role == "user" || role == "human" {
				return textBlocks(text), true
			}
		}
		return nil, false
	case map[string]any:
		role, _ := msg["role"].(string)
		if role == "" {
			role, _ = msg["type"].(string)
		}
		if role != "user" && role != "human" {
			return nil, false
		}
		return contentBlocks(msg["content"]), true
	}
	return nil, false
}

func contentBlocks(c any) []session.ContentBlock {
	switch v := c.(type) {
	case string:
		if v == "" {
			return nil
		}
		return textBlocks(v)
	case []any:
		var out []session.ContentBlock
		for _, b := range v {
			switch bb := b.(type) {
			case string:
				out = append(out, session.ContentBlock{Type: "input_text", Text: bb})
			case map[string]any:
				switch bb["type"] {
				case "text":
					s, _ := bb["text"].(string)
					out = append(out, session.ContentBlock{Type: "input_text", Text: s})
				case "image_url":
					url := ""
					switch u := bb["image_url"].(type) {
					case string:
						url = u
					case map[string]any:
						url, _ = u["url"].(string)
					}
					if url != "" {
						out = append(out, session.ContentBlock{Type: "input_image", ImageURL: url})
					}
				case "image":
					if u, _ := bb["url"].(string); u != "" {
						out = append(out, session.ContentBlock{Type: "input_image", ImageURL: u})
					} else if d, _ := bb["data"].(string); d != "" {
						mt, _ := bb["mime_type"].(string)
						out = append(out, session.ContentBlock{Type: "input_image", ImageURL: "data:" + mt + ";base64," + d})
					}
				}
			}
		}
		return out
	}
	return nil
}

// resumes answers the thread's pending interrupts with command.resume: a map keyed by
// interrupt ids answers each its own, any other value answers every pending one. The
// value reaches interrupt() unchanged (the runner takes it from langgraph_resume); the
// host's approve flag is read from it for surfaces and runners that only know approvals.
func (h *Handler) resumes(ctx context.Context, key session.Key, cmd *command) ([]host.Resume, *apiError) {
	raw := cmd.Resume
	pending, err := h.rt.PendingApprovals(ctx, key)
	if err != nil {
		return nil, fromHost(h.log, "load pending approvals", err)
	}
	if len(pending) == 0 {
		return nil, detail(409, "thread %s has no pending interrupt to resume", key.ID)
	}
	iids, e := h.interruptIDs(ctx, key)
	if e != nil {
		return nil, e
	}
	var value any
	if err := json.Unmarshal(raw, &value); err != nil {
		return nil, invalid("command.resume is not valid JSON")
	}
	byID, keyed := value.(map[string]any)
	if keyed {
		for k := range byID {
			if !containsValue(iids, k) {
				keyed = false
				break
			}
		}
	}
	out := make([]host.Resume, 0, len(pending))
	for _, p := range pending {
		v := value
		if keyed {
			got, ok := byID[iids[p.ID]]
			if !ok {
				continue // answered another time
			}
			v = got
		}
		approve := approves(v)
		item := map[string]any{"type": "mcp_approval_response", "approval_request_id": p.ID, "approve": approve, "langgraph_resume": v}
		if len(out) == 0 {
			// The Command's update and goto ride with the first answer.
			if present(cmd.Update) {
				item["langgraph_update"] = cmd.Update
			}
			if present(cmd.Goto) {
				item["langgraph_goto"] = cmd.Goto
			}
		}
		if m, ok := v.(map[string]any); ok {
			if r, ok := m["reason"].(string); ok {
				item["reason"] = r
			}
		}
		out = append(out, host.Resume{ApprovalRequestID: p.ID, Approve: approve, Raw: session.MustJSON(item)})
	}
	if len(out) == 0 {
		return nil, invalid("command.resume names no pending interrupt")
	}
	return out, nil
}

// interruptIDs maps the pending approvals' ids to their interrupt ids.
func (h *Handler) interruptIDs(ctx context.Context, key session.Key) (map[string]string, *apiError) {
	s, err := h.rt.Session(ctx, key)
	if err != nil {
		return nil, fromHost(h.log, "load session", err)
	}
	evs, err := h.rt.Events(ctx, key, session.EventQuery{InvocationID: s.ActiveInvocationID, Types: []string{session.TypeApprovalRequest}})
	if err != nil {
		return nil, fromHost(h.log, "load approvals", err)
	}
	out := map[string]string{}
	for _, e := range evs {
		d, err := session.DataOf[session.ApprovalRequestData](e)
		if err != nil {
			continue
		}
		var det approvalDetail
		_ = json.Unmarshal(d.Detail, &det)
		out[e.ItemID] = cmp.Or(det.InterruptID, e.ItemID)
	}
	return out, nil
}

func containsValue(m map[string]string, v string) bool {
	for _, x := range m {
		if x == v {
			return true
		}
	}
	return false
}

// approves reads an approval verdict from a resume value: an object's approve (or
// approved) flag, a boolean, or a word; anything else approves.
func approves(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case map[string]any:
		for _, k := range []string{"approve", "approved"} {
			if b, ok := x[k].(bool); ok {
				return b
			}
		}
		if t, ok := x["type"].(string); ok {
			return !isNo(t)
		}
	case string:
		return !isNo(x)
	}
	return true
}

func isNo(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "no", "n", "reject", "rejected", "deny", "denied", "false", "decline":
		return true
	}
	return false
}
