package openai

import (
	"context"
	"errors"
	"strings"
	"testing"

	oa "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
)

// These tests drive the surface with the real openai-go client (v3): whatever it
// cannot decode or rejects is a wire-format bug.

func sdkClient(e *env) oa.Client {
	return oa.NewClient(option.WithBaseURL(e.srv.URL+"/v1/"), option.WithAPIKey("x"), option.WithMaxRetries(0))
}

func textInput(s string) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfString: oa.String(s)}
}

func TestSDKResponses(t *testing.T) {
	e := newEnv(t, Config{})
	c := sdkClient(e)
	ctx := context.Background()

	t.Run("non-stream", func(t *testing.T) {
		r, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "echo", Input: textInput("hello sdk")})
		if err != nil {
			t.Fatal(err)
		}
		if r.OutputText() != "Echo: hello sdk" || r.Status != responses.ResponseStatusCompleted || !strings.HasPrefix(r.ID, "resp_") {
			t.Fatalf("%q %s %s", r.OutputText(), r.Status, r.ID)
		}
		for _, f := range []bool{r.JSON.CreatedAt.Valid(), r.JSON.Model.Valid(), r.JSON.Usage.Valid(), r.JSON.ParallelToolCalls.Valid(), r.JSON.ToolChoice.Valid(), r.JSON.Tools.Valid()} {
			if !f {
				t.Errorf("a required field is missing: %s", r.RawJSON())
			}
		}
		got, err := c.Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
		if err != nil || got.OutputText() != r.OutputText() {
			t.Fatalf("get: %v", err)
		}
		page, err := c.Responses.InputItems.List(ctx, r.ID, responses.InputItemListParams{})
		if err != nil || len(page.Data) != 1 || page.Data[0].Type != "message" {
			t.Fatalf("input items: %v %+v", err, page)
		}
		if err := c.Responses.Delete(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		_, err = c.Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
		var apiErr *oa.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 {
			t.Fatalf("get after delete: %v", err)
		}
	})

	t.Run("stream", func(t *testing.T) {
		s := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "echo", Input: textInput("stream me")})
		var types []string
		var text string
		var final responses.Response
		for s.Next() {
			ev := s.Current()
			types = append(types, ev.Type)
			switch ev.Type {
			case "response.output_text.delta":
				text += ev.Delta
			case "response.completed":
				final = ev.Response
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if types[0] != "response.created" || types[1] != "response.in_progress" || types[len(types)-1] != "response.completed" {
			t.Errorf("event order %v", types)
		}
		if text != "Echo: stream me" || final.OutputText() != text {
			t.Errorf("deltas %q final %q", text, final.OutputText())
		}
		// Replay through the SDK's retrieve-stream call.
		rs := c.Responses.GetStreaming(ctx, final.ID, responses.ResponseGetParams{StartingAfter: oa.Int(2)})
		n := 0
		for rs.Next() {
			if n == 0 && rs.Current().SequenceNumber != 3 {
				t.Errorf("replay starts at %d", rs.Current().SequenceNumber)
			}
			n++
		}
		if rs.Err() != nil || n != len(types)-3 {
			t.Errorf("replay: %v, %d events", rs.Err(), n)
		}
	})

	t.Run("multi-turn", func(t *testing.T) {
		first, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "echo", Input: textInput("one"),
			Conversation: responses.ResponseNewParamsConversationUnion{OfString: oa.String("sdk-conv")}})
		if err != nil {
			t.Fatal(err)
		}
		second, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "echo", Input: textInput("two"),
			Conversation: responses.ResponseNewParamsConversationUnion{OfConversationObject: &responses.ResponseConversationParam{ID: "sdk-conv"}}})
		if err != nil || second.Conversation.ID != "sdk-conv" || second.Usage.InputTokens <= first.Usage.InputTokens {
			t.Fatalf("conversation: %v %+v", err, second.Usage)
		}
		third, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "echo", Input: textInput("three"), PreviousResponseID: oa.String(second.ID)})
		if err != nil || third.PreviousResponseID != second.ID || third.Usage.InputTokens <= second.Usage.InputTokens {
			t.Fatalf("previous_response_id: %v %+v", err, third.Usage)
		}
	})

	t.Run("tool call", func(t *testing.T) {
		r, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "echo", Input: textInput("tool on oslo")})
		if err != nil {
			t.Fatal(err)
		}
		// A tool the agent ran itself: an mcp_call with its output, which no client runs.
		mc := r.Output[0].AsMcpCall()
		if r.Output[0].Type != "mcp_call" || mc.Name != "lookup" || mc.Arguments != `{"query":"oslo"}` || mc.ServerLabel != "echo" || !strings.Contains(mc.Output, `"words":1`) {
			t.Fatalf("%s", r.RawJSON())
		}
	})

	t.Run("approval round trip", func(t *testing.T) {
		r, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "echo", Input: textInput("approve removing a.txt")})
		if err != nil {
			t.Fatal(err)
		}
		var aprID string
		for _, o := range r.Output {
			if o.Type == "mcp_approval_request" {
				aprID = o.AsMcpApprovalRequest().ID
			}
		}
		if aprID == "" {
			t.Fatalf("no approval request: %s", r.RawJSON())
		}
		res, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "echo", PreviousResponseID: oa.String(r.ID),
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
				responses.ResponseInputItemParamOfMcpApprovalResponse(aprID, true)}}})
		if err != nil || res.OutputText() != "Approved: deleted a.txt." {
			t.Fatalf("%v %q", err, res.OutputText())
		}
		if r.Status != responses.ResponseStatusCompleted || res.Output[0].Type != "mcp_call" || res.Output[0].AsMcpCall().ApprovalRequestID != aprID {
			t.Fatalf("pause %s, resume %s", r.Status, res.RawJSON())
		}
	})

	t.Run("errors", func(t *testing.T) {
		r, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "echo", Input: textInput("fail")})
		if err != nil || r.Status != responses.ResponseStatusFailed || r.Error.Message == "" || r.Error.Code != "server_error" {
			t.Fatalf("%v %s", err, r.RawJSON())
		}
		s := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "echo", Input: textInput("fail")})
		for s.Next() {
		}
		var se *ssestream.StreamError
		if !errors.As(s.Err(), &se) || !strings.Contains(se.Message, "fail") {
			t.Fatalf("stream error %v", s.Err())
		}
		_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "nope", Input: textInput("x")})
		var apiErr *oa.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" || apiErr.Param != "model" {
			t.Fatalf("unknown model: %v", err)
		}
	})

	t.Run("background and cancel", func(t *testing.T) {
		r, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "echo", Input: textInput("slow"), Background: oa.Bool(true)},
			option.WithJSONSet("model_options", map[string]any{"delay_ms": 50, "deltas": 100}))
		if err != nil || r.Status != responses.ResponseStatusInProgress {
			t.Fatalf("%v %s", err, r.Status)
		}
		cr, err := c.Responses.Cancel(ctx, r.ID)
		if err != nil || cr.Status != responses.ResponseStatusCancelled {
			t.Fatalf("%v %s", err, cr.Status)
		}
	})
}

