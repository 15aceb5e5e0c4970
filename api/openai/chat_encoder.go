package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// Chat Completions wire shapes.

type chatCompletion struct {
	ID        string       `json:"id"`
	Object    string       `json:"object"`
	Created   int64        `json:"created"`
	Model     string       `json:"model"`
	Choices   []chatChoice `json:"choices"`
	Usage     chatUsage    `json:"usage"`
	SessionID string       `json:"session_id"`
}

type chatChoice struct {
	Index        int            `json:"index"`
	Message      chatMessageOut `json:"message"`
	Logprobs     *struct{}      `json:"logprobs"`
	FinishReason string         `json:"finish_reason"`
}

type chatMessageOut struct {
	Role        string         `json:"role"`
	Content     *string        `json:"content"`
	Refusal     *string        `json:"refusal"`
	ToolCalls   []chatToolCall `json:"tool_calls,omitempty"`
	Annotations []any          `json:"annotations"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatUsage struct {
	PromptTokens            int64                  `json:"prompt_tokens"`
	CompletionTokens        int64                  `json:"completion_tokens"`
	TotalTokens             int64                  `json:"total_tokens"`
	PromptTokensDetails     promptTokensDetails    `json:"prompt_tokens_details"`
	CompletionTokensDetails completionTokenDetails `json:"completion_tokens_details"`
}

type promptTokensDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
	AudioTokens  int64 `json:"audio_tokens"`
}

type completionTokenDetails struct {
	ReasoningTokens          int64 `json:"reasoning_tokens"`
	AudioTokens              int64 `json:"audio_tokens"`
	AcceptedPredictionTokens int64 `json:"accepted_prediction_tokens"`
	RejectedPredictionTokens int64 `json:"rejected_prediction_tokens"`
}

func chatUsageOf(u *session.Usage) chatUsage {
	var out chatUsage
	if u != nil {
		out.PromptTokens, out.CompletionTokens = u.InputTokens, u.OutputTokens
		out.TotalTokens = u.InputTokens + u.OutputTokens
		out.PromptTokensDetails.CachedTokens = u.CachedTokens
		out.CompletionTokensDetails.ReasoningTokens = u.ReasoningTokens
	}
	return out
}

type chatChunk struct {
	ID        string        `json:"id"`
	Object    string        `json:"object"`
	Created   int64         `json:"created"`
	Model     string        `json:"model"`
	Choices   []chunkChoice `json:"choices"`
	Usage     *chatUsage    `json:"usage,omitempty"`
	SessionID string        `json:"session_id,omitempty"`
}

type chunkChoice struct {
	Index        int       `json:"index"`
	Delta        any       `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// Deltas. Identity fields (role, tool call id/type/name) are sent exactly once:
// openai-python's stream helper concatenates repeated strings.
type roleDelta struct {
	Role    string  `json:"role"`
	Content string  `json:"content"`
	Refusal *string `json:"refusal"`
}

type contentDelta struct {
	Content string `json:"content"`
}

// reasoningDelta uses the reasoning_content field of vLLM/DeepSeek; only sent to
// clients that opt in to extensions.
type reasoningDelta struct {
	ReasoningContent string `json:"reasoning_content"`
}

type toolCallsDelta struct {
	ToolCalls []chunkToolCall `json:"tool_calls"`
}

type chunkToolCall struct {
	Index    int          `json:"index"`
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type emptyDelta struct{}

// messageSeparator joins the texts of several assistant messages of one run, in the
// stream and in the non-stream message alike.
const messageSeparator = "\n\n"

// chatOptions select optional stream content.
type chatOptions struct {
	IncludeUsage bool // stream_options.include_usage
	Reasoning    bool // KsADK extension: reasoning as reasoning_content deltas
	// Ksadk reports approval requests as tool_calls (finish_reason tool_calls), as
	// earlier clients of this surface expect. By default they are text: a tool_calls
	// answer asks the client to run the tool itself.
	Ksadk bool
}

// approvalText is how a Chat Completions answer asks for an approval by default; the
// client answers with a user message "approve" or "reject: <reason>" (or a tool
// message whose tool_call_id is the approval id). A stateless client that resends the
// conversation is matched to its session by the approval id in this text.
func approvalText(name, args, id string) string {
	return fmt.Sprintf("Approval required to run %s %s (approval id %s). Reply \"approve\" or \"reject: <reason>\".", name, args, id)
}

// approvalIDInText finds the approval id approvalText wrote.
var approvalIDInText = regexp.MustCompile(`\(approval id ([A-Za-z0-9_.:-]+)\)`)

// chatEncoder turns a run's journal into chat.completion.chunk data lines and the
// chat.completion object; like responseEncoder it is a pure function of the events.
//
// Tool calls the agent ran itself are not reported: in Chat Completions a tool call in
// the answer asks the client to run it. The only calls reported are those waiting for
// the client: approval requests of an interrupted run, with finish_reason tool_calls;
// a tool message answering one resumes the run.
type chatEncoder struct {
	id, model, sessionID string
	created              int64
	opts                 chatOptions
	emit                 bool

	started, ended  bool
	curMsg, curRs   string
	msgText, rsText []byte // the current message's and reasoning's text so far
	text            strings.Builder
	approvals       []chatToolCall
	approvalIDs     []string
	finish          string
	usage           *session.Usage
	failure         *apiError
	out             [][]byte
}

func newChatEncoder(id, model, sessionID string, created int64, opts chatOptions, emit bool) *chatEncoder {
	return &chatEncoder{id: id, model: model, sessionID: sessionID, created: created, opts: opts, emit: emit}
}

// Start returns the first chunk: the assistant role with empty content.
func (e *chatEncoder) Start() [][]byte {
	e.out = nil
	e.start()
	return e.out
}

func (e *chatEncoder) start() {
	if !e.started {
		e.started = true
		e.chunk(roleDelta{Role: "assistant"}, nil)
	}
}

// Ended reports whether the run's end has been encoded.
func (e *chatEncoder) Ended() bool { return e.ended }

// Add encodes one journal event into zero or more data lines (without "data: ").
func (e *chatEncoder) Add(ev host.Event) [][]byte {
	e.out = nil
	if e.ended {
		return nil
	}
	e.start()
	switch ev.Kind {
	case host.KindTextDelta:
		e.content(ev.ItemID, ev.Text, false)
	case host.KindReasoningDelta:
		e.reasoning(ev.ItemID, ev.Text, false)
	case host.KindStored:
		if ev.Stored != nil {
			e.stored(ev.Stored)
		}
	case host.KindToolArgsDelta, host.KindNative:
		// Tool calls are sent whole from the stored tool_call; native events are not on this wire.
	}
	return e.out
}

func (e *chatEncoder) stored(s *session.Event) {
	switch s.Type {
	case session.TypeAssistantMessage:
		if d, err := session.DataOf[session.AssistantMessageData](*s); err == nil {
			e.content(s.ItemID, d.Text, true)
		}
	case session.TypeReasoning:
		if d, err := session.DataOf[session.ReasoningData](*s); err == nil {
			e.reasoning(s.ItemID, d.Text, true)
		}
	case session.TypeApprovalRequest:
		if d, err := session.DataOf[session.ApprovalRequestData](*s); err == nil {
			id := d.CallID
			if id == "" {
				id = s.ItemID
			}
			e.approvals = append(e.approvals, chatToolCall{ID: id, Type: "function", Function: chatFunction{Name: d.Name, Arguments: d.Arguments}})
			e.approvalIDs = append(e.approvalIDs, s.ItemID)
		}
	case session.TypeRunStatus:
		var d session.RunStatusData
		if json.Unmarshal(s.Data, &d) == nil && session.IsTerminalStatus(d.Status) {
			e.end(d)
		}
	}
}

// content handles a text delta (full=false) or a stored message's full text: only the
// part not yet sent goes out, so the concatenated deltas equal the message.
func (e *chatEncoder) content(item, text string, full bool) {
	if item != e.curMsg {
		e.curMsg, e.msgText = item, e.msgText[:0]
		if e.text.Len() > 0 && text != "" {
			e.text.WriteString(messageSeparator)
			e.chunk(contentDelta{Content: messageSeparator}, nil)
		}
	}
	if full {
		if !strings.HasPrefix(text, string(e.msgText)) {
			return // already-streamed text cannot be taken back; keep what was sent
		}
		text = text[len(e.msgText):]
	}
	if text == "" {
		return
	}
	e.msgText = append(e.msgText, text...)
	e.text.WriteString(text)
	e.chunk(contentDelta{Content: text}, nil)
}

func (e *chatEncoder) reasoning(item, text string, full bool) {
	if item != e.curRs {
		e.curRs, e.rsText = item, e.rsText[:0]
	}
	if full {
		if !strings.HasPrefix(text, string(e.rsText)) {
			return
		}
		text = text[len(e.rsText):]
	}
	if text == "" {
		return
	}
	e.rsText = append(e.rsText, text...)
	if e.opts.Reasoning {
		e.chunk(reasoningDelta{ReasoningContent: text}, nil)
	}
}

func (e *chatEncoder) end(d session.RunStatusData) {
	e.ended = true
	e.usage = d.Usage
	switch {
	case d.Status == session.StatusCompleted:
		e.finish = "stop"
	case d.Status == session.StatusInterrupted && len(e.approvals) > 0 && !e.opts.Ksadk:
		e.finish = "stop"
		for i, c := range e.approvals {
			e.content("approval:"+e.approvalIDs[i], approvalText(c.Function.Name, c.Function.Arguments, e.approvalIDs[i]), false)
		}
	case d.Status == session.StatusInterrupted && len(e.approvals) > 0:
		e.finish = "tool_calls"
		for i, c := range e.approvals {
			e.chunk(toolCallsDelta{ToolCalls: []chunkToolCall{{Index: i, ID: c.ID, Type: c.Type, Function: c.Function}}}, nil)
		}
	case d.Status == session.StatusCancelled:
		e.failure = &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "run_cancelled", Message: "the run was cancelled", NoRetry: true}
	default:
		msg, code := "the agent run failed", "server_error"
		if d.Error != nil && d.Error.Message != "" {
			msg = d.Error.Message
		}
		if d.Error != nil && d.Error.Code != "" {
			code = d.Error.Code
		}
		e.failure = &apiError{Status: http.StatusInternalServerError, Type: typeServer, Code: code, Message: msg, NoRetry: true}
	}
	if e.failure != nil {
		// OpenAI's mid-stream failure: a data line with only an error object.
		e.line(struct {
			Error errorObject `json:"error"`
		}{e.failure.object()})
		return
	}
	finish := e.finish
	e.chunk(emptyDelta{}, &finish)
	if e.opts.IncludeUsage {
		u := chatUsageOf(e.usage)
		e.line(chatChunk{ID: e.id, Object: "chat.completion.chunk", Created: e.created, Model: e.model, Choices: []chunkChoice{}, Usage: &u, SessionID: e.sessionID})
	}
}

func (e *chatEncoder) chunk(delta any, finish *string) {
	e.line(chatChunk{ID: e.id, Object: "chat.completion.chunk", Created: e.created, Model: e.model,
		Choices: []chunkChoice{{Delta: delta, FinishReason: finish}}, SessionID: e.sessionID})
}

func (e *chatEncoder) line(v any) {
	if !e.emit {
		return
	}
	b, err := json.Marshal(v)
	if err != nil { // plain structs only
		panic("openai: encode chat chunk: " + err.Error())
	}
	e.out = append(e.out, b)
}

// Completion returns the chat.completion of an ended run, or the error a failed or
// cancelled run maps to.
func (e *chatEncoder) Completion() (chatCompletion, *apiError) {
	if e.failure != nil {
		return chatCompletion{}, e.failure
	}
	msg := chatMessageOut{Role: "assistant", Annotations: []any{}}
	text := e.text.String()
	if text != "" || e.finish != "tool_calls" {
		msg.Content = &text
	}
	if e.finish == "tool_calls" {
		msg.ToolCalls = e.approvals
	}
	finish := e.finish
	if finish == "" {
		finish = "stop"
	}
	return chatCompletion{ID: e.id, Object: "chat.completion", Created: e.created, Model: e.model,
		Choices: []chatChoice{{Message: msg, FinishReason: finish}}, Usage: chatUsageOf(e.usage), SessionID: e.sessionID}, nil
}
