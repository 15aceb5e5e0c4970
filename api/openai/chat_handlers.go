package openai

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/api/sse"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// chatEcho is the Meta of runs started by Chat Completions.
type chatEcho struct {
	API   string `json:"api"`
	Model string `json:"model"`
}

// createChatCompletion serves POST /v1/chat/completions.
func (h *Handler) createChatCompletion(c *gin.Context, req *chatRequest, user string) *apiError {
	ctx := c.Request.Context()
	agent, override, err := h.rt.ResolveModel(req.Model)
	if err != nil {
		return fromHostError(h.log, "resolve agent", err)
	}
	ksadk, aerr := h.ksadkShapes(c, agent.Name)
	if aerr != nil {
		return aerr
	}
	if req.SessionID == "" {
		if sid := c.GetHeader(HeaderSession); sid != "" {
			if err := host.ValidateID(sid); err != nil {
				return badRequest("", "", "the %s header is not a valid session id: %v", HeaderSession, err)
			}
			req.SessionID = sid
		}
	}
	turn := host.TurnRequest{Surface: "chat", App: agent.Name, Model: override, User: user, SessionID: req.SessionID, CreateIfMissing: true,
		Metadata: req.Metadata, ModelMetadata: req.ModelMetadata, ModelOptions: req.ModelOptions,
		Instructions: chatInstructions(req.Messages),
		Meta:         session.MustJSON(chatEcho{API: "chat.completions", Model: agent.Name})}
	if turn.Input, turn.SessionID, aerr = h.chatInput(ctx, turn, req, ksadk); aerr != nil {
		return aerr
	}
	turn.Unannounced = !req.Stream // the client learns the run's ids from the answer only
	run, err := h.rt.Start(ctx, turn)
	if err != nil {
		return fromHostError(h.log, "start chat completion", err)
	}
	c.Header(HeaderSession, run.Key.ID)
	opts := chatOptions{IncludeUsage: req.IncludeUsage, Reasoning: req.KsadkEvents || extension(c, "reasoning"), Ksadk: ksadk}
	enc := newChatEncoder(host.NewID("chatcmpl-"), agent.Name, run.Key.ID, run.CreatedAt.Unix(), opts, req.Stream)
	if req.Stream {
		h.streamEnded(run, streamChat(c, run, enc, h.keepAlive))
		return nil
	}
	evs, err := run.Wait(ctx)
	if err != nil {
		return nil // the client went away; the run goes on
	}
	for _, ev := range evs {
		enc.Add(ev)
	}
	cc, aerr := enc.Completion()
	if aerr != nil {
		return aerr
	}
	httpx.WriteJSON(c, http.StatusOK, cc)
	return nil
}

// chatInstructions joins the system and developer messages: they are the turn's
// instructions, not conversation items.
func chatInstructions(msgs []chatMessage) string {
	var parts []string
	for _, m := range msgs {
		if m.Role == roleSystem || m.Role == roleDeveloper {
			parts = append(parts, m.text())
		}
	}
	return strings.Join(parts, "\n\n")
}

