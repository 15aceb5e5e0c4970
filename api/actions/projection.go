package actions

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/agentengine/agentengine/session"
)

// The chat-history projection of ListSessionMessages: one group of events per
// invocation (a turn), projected into its user message and one assistant message
// whose Blocks keep the turn's order: thinking, text, tool and approval blocks.
// Field names follow KsADK's message contract (ksadk-web maps them as they are).

type message struct {
	MessageID    string          `json:"MessageId"`
	Role         string          `json:"Role"`
	Content      textPart        `json:"Content"`
	Timestamp    float64         `json:"Timestamp"`
	SeqID        int64           `json:"SeqId"`
	StartSeqID   int64           `json:"StartSeqId"`
	InvocationID string          `json:"InvocationId,omitempty"`
	ResponseID   string          `json:"ResponseId,omitempty"`
	RunStatus    string          `json:"RunStatus,omitempty"`
	Error        string          `json:"Error,omitempty"`
	Attachments  []attachment    `json:"Attachments,omitempty"`
	Reasoning    []reasoningPart `json:"Reasoning,omitempty"`
	ToolEvents   []*block        `json:"ToolEvents,omitempty"`
	Blocks       []*block        `json:"Blocks,omitempty"`

	// tools are the turn's tool and approval blocks until finish merges them in: a
	// later turn may still complete them.
	tools []*block
}

type reasoningPart struct {
	Text  string `json:"text"`
	SeqID int64  `json:"SeqId"`
}

type attachment struct {
	FileURI string `json:"file_uri,omitempty"`
	Name    string `json:"name"`
	Mime    string `json:"mime"`
	Size    int    `json:"size,omitempty"`
	URL     string `json:"url"`
	IsImage bool   `json:"is_image"`
}

// block is one step of an assistant turn. The transcript keeps event order, as KsADK's
// does: a call approved in one turn runs in the next (the resume), whose own tool block
// has the result; the call's block in the first turn says how it was decided.
type block struct {
	Type              string `json:"Type"` // text, thinking, tool, approval
	SeqID             int64  `json:"SeqId"`
	Content           string `json:"Content,omitempty"`
	Name              string `json:"Name,omitempty"`
	Args              any    `json:"Args,omitempty"`
	Result            any    `json:"Result,omitempty"`
	Status            string `json:"Status,omitempty"` // running, completed, failed, paused, approved, denied
	ToolCallID        string `json:"ToolCallId,omitempty"`
	ApprovalRequestID string `json:"ApprovalRequestId,omitempty"`
	ApprovalMessage   string `json:"ApprovalMessage,omitempty"`
	ResultSeqID       int64  `json:"ResultSeqId,omitempty"`
}

// group is the events of one invocation, in seq order.
type group struct {
	inv    string
	events []session.Event
}

func (g *group) start() int64 { return g.events[0].Seq }
func (g *group) end() int64   { return g.events[len(g.events)-1].Seq }

// groupEvents splits events into invocation groups in seq order. Events outside runs
// (feedback, state written by actions) make no messages and are left out.
func groupEvents(evs []session.Event) []*group {
	var out []*group
	byInv := map[string]*group{}
	for _, e := range evs {
		if e.InvocationID == "" || e.Type == session.TypeFeedback {
			continue
		}
		g, ok := byInv[e.InvocationID]
		if !ok {
			g = &group{inv: e.InvocationID}
			byInv[e.InvocationID] = g
			out = append(out, g)
		}
		g.events = append(g.events, e)
	}
	return out
}

type projectOptions struct {
	reasoning, tools, attachments bool
}

// projector carries what links groups: the calls made so far (a result in a later turn
// names its call's arguments) and the approval decisions of the page.
type projector struct {
	opts      projectOptions
	calls     map[string]*block
	decisions map[string]session.ApprovalResponseData
}

func newProjector(opts projectOptions, evs []session.Event) *projector {
	p := &projector{opts: opts, calls: map[string]*block{}, decisions: map[string]session.ApprovalResponseData{}}
	p.addDecisions(evs)
	return p
}

