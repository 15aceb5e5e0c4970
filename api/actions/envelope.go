package actions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/envelope"
	"github.com/agentengine/agentengine/host"
)

// Error codes of the envelope (shared with every surface under the action prefix).
const (
	CodeInvalidParameter  = envelope.CodeInvalidParameter
	CodeMissingParameter  = envelope.CodeMissingParameter
	CodeInvalidAction     = envelope.CodeInvalidAction
	CodeNotFound          = envelope.CodeNotFound
	CodeConflict          = envelope.CodeConflict
	CodeNoPendingApproval = envelope.CodeNoPendingApproval
	CodeTooLarge          = envelope.CodeTooLarge
	CodeMediaType         = envelope.CodeMediaType
	CodeMethod            = envelope.CodeMethod
	CodeUnauthorized      = envelope.CodeUnauthorized
	CodeForbidden         = envelope.CodeForbidden
	CodeUnavailable       = envelope.CodeUnavailable
	CodeTooManyRequests   = envelope.CodeTooManyRequests
	CodeInternal          = envelope.CodeInternal
)

const internalMessage = envelope.InternalMessage

type actionError = envelope.Error

func invalid(format string, args ...any) *actionError    { return envelope.Invalid(format, args...) }
func missing(field string) *actionError                  { return envelope.Missing(field) }
func notFound(format string, args ...any) *actionError   { return envelope.NotFound(format, args...) }
func conflict(format string, args ...any) *actionError   { return envelope.Conflict(format, args...) }
func clientGone() *actionError                           { return envelope.ClientGone() }
func ok(c *gin.Context, action string, data any)         { envelope.OK(c, action, data) }
func fail(c *gin.Context, action string, e *actionError) { envelope.Fail(c, action, e) }
func requestID(c *gin.Context) string                    { return envelope.RequestID(c) }

// fromHost maps a host.Runtime error to an answer. ClientErrors keep their message;
// anything else is logged with its detail and answered generically.
func (s *Surface) fromHost(action string, err error) *actionError {
	var ce *host.ClientError
	if !errors.As(err, &ce) {
		if errors.Is(err, context.Canceled) {
			return clientGone()
		}
		s.log.Error("action failed", "action", action, "error", err)
		return &actionError{Status: http.StatusInternalServerError, Code: CodeInternal, Message: internalMessage}
	}
	e := &actionError{Status: http.StatusBadRequest, Code: CodeInvalidParameter, Message: ce.Message}
	switch {
	case errors.Is(ce.Kind, host.ErrUnknownAgent), errors.Is(ce.Kind, host.ErrNotFound):
		e.Status, e.Code = http.StatusNotFound, CodeNotFound
	case errors.Is(ce.Kind, host.ErrNoPendingApproval):
		e.Code = CodeNoPendingApproval
	case errors.Is(ce.Kind, host.ErrRunActive), errors.Is(ce.Kind, host.ErrRunNotActive):
		e.Status, e.Code = http.StatusConflict, CodeConflict
	case errors.Is(ce.Kind, host.ErrUnavailable):
		e.Status, e.Code = http.StatusServiceUnavailable, CodeUnavailable
	case errors.Is(ce.Kind, host.ErrTooManyRuns):
		e.Status, e.Code = http.StatusTooManyRequests, CodeTooManyRequests
	case errors.Is(ce.Kind, host.ErrInvalidInput):
	default:
		s.log.Error("unmapped client error kind", "action", action, "error", err)
	}
	return e
}

// WriteError writes an error envelope for the router's middleware (api.ErrorWriter):
// unknown actions, wrong methods, auth, origin and size checks.
func (s *Surface) WriteError(c *gin.Context, status int, code, message string) {
	action := strings.TrimPrefix(c.Request.URL.Path, Prefix)
	if i := strings.IndexByte(action, '/'); i >= 0 {
		action = action[:i]
	}
	e := &actionError{Status: status, Code: CodeInternal, Message: message}
	switch status {
	case http.StatusNotFound:
		e.Code, e.Message = CodeInvalidAction, fmt.Sprintf("unknown action %q", action)
	case http.StatusMethodNotAllowed:
		e.Code = CodeMethod
		if m := methodOf(action); m != "" {
			e.Message = fmt.Sprintf("%s takes %s, not %s", action, m, c.Request.Method)
		}
	case http.StatusUnauthorized:
		e.Code = CodeUnauthorized
	case http.StatusForbidden:
		e.Code = CodeForbidden
	case http.StatusRequestEntityTooLarge:
		e.Code = CodeTooLarge
	case http.StatusBadRequest:
		e.Code = CodeInvalidParameter
	}
	if status >= 500 {
		e.Message = internalMessage
	}
	fail(c, action, e)
}