// chatInput maps messages to the turn's input and returns the session it continues.
//
// Trailing system and developer messages only add to the instructions (OpenAI accepts
// a list that ends with one); a list of only those is the input itself.
//
// Without session_id the client is stateless: the last user message is the input and
// every other (non-system) message is passed to the runner as an item, in order.
// With session_id the session's stored history is what counts: only the new tail is
// read — the last user message, or the trailing tool messages, which resume the
// session when they answer its pending approval (tool_call_id = the call id or
// approval id) and are passed as function_call_output items otherwise.
//
// A user message "approve" or "reject[: reason]" answers the session's pending
// approvals. A stateless client that resends the conversation is matched to its
// session by the approval id in the assistant message that asked (approvalText).
func (h *Handler) chatInput(ctx context.Context, t host.TurnRequest, req *chatRequest, ksadk bool) (host.Input, string, *apiError) {
	var in host.Input
	msgs := req.Messages
	sid := t.SessionID
	end := len(msgs)
	for end > 0 && (msgs[end-1].Role == roleSystem || msgs[end-1].Role == roleDeveloper) {
		end--
	}
	if end == 0 {
		in.Content = []session.ContentBlock{{Type: "input_text", Text: chatInstructions(msgs)}}
		return in, sid, nil
	}
	tail := msgs[:end]
	lastUser := -1
	for i, m := range tail {
		if m.Role == roleUser {
			lastUser = i
		}
	}
	if !ksadk && lastUser == len(tail)-1 {
		if approve, reason, ok := chatVerdict(tail[lastUser].text()); ok {
			s := sid
			if s == "" {
				s = h.approvalSession(ctx, t, tail[:lastUser])
			}
			if s != "" {
				pending, err := h.rt.PendingApprovals(ctx, session.Key{App: t.App, User: t.User, ID: s})
				if err != nil {
					return in, sid, fromHostError(h.log, "pending approvals", err)
				}
				for _, p := range pending {
					in.Resumes = append(in.Resumes, host.Resume{ApprovalRequestID: p.ID, Approve: approve, Reason: reason,
						Raw: session.MustJSON(struct {
							Type              string `json:"type"`
							ApprovalRequestID string `json:"approval_request_id"`
							Approve           bool   `json:"approve"`
							Reason            string `json:"reason,omitempty"`
						}{itemMCPApprovalResponse, p.ID, approve, reason})})
				}
				if len(pending) > 0 {
					return in, s, nil
				}
			}
		}
	}
	if sid == "" {
		for i, m := range tail {
			switch {
			case i == lastUser:
				in.Content = m.Blocks
			case m.Role == roleSystem || m.Role == roleDeveloper:
			default:
				in.Items = append(in.Items, m.items()...)
			}
		}
		if lastUser < 0 && len(in.Items) == 0 {
			return in, sid, badRequest("messages", "", "messages has no user, assistant or tool message")
		}
		return in, sid, nil
	}
	if tail[len(tail)-1].Role != "tool" {
		if lastUser < 0 {
			return in, sid, badRequest("messages", "", "messages needs a user or tool message to continue session %q", sid)
		}
		in.Content = tail[lastUser].Blocks
		return in, sid, nil
	}
	first := len(tail) - 1
	for first > 0 && tail[first-1].Role == "tool" {
		first--
	}
	outs := make([]host.ToolOutput, 0, len(tail)-first)
	for _, m := range tail[first:] {
		out := m.text()
		approve, reason := approvalVerdict(out)
		outs = append(outs, host.ToolOutput{ID: m.ToolCallID, Output: out, Approve: approve, Reason: reason, Raw: m.items()[0]})
	}
	sorted, err := h.rt.SortToolOutputs(ctx, session.Key{App: t.App, User: t.User, ID: sid}, outs)
	if err != nil {
		return in, sid, fromHostError(h.log, "sort tool outputs", err)
	}
	in.Resumes, in.Items = sorted.Resumes, sorted.Items
	return in, sid, nil
}

// chatVerdict reads a user message that answers an approval: "approve" (also
// "approved", "yes") or "reject" ("rejected", "deny", "no"), optionally followed by
// ":" or a space and a reason.
func chatVerdict(text string) (approve bool, reason string, ok bool) {
	t := strings.TrimSpace(text)
	word, rest := t, ""
	if i := strings.IndexAny(t, ": \n"); i >= 0 {
		word, rest = t[:i], strings.TrimSpace(strings.TrimLeft(t[i:], ": \n"))
	}
	switch strings.ToLower(strings.TrimRight(word, ".!")) {
	case "approve", "approved", "yes":
		return true, rest, true
	case "reject", "rejected", "deny", "no":
		return false, rest, true
	}
	return false, "", false
}

// approvalSession finds the session whose approval the latest assistant message of a
// resent conversation asked for.
func (h *Handler) approvalSession(ctx context.Context, t host.TurnRequest, msgs []chatMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != roleAssistant {
			continue
		}
		m := approvalIDInText.FindAllStringSubmatch(msgs[i].text(), -1)
		if len(m) == 0 {
			return ""
		}
		ev, err := h.rt.FindItem(ctx, t.App, t.User, m[len(m)-1][1])
		if err != nil || ev.Type != session.TypeApprovalRequest {
			return ""
		}
		return ev.SessionID
	}
	return ""
}

// streamChat writes the run as chat.completion.chunk data lines ending in [DONE]. It
// returns why the stream ended before the run (context.Canceled: the client went away).
func streamChat(c *gin.Context, run *host.Run, enc *chatEncoder, keepAlive time.Duration) error {
	s := sse.Start(c)
	write := func(lines [][]byte) error {
		for _, l := range lines {
			if err := s.Event("", "", l); err != nil {
				return err
			}
		}
		return nil
	}
	if err := write(enc.Start()); err != nil {
		return err
	}
	return sse.Follow(c.Request.Context(), run.Subscribe(0), s, keepAlive, "ping", func(ev host.Event) error {
		if err := write(enc.Add(ev)); err != nil {
			return err
		}
		if enc.Ended() {
			return s.Event("", "", []byte("[DONE]"))
		}
		return nil
	})
}