func TestSDKChatCompletions(t *testing.T) {
	e := newEnv(t, Config{})
	c := sdkClient(e)
	ctx := context.Background()
	msgs := []oa.ChatCompletionMessageParamUnion{oa.SystemMessage("be brief"), oa.UserMessage("hello chat")}

	cc, err := c.Chat.Completions.New(ctx, oa.ChatCompletionNewParams{Model: "echo", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if cc.Choices[0].Message.Content != "Echo: hello chat" || cc.Choices[0].FinishReason != "stop" || cc.Object != "chat.completion" || cc.Usage.TotalTokens == 0 {
		t.Fatalf("%s", cc.RawJSON())
	}

	s := c.Chat.Completions.NewStreaming(ctx, oa.ChatCompletionNewParams{Model: "echo", Messages: msgs,
		StreamOptions: oa.ChatCompletionStreamOptionsParam{IncludeUsage: oa.Bool(true)}})
	acc := oa.ChatCompletionAccumulator{}
	var finished bool
	for s.Next() {
		if !acc.AddChunk(s.Current()) {
			t.Fatalf("accumulator rejected chunk %s", s.Current().RawJSON())
		}
		if _, ok := acc.JustFinishedContent(); ok {
			finished = true
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	got := acc.Choices[0]
	if got.Message.Content != "Echo: hello chat" || got.Message.Role != "assistant" || got.FinishReason != "stop" || !finished || acc.Usage.TotalTokens != cc.Usage.TotalTokens {
		t.Fatalf("accumulated %+v usage %+v", got, acc.Usage)
	}

	// Approval through chat: asked in text, answered by a user message.
	sid := "chat-approval"
	ask, err := c.Chat.Completions.New(ctx, oa.ChatCompletionNewParams{Model: "echo", Messages: []oa.ChatCompletionMessageParamUnion{oa.UserMessage("approve deleting b.txt")}},
		option.WithJSONSet("session_id", sid))
	if err != nil || ask.Choices[0].FinishReason != "stop" || len(ask.Choices[0].Message.ToolCalls) != 0 || !strings.Contains(ask.Choices[0].Message.Content, "(approval id apr_") {
		t.Fatalf("%v %s", err, ask.RawJSON())
	}
	res, err := c.Chat.Completions.New(ctx, oa.ChatCompletionNewParams{Model: "echo", Messages: []oa.ChatCompletionMessageParamUnion{
		oa.UserMessage("approve deleting b.txt"), ask.Choices[0].Message.ToParam(), oa.UserMessage("approve")}},
		option.WithJSONSet("session_id", sid))
	if err != nil || !strings.HasPrefix(res.Choices[0].Message.Content, "Approved: deleted b.txt.") {
		t.Fatalf("%v %s", err, res.RawJSON())
	}

	// Mid-stream failure is an error for the SDK.
	fs := c.Chat.Completions.NewStreaming(ctx, oa.ChatCompletionNewParams{Model: "echo", Messages: []oa.ChatCompletionMessageParamUnion{oa.UserMessage("fail")}})
	for fs.Next() {
	}
	if fs.Err() == nil {
		t.Fatalf("failed run streamed without error")
	}
	_, err = c.Chat.Completions.New(ctx, oa.ChatCompletionNewParams{Model: "echo", Messages: []oa.ChatCompletionMessageParamUnion{oa.UserMessage("fail")}})
	var apiErr *oa.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 {
		t.Fatalf("failed run: %v", err)
	}

	models, err := c.Models.List(ctx)
	if err != nil || len(models.Data) != 2 || models.Data[0].ID != "echo" || models.Data[0].OwnedBy != "agentengine" {
		t.Fatalf("%v %+v", err, models)
	}
	if m, err := c.Models.Get(ctx, "echo2"); err != nil || m.ID != "echo2" {
		t.Fatalf("%v", err)
	}
}
