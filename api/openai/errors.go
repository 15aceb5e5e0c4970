package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api/internal/httpx"
	"github.com/agentengine/agentengine/host"
)

// OpenAI error types used in envelopes.
const (
	typeInvalidRequest = "invalid_request_error"
	typeServer         = "server_error"
)

// genericServerMessage is what clients see for unexpected failures; the detail is logged.
const genericServerMessage = "The server had an error while processing your request."

// apiError is an OpenAI error envelope with its HTTP status. Message is always written
// for the client; internal detail never goes here.
type apiError struct {
	Status  int
	Type    string
	Code    string // "" encodes as null
	Param   string // "" encodes as null
	Message string
	// NoRetry adds x-should-retry: false, for errors a retry cannot fix (the SDKs retry
	// 409 and 5xx by default, which would start the same turn again).
	NoRetry bool
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

// errorObject is the body of the "error" key, shared by envelopes and stream events.
type errorObject struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (e *apiError) object() errorObject {
	return errorObject{Message: e.Message, Type: e.Type, Param: nullable(e.Param), Code: nullable(e.Code)}
}

func badRequest(param, code, format string, args ...any) *apiError {
	if code == "" {
		code = "invalid_value"
	}
	return &apiError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
}

func notFound(param, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "not_found", Param: param, Message: fmt.Sprintf(format, args...)}
}

func serverError() *apiError {
	return &apiError{Status: http.StatusInternalServerError, Type: typeServer, Code: "server_error", Message: genericServerMessage}
}

// fromHostError maps an error of host.Runtime to an envelope (httpx.FromHost logs
// what is not the client's to see).
func fromHostError(log hclog.Logger, op string, err error) *apiError {
	he := httpx.FromHost(log, op, err)
	switch {
	case he.Gone():
		return &apiError{Status: he.Status, Type: typeInvalidRequest, Code: "client_closed", Message: "the request was cancelled"}
	case he.Internal():
		return serverError()
	}
	e := &apiError{Status: he.Status, Type: typeInvalidRequest, Param: he.Param, Message: he.Message}
	switch {
	case errors.Is(he.Kind, host.ErrUnknownAgent):
		e.Code = "model_not_found"
		if e.Param == "" {
			e.Param = "model"
		}
	case errors.Is(he.Kind, host.ErrNotFound):
		e.Code = "not_found"
	case errors.Is(he.Kind, host.ErrInvalidInput):
		e.Code = "invalid_value"
	case errors.Is(he.Kind, host.ErrNoPendingApproval):
		e.Code = "no_pending_approval"
	case errors.Is(he.Kind, host.ErrRunActive):
		e.Code, e.NoRetry = "run_in_progress", true
	case errors.Is(he.Kind, host.ErrRunNotActive):
		e.Code, e.NoRetry = "run_not_active", true
	case errors.Is(he.Kind, host.ErrUnavailable):
		e.Type, e.Code = typeServer, "unavailable"
	case errors.Is(he.Kind, host.ErrTooManyRuns):
		e.Code = "rate_limit_exceeded"
	case errors.Is(he.Kind, host.ErrStateTooLarge):
		e.Code, e.NoRetry = "state_too_large", true
	}
	return e
}

// writeAPIError writes the envelope unless the response has already started.
func writeAPIError(c *gin.Context, e *apiError) {
	if c.Writer.Written() {
		return
	}
	if e.NoRetry {
		c.Header("x-should-retry", "false")
	}
	httpx.RetryAfter(c, e.Status)
	body, _ := json.Marshal(struct {
		Error errorObject `json:"error"`
	}{e.object()})
	c.Data(e.Status, "application/json", body)
	c.Abort()
}

// WriteError writes an OpenAI error envelope with the given status, for middleware in
// front of this surface (auth, origin and size checks). The type follows the status.
func WriteError(c *gin.Context, status int, code, message string) {
	t := typeInvalidRequest
	if status >= 500 {
		t = typeServer
	}
	writeAPIError(c, &apiError{Status: status, Type: t, Code: code, Message: message})
}