// addDecisions records approval_response events.
func (p *projector) addDecisions(evs []session.Event) {
	for _, e := range evs {
		var d session.ApprovalResponseData
		if e.Type == session.TypeApprovalResponse && json.Unmarshal(e.Data, &d) == nil {
			p.decisions[d.ApprovalRequestID] = d
		}
	}
}

// project returns a group's messages: the user message, if the turn has one, and the
// assistant message, if the turn produced anything.
func (p *projector) project(g *group) []*message {
	var out []*message
	start := g.start()
	asst := &message{Role: "assistant", InvocationID: g.inv, StartSeqID: start}
	var anchor *session.Event
	var texts []string
	var tools []*block
	calls := map[string]*block{} // this turn's calls by id
	for i := range g.events {
		e := &g.events[i]
		switch e.Type {
		case session.TypeUserMessage:
			if m := p.userMessage(e, start); m != nil {
				out = append(out, m)
			}
		case session.TypeAssistantMessage, session.TypeReasoning:
			var d session.AssistantMessageData // reasoning has the same shape
			if json.Unmarshal(e.Data, &d) != nil || d.Text == "" {
				continue
			}
			if e.Type == session.TypeReasoning {
				if p.opts.reasoning {
					asst.Reasoning = append(asst.Reasoning, reasoningPart{Text: d.Text, SeqID: e.Seq})
					asst.Blocks = append(asst.Blocks, &block{Type: "thinking", SeqID: e.Seq, Content: d.Text})
				}
				anchor = latest(anchor, e, false)
				continue
			}
			texts = append(texts, d.Text)
			asst.Blocks = append(asst.Blocks, &block{Type: "text", SeqID: e.Seq, Content: d.Text})
			anchor = latest(anchor, e, true)
		case session.TypeToolCall:
			d, err := session.DataOf[session.ToolCallData](*e)
			if err != nil {
				continue
			}
			b := &block{Type: "tool", SeqID: e.Seq, Name: d.Name, Args: jsonValue(d.Arguments), Status: "running", ToolCallID: d.CallID}
			if d.CallID != "" {
				calls[d.CallID], p.calls[d.CallID] = b, b
			}
			tools = append(tools, b)
			anchor = latest(anchor, e, false)
		case session.TypeToolResult:
			d, err := session.DataOf[session.ToolResultData](*e)
			if err != nil {
				continue
			}
			b, ok := calls[d.CallID]
			if !ok || d.CallID == "" {
				// The result of a call of an earlier turn (approved, run on resume).
				b = &block{Type: "tool", SeqID: e.Seq, Name: d.Name, ToolCallID: d.CallID}
				if c, ok := p.calls[d.CallID]; ok && d.CallID != "" {
					b.Args = c.Args
					if b.Name == "" {
						b.Name = c.Name
					}
				}
				tools = append(tools, b)
			}
			b.Result, b.ResultSeqID, b.Status = jsonValue(d.Output), e.Seq, "completed"
			if d.IsError {
				b.Status = "failed"
			}
			anchor = latest(anchor, e, false)
		case session.TypeApprovalRequest:
			d, err := session.DataOf[session.ApprovalRequestData](*e)
			if err != nil {
				continue
			}
			b := &block{Type: "approval", SeqID: e.Seq, Name: d.Name, Args: jsonValue(d.Arguments), Status: "paused",
				ToolCallID: d.CallID, ApprovalRequestID: e.ItemID, ApprovalMessage: d.Message}
			if dec, ok := p.decisions[e.ItemID]; ok {
				b.Status = "denied"
				if dec.Approve {
					b.Status = "approved"
				}
			}
			if c, ok := calls[d.CallID]; ok && c.Status == "running" {
				c.Status = "paused" // the call waits for this approval
				if b.Status != "paused" {
					c.Status = b.Status // decided; it runs (or not) in the next turn
				}
			}
			tools = append(tools, b)
			anchor = latest(anchor, e, false)
		case session.TypeRunStatus:
			d, err := session.DataOf[session.RunStatusData](*e)
			if err != nil {
				continue
			}
			asst.RunStatus = d.Status
			if d.Error != nil && session.IsTerminalStatus(d.Status) {
				asst.Error = d.Error.Message
				anchor = latest(anchor, e, false)
			}
		}
	}
	if p.opts.tools {
		asst.tools = tools
	}
	if anchor == nil || (len(texts) == 0 && len(asst.Blocks) == 0 && len(asst.tools) == 0 && asst.Error == "") {
		return out
	}
	asst.MessageID, asst.SeqID, asst.Timestamp = eventID(anchor.SessionID, anchor.Seq), anchor.Seq, epoch(anchor.Time)
	asst.Content = textPart{Text: strings.Join(texts, "\n\n")}
	return append(out, asst)
}

