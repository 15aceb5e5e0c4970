package adkweb

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/host"
)

// httpError is an error in FastAPI's shape: {"detail": "text"}, or for request
// validation failures (422) {"detail": [{type, loc, msg}]} as pydantic reports them.
// Detail and Fields are written for the client; Err is log detail only.
type httpError struct {
	Status int
	Detail string
	Fields []fieldError
	Err    error
}

// fieldError is one pydantic validation error.
type fieldError struct {
	Type string `json:"type"`
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
}

func (e *httpError) Error() string {
	msg := e.Detail
	if len(e.Fields) > 0 {
		msg = fmt.Sprintf("%v: %s", e.Fields[0].Loc, e.Fields[0].Msg)
	}
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %v", e.Status, msg, e.Err)
	}
	return fmt.Sprintf("%d %s", e.Status, msg)
}

func (e *httpError) Unwrap() error { return e.Err }

// invalid is a 422 validation error at loc (pydantic's error type names).
func invalid(typ string, loc []any, format string, args ...any) *httpError {
	return &httpError{Status: http.StatusUnprocessableEntity,
		Fields: []fieldError{{Type: typ, Loc: loc, Msg: fmt.Sprintf(format, args...)}}}
}

func detail(status int, format string, args ...any) *httpError {
	return &httpError{Status: status, Detail: fmt.Sprintf(format, args...)}
}

// sessionNotFound is ADK's answer for a session that does not exist for the caller,
// which includes another user's or another app's session.
func sessionNotFound(id string) *httpError {
	return detail(http.StatusNotFound, "Session not found: %s", id)
}

func appNotFound(app string) *httpError {
	return detail(http.StatusNotFound, "App not found: %s", app)
}

// fromHostError maps a host.Runtime error. ClientErrors keep their message; anything
// else is logged with its detail and reported generically.
func fromHostError(log hclog.Logger, op string, err error) *httpError {
	var ce *host.ClientError
	if !errors.As(err, &ce) {
		if errors.Is(err, context.Canceled) {
			return &httpError{Status: 499, Detail: "the request was cancelled", Err: err}
		}
		log.Error("request failed", "op", op, "error", err)
		return &httpError{Status: http.StatusInternalServerError, Detail: "Internal Server Error", Err: err}
	}
	e := &httpError{Status: http.StatusBadRequest, Detail: ce.Message, Err: err}
	switch {
	case errors.Is(ce.Kind, host.ErrUnknownAgent), errors.Is(ce.Kind, host.ErrNotFound):
		e.Status = http.StatusNotFound
	case errors.Is(ce.Kind, host.ErrRunActive), errors.Is(ce.Kind, host.ErrRunNotActive):
		e.Status = http.StatusConflict
	case errors.Is(ce.Kind, host.ErrUnavailable):
		e.Status = http.StatusServiceUnavailable
	case errors.Is(ce.Kind, host.ErrTooManyRuns):
		e.Status = http.StatusTooManyRequests
	case errors.Is(ce.Kind, host.ErrInvalidInput), errors.Is(ce.Kind, host.ErrNoPendingApproval):
	default:
		log.Error("unmapped client error kind", "op", op, "error", err)
	}
	return e
}

// writeError writes e unless the response has started.
func writeError(c *gin.Context, e *httpError) {
	if c.Writer.Written() {
		return
	}
	if e.Status == http.StatusTooManyRequests {
		c.Header("Retry-After", "1")
	}
	var body any = struct {
		Detail string `json:"detail"`
	}{e.Detail}
	if len(e.Fields) > 0 {
		body = struct {
			Detail []fieldError `json:"detail"`
		}{e.Fields}
	}
	writeJSON(c, e.Status, body)
	c.Abort()
}
