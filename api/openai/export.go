package openai

import (
	"context"
	"encoding/json"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// What the Web UI action surface (api/actions) reuses: it starts runs itself, reads
// Responses-style input and must render runs byte for byte as this surface does.

// RequestError is a rejected request value: the HTTP status, the offending field and a
// message written for the client.
type RequestError struct {
	Status  int
	Param   string
	Message string
}

func (e *RequestError) Error() string { return e.Message }

func requestError(a *apiError) *RequestError {
	return &RequestError{Status: a.Status, Param: a.Param, Message: a.Message}
}

// TurnInput reads a Responses "input" value (a string, an item or an array of items)
// held in the request field name, and assembles the input of a turn of the session key
// (key.ID "" for a new session), exactly as POST /v1/responses does: the last user
// message is the turn's content, approval answers resume the session, item references
// are resolved. Rejections are *RequestError (a failure of the server among them, with
// a 5xx status, its detail logged to log).
func TurnInput(ctx context.Context, rt *host.Runtime, log hclog.Logger, key session.Key, name string, input json.RawMessage) (host.Input, error) {
	items, aerr := parseInputAt(input, name)
	if aerr != nil {
		return host.Input{}, requestError(aerr)
	}
	in, _, aerr := assembleInput(ctx, rt, log, key, items)
	if aerr != nil {
		return host.Input{}, requestError(aerr)
	}
	return in, nil
}

// ResponseMeta is the run Meta that makes a run started elsewhere a stored Response:
// GET /v1/responses/{id} and the encoders below render it with this model, metadata
// and previous_response_id.
func ResponseMeta(model string, metadata map[string]string, previousResponseID string, background bool) json.RawMessage {
	return session.MustJSON(requestEcho{API: apiResponses, Model: model, Metadata: metadata,
		PreviousResponseID: previousResponseID, Store: true, Background: background})
}

func runBase(run *host.Run) Response {
	return baseResponse(runIdentity{ResponseID: run.ResponseID, CreatedAt: run.CreatedAt, SessionID: run.Key.ID},
		parseEcho(run.Meta, run.Agent))
}

// StreamResponse writes run as KsADK's own /v1/responses event stream (what the KsADK
// switch gives on this surface, ": ping" keep-alives) until the run ends or the client
// goes away. The run goes on either way. The action API's Web UIs are written against
// it: response.ksadk.tool_result after each tool call, reasoning only as deltas, the
// flat error of response.failed, response.cancelled for a stopped run.
//
// It returns why the stream ended before the run (context.Canceled: the client went
// away); keepAlive is the interval of the keep-alives.
func StreamResponse(c *gin.Context, run *host.Run, keepAlive time.Duration) error {
	return streamResponse(c, run, newKsadkEncoder(runBase(run)), -1, keepAlive)
}

// WaitResponse waits for run to end and returns its Response object, as a non-stream
// POST /v1/responses answers.
func WaitResponse(ctx context.Context, run *host.Run) (Response, error) {
	evs, err := run.Wait(ctx)
	if err != nil {
		return Response{}, err
	}
	enc := newResponseEncoder(runBase(run), encodeOptions{Ksadk: true}, false)
	for _, ev := range evs {
		enc.Add(ev)
	}
	return enc.Response(), nil
}

func chatEncoderFor(c *gin.Context, run *host.Run, stream bool) *chatEncoder {
	opts := chatOptions{Reasoning: extension(c, "reasoning"), Ksadk: true}
	return newChatEncoder(host.NewID("chatcmpl-"), run.Agent, run.Key.ID, run.CreatedAt.Unix(), opts, stream)
}

// StreamChat writes run as chat.completion.chunk data lines ending in [DONE], as a
// streaming POST /v1/chat/completions does, and returns as StreamResponse does.
func StreamChat(c *gin.Context, run *host.Run, keepAlive time.Duration) error {
	return streamChat(c, run, chatEncoderFor(c, run, true), keepAlive)
}

// WaitChatCompletion waits for run to end and returns its chat.completion object. A run
// that failed or was cancelled gives the *RequestError that POST /v1/chat/completions
// answers with; a ctx error is returned as is.
func WaitChatCompletion(c *gin.Context, run *host.Run) (any, error) {
	evs, err := run.Wait(c.Request.Context())
	if err != nil {
		return nil, err
	}
	enc := chatEncoderFor(c, run, false)
	for _, ev := range evs {
		enc.Add(ev)
	}
	cc, aerr := enc.Completion()
	if aerr != nil {
		return nil, requestError(aerr)
	}
	return cc, nil
}
