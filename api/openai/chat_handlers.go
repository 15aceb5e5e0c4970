package openai

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

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
func (h *Handler) createChatCompletion(c *gin.Context) {
	body, aerr := h.readJSON(c)
	if aerr != nil {
		writeAPIError(c, aerr)
		return
	}
	req, aerr := parseChatRequest(body)
	if aerr != nil {
		writeAPIError(c, aerr)
		return
	}
	user, aerr := h.user(c, req.SafetyIdentifier, req.User)
	if aerr != nil {
		writeAPIError(c, aerr)
		return
	}
	ctx := c.Request.Context()
	agent, err := h.rt.ResolveAgent(req.Model)
	if err != nil {
		writeAPIError(c, fromHostError(h.log, "resolve agent", err))
		return
	}
	turn := host.TurnRequest{App: agent.Name, User: user, SessionID: req.SessionID, CreateIfMissing: true,
		Metadata: req.Metadata, ModelMetadata: req.ModelMetadata, ModelOptions: req.ModelOptions,
		Instructions: chatInstructions(req.Messages),
		Meta:         session.MustJSON(chatEcho{API: "chat.completions", Model: agent.Name})}
	if turn.Input, aerr = h.chatInput(ctx, turn, req); aerr != nil {
		writeAPIError(c, aerr)
		return
	}
	run, err := h.rt.Start(ctx, turn)
	if err != nil {
		writeAPIError(c, fromHostError(h.log, "start chat completion", err))
		return
	}
	c.Header(HeaderSession, run.Key.ID)
	opts := chatOptions{IncludeUsage: req.IncludeUsage, Reasoning: req.KsadkEvents || extension(c, "reasoning")}
	enc := newChatEncoder(host.NewID("chatcmpl-"), agent.Name, run.Key.ID, run.CreatedAt.Unix(), opts, req.Stream)
	if req.Stream {
		h.streamChat(c, run, enc)
		return
	}
	evs, err := run.Wait(ctx)
	if err != nil {
		return // the client went away; the run goes on
	}
	for _, ev := range evs {
		enc.Add(ev)
	}
	cc, aerr := enc.Completion()
	if aerr != nil {
		writeAPIError(c, aerr)
		return
	}
	writeJSON(c, http.StatusOK, cc)
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

// chatInput maps messages to the turn's input.
//
// Without session_id the client is stateless: the last user message is the input and
// every other (non-system) message is passed to the runner as an item, in order.
// With session_id the session's stored history is what counts: only the new tail is
// read — the last message if it is a user message, else the trailing tool messages,
// which resume the session when they answer its pending approval (tool_call_id = the
// call id or approval id of a tool call returned with finish_reason tool_calls) and are
// passed as function_call_output items otherwise.
func (h *Handler) chatInput(ctx context.Context, t host.TurnRequest, req *chatRequest) (host.Input, *apiError) {
	var in host.Input
	msgs := req.Messages
	lastRole := msgs[len(msgs)-1].Role
	if lastRole != roleUser && lastRole != "tool" {
		return in, badRequest("messages", "", "the last message must be a user or tool message, not %s", lastRole)
	}
	if req.SessionID == "" {
		last := -1
		for i, m := range msgs {
			if m.Role == roleUser {
				last = i
			}
		}
		for i, m := range msgs {
			switch {
			case i == last:
				in.Content = m.Blocks
			case m.Role == roleSystem || m.Role == roleDeveloper:
			default:
				in.Items = append(in.Items, m.items()...)
			}
		}
		return in, nil
	}
	if lastRole == roleUser {
		in.Content = msgs[len(msgs)-1].Blocks
		return in, nil
	}
	first := len(msgs) - 1
	for first > 0 && msgs[first-1].Role == "tool" {
		first--
	}
	pending, err := h.rt.PendingApprovals(ctx, session.Key{App: t.App, User: t.User, ID: t.SessionID})
	if err != nil {
		return in, fromHostError(h.log, "pending approvals", err)
	}
	for _, m := range msgs[first:] {
		p := answersApproval(m.ToolCallID, pending)
		if p == nil {
			in.Items = append(in.Items, m.items()...)
			continue
		}
		out := m.text()
		approve, reason := approvalVerdict(out)
		res := host.Resume{Approve: approve, Reason: reason, Output: out, Raw: m.items()[0]}
		if p.CallID == m.ToolCallID {
			res.CallID = m.ToolCallID
		} else {
			res.ApprovalRequestID = p.ID
		}
		in.Resumes = append(in.Resumes, res)
	}
	return in, nil
}

// streamChat writes the run as chat.completion.chunk data lines ending in [DONE].
func (h *Handler) streamChat(c *gin.Context, run *host.Run, enc *chatEncoder) {
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
		return
	}
	err := sse.Follow(c.Request.Context(), run.Subscribe(0), s, h.keepAlive, "ping", func(ev host.Event) error {
		if err := write(enc.Add(ev)); err != nil {
			return err
		}
		if enc.Ended() {
			return s.Event("", "", []byte("[DONE]"))
		}
		return nil
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		h.log.Debug("chat stream ended early", "session", run.Key.ID, "error", err)
	}
}