// finish completes projected messages once every group of the page is projected:
// tool blocks still running in a run that ended are settled, then merged into Blocks
// and listed as ToolEvents.
func finish(msgs []*message) {
	for _, m := range msgs {
		for _, b := range m.tools {
			if b.Status == "running" {
				switch m.RunStatus {
				case session.StatusCompleted:
					b.Status = "completed"
				case session.StatusFailed, session.StatusCancelled, session.StatusInterrupted:
					b.Status = "failed"
				}
			}
			te := *b
			switch te.Type {
			case "tool":
				te.Type = "tool_call" // KsADK's ToolEvents name
			case "approval":
				// As KsADK lists it: without the call's id. ksadk-web keys a turn's tool
				// events by name, by ToolCallId when a name repeats, and finds the
				// approval of a tool block by the block's name: with the call's id the
				// approval would replace the call's entry and its buttons never show.
				te.ToolCallID = ""
			}
			m.ToolEvents = append(m.ToolEvents, &te)
		}
		m.Blocks = mergeBySeq(m.Blocks, m.tools)
	}
}

// latest moves the anchor of an assistant message to e. The anchor is its latest
// text message, or failing any its latest other output.
func latest(cur, e *session.Event, text bool) *session.Event {
	if text || cur == nil || cur.Type != session.TypeAssistantMessage {
		return e
	}
	return cur
}

// mergeBySeq interleaves tool blocks into the text and thinking blocks by seq. A tool
// block keeps the seq of its call, so its place is where the call was made.
func mergeBySeq(a, b []*block) []*block {
	out := make([]*block, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j == len(b) || (i < len(a) && a[i].SeqID < b[j].SeqID) {
			out = append(out, a[i])
			i++
			continue
		}
		out = append(out, b[j])
		j++
	}
	return out
}

func (p *projector) userMessage(e *session.Event, start int64) *message {
	d, err := session.DataOf[session.UserMessageData](*e)
	if err != nil {
		return nil
	}
	m := &message{MessageID: eventID(e.SessionID, e.Seq), Role: "user", Content: textPart{Text: d.Text},
		Timestamp: epoch(e.Time), SeqID: e.Seq, StartSeqID: start, InvocationID: e.InvocationID}
	if p.opts.attachments {
		for _, b := range d.Content {
			if b.Type != "input_text" {
				m.Attachments = append(m.Attachments, attachmentOf(b))
			}
		}
	}
	return m
}

// attachmentOf describes a non-text input block the way KsADK's UI lists attachments.
func attachmentOf(b session.ContentBlock) attachment {
	a := attachment{Name: b.Filename, IsImage: b.Type == "input_image"}
	src := b.FileData
	if a.IsImage {
		src = b.ImageURL
	}
	if src == "" {
		src = b.FileURL
	}
	if src == "" {
		src = b.FileID
	}
	if rest, ok := strings.CutPrefix(src, "data:"); ok {
		meta, data, _ := strings.Cut(rest, ",")
		a.Mime, _, _ = strings.Cut(meta, ";")
		a.Size, a.URL = len(data)*3/4, src
	} else {
		a.FileURI, a.URL = src, src
		if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") && src != "" {
			a.URL = Prefix + "AttachmentContent?FileUri=" + url.QueryEscape(src)
		}
	}
	if a.Name == "" {
		a.Name = "attachment"
		if a.IsImage {
			a.Name = "image"
		}
	}
	return a
}
