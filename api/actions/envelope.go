package actions

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/envelope"
	"github.com/agentengine/agentengine/api/internal/httpx"
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

// fromHost maps a host.Runtime error to an answer (httpx.FromHost logs what is not
// the client's to see).
func (s *Surface) fromHost(action string, err error) *actionError {
	he := httpx.FromHost(s.log, action, err)
	switch {
	case he.Gone():
		return clientGone()
	case he.Internal():
		return &actionError{Status: http.StatusInternalServerError, Code: CodeInternal, Message: internalMessage}
	}
	e := &actionError{Status: he.Status, Code: CodeInvalidParameter, Message: he.Message}
	switch {
	case errors.Is(he.Kind, host.ErrUnknownAgent), errors.Is(he.Kind, host.ErrNotFound):
		e.Code = CodeNotFound
	case errors.Is(he.Kind, host.ErrNoPendingApproval):
		e.Code = CodeNoPendingApproval
	case errors.Is(he.Kind, host.ErrRunActive), errors.Is(he.Kind, host.ErrRunNotActive):
		e.Code = CodeConflict
	case errors.Is(he.Kind, host.ErrUnavailable):
		e.Code = CodeUnavailable
	case errors.Is(he.Kind, host.ErrTooManyRuns):
		e.Code = CodeTooManyRequests
	case errors.Is(he.Kind, host.ErrStateTooLarge):
		e.Code = CodeTooLarge
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
		if m := s.methodsOf(action); m != "" {
			e.Message = fmt.Sprintf("%s takes %s, not %s", action, m, c.Request.Method)
		}
	case http.StatusUnauthorized:
		e.Code = CodeUnauthorized
	case http.StatusForbidden:
		e.Code = CodeForbidden
	case http.StatusRequestEntityTooLarge:
		e.Code = CodeTooLarge
	case http.StatusTooManyRequests:
		e.Code = CodeTooManyRequests
	case http.StatusBadRequest:
		e.Code = CodeInvalidParameter
	}
	if status >= 500 {
		e.Message = internalMessage
	}
	fail(c, action, e)
}
